"""WAL replay on Spark ``local[2]`` into an embedded target: one task per WAL chain, its files
in order (a cell rewritten at one timestamp across a roll ends with the later value), the
target equal to the source, and the per-file outcomes recorded in the ledger by the driver.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import WalStatus
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.thrift.thrift2 import Thrift2Client
from hbase_migrate.config import load_config
from hbase_migrate.replay.discovery import SOURCE
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.run import run_replay
from hbase_migrate.replay.spark import JOB_GROUP, spark_executor
from hbase_migrate.validate.compare import compare_tables
from hbase_migrate.wal.model import Cell, CellType
from spark_apps.replay_wal import parse_args
from tests.support.minicluster import EmbeddedClusters
from tests.support.replay import (
    RS1,
    RS2,
    HBaseRoot,
    T,
    corrupt_entry,
    entry_offsets,
    puts,
    source_endpoints,
    write_config,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    pyspark_sql = pytest.importorskip("pyspark.sql")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (pyspark_sql.SparkSession.builder.master("local[2]")
               .appName("hbase-migrate-test-replay").config("spark.ui.enabled", "false")
               .getOrCreate())
    yield session
    session.stop()
    logging.getLogger("py4j").setLevel(logging.WARNING)  # its close-down notes at exit


def test_one_task_per_chain_and_outcomes_in_the_ledger(spark: Any, tmp_path: Path,
                                                       make_embedded: EmbeddedClusters) -> None:
    table = "orders"
    src, dst = make_embedded.pair()
    assert src.endpoints.thrift2 and dst.endpoints.thrift2
    source, target = Thrift2Client(src.endpoints.thrift2), Thrift2Client(dst.endpoints.thrift2)
    desc = TableDescriptor(table, (FamilyDescriptor(b"d", max_versions=3),))
    source.create_table(desc)
    target.create_table(desc)
    root = HBaseRoot(tmp_path / "hbase")
    calls = {"a": puts("a", 0, 5), "b": puts("b", 10, 4), "c": puts("c", 20, 6)}
    for tag in "ab":  # the same cell and timestamp, RS1 writing it again after a roll
        calls[tag].append([Cell(b"same", b"d", b"q", T, CellType.PUT, tag.encode())])
    files = [root.write(RS1, T, table, calls["a"]),
             root.write(RS1, T + 10, table, calls["b"], state="live", trailer=False),
             root.write(RS2, T + 20, table, calls["c"])]
    bad_offset = corrupt_entry(files[2], 4)
    for cells in [*calls["a"], *calls["b"], *calls["c"][:4]]:
        source.write_cells(table, cells)
    config = write_config(tmp_path, source=source_endpoints("localhost:9090",
                                                            root=root.root),
                          target=dst.endpoints, tables=[table])
    spec = load_config(config)
    job = ReplayJob.from_spec(spec, start=T - 60_000)

    summary = run_replay(job, executor=spark_executor(spark))

    tracker = spark.sparkContext.statusTracker()
    (job_id,) = tracker.getJobIdsForGroup(JOB_GROUP)
    stages = tracker.getJobInfo(job_id).stageIds
    assert [tracker.getStageInfo(s).numTasks for s in stages] == [2]  # RS1, RS2
    assert summary.exit_code == 1  # the corrupt file, the others replayed
    assert compare_tables(source, target, table).equal
    assert target.get(table, b"same")[0].value == b"b"
    source.close()
    target.close()
    with Ledger.open(spec.ledger_url) as ledger:
        migration = ledger.migration(spec.name)
        assert migration is not None
        rows = {Path(r.path).name: r for r in ledger.wal_files(migration.id, SOURCE)}
        (step,) = ledger.steps(migration.id, "replay")
    a, b, c = (rows[f.name] for f in files)
    end_a = sum(entry_offsets(files[0])[-1])
    assert (a.status, a.offset_reached, a.entries, a.cells_by_type) == (
        WalStatus.REPLAYED, end_a, 6, {"Put": 6})
    assert (b.status, b.offset_reached, b.entries) == (
        WalStatus.REPLAYING, files[1].stat().st_size, 5)
    assert (c.status, c.offset_reached, c.entries) == (WalStatus.FAILED, bad_offset, 4)
    assert f"byte offset {bad_offset}" in (c.error or "")
    assert step.metrics["files_read"] == 3 and step.metrics["cells"] == {"Put": 15}


def test_the_entry_point_parses_its_arguments() -> None:
    args = parse_args(["--config", "m.toml", "--table", "a", "--table", "b", "--start", "5"])
    assert (args.config, args.table, args.start, args.end, args.master) == (
        "m.toml", ["a", "b"], "5", None, None)


def test_auto_replays_here_whatever_the_size_when_large_master_is_local(
        spark: Any, tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    """``master="auto"`` (what an Airflow ``spark`` connection may name) estimates a run's
    cells from the WAL bytes it has left to read: under ``[spark] auto_cells`` the files are
    replayed in this process; from there on on ``large_master``, but never on a local one
    (this machine's cores: Spark would only add start-up); the step records which and why.
    With no master given, the migration's ``[spark] master`` decides, as for the copy."""
    from dataclasses import replace

    from hbase_migrate.lifecycle.replay import replay
    from hbase_migrate.replay.spark import WAL_BYTES_PER_CELL

    table = "auto_orders"
    dst = make_embedded("target", folder=tmp_path / "dst")
    assert dst.endpoints.thrift2
    with Thrift2Client(dst.endpoints.thrift2) as target:
        target.create_table(TableDescriptor(table, (FamilyDescriptor(b"d"),)))
    root = HBaseRoot(tmp_path / "hbase")
    first = root.write(RS1, T, table, puts("a", 0, 40))
    spec = load_config(write_config(tmp_path, source=source_endpoints(
        "localhost:9090", root=root.root), target=dst.endpoints, tables=[table]))
    estimate = first.stat().st_size // WAL_BYTES_PER_CELL
    assert 0 < estimate < spec.engine.auto_cells
    tracker = spark.sparkContext.statusTracker()
    jobs_before = len(tracker.getJobIdsForGroup(JOB_GROUP))

    small = replay(spec, start=T - 60_000, master="auto")
    assert small.exit_code == 0 and small.engine is not None
    assert (small.engine["engine"], small.engine["estimated_cells"]) == (
        "in-process", estimate)
    assert len(tracker.getJobIdsForGroup(JOB_GROUP)) == jobs_before

    second = root.write(RS2, T + 100, table, puts("b", 100, 40))
    large = replace(spec, engine=replace(spec.engine, spark_master="auto", auto_cells=1,
                                         large_master="local[2]"))
    summary = replay(large, start=T - 60_000)
    assert summary.exit_code == 0 and summary.engine is not None
    assert (summary.engine["engine"], summary.engine["estimated_cells"]) == (
        "in-process", second.stat().st_size // WAL_BYTES_PER_CELL)  # local: no gain
    assert "large_master = local[2] is this machine" in summary.engine["engine_reason"]
    assert len(tracker.getJobIdsForGroup(JOB_GROUP)) == jobs_before
    with Thrift2Client(dst.endpoints.thrift2) as target:
        rows = [cells[0].row for cells in target.scan(table)]
    assert rows == sorted(f"{tag}-{i:04d}".encode() for tag, base in (("a", 0), ("b", 100))
                          for i in range(base, base + 40))
    with Ledger.open(spec.ledger_url) as ledger:
        migration = ledger.migration(spec.name)
        assert migration is not None
        engines = [s.metrics["engine"]["engine"] for s in ledger.steps(migration.id, "replay")]
    assert engines == ["in-process", "in-process"]
