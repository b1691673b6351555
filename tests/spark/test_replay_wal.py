"""WAL replay on Spark ``local[2]`` into an embedded target: a job per WAL chain, its files
in order (a cell rewritten at one timestamp across a roll ends with the later value), the
target equal to the source, and the per-file outcomes recorded in the ledger by the driver.
"""

from __future__ import annotations

import _thread
import logging
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate import runstate
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import WalStatus
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.config import load_config
from hbase_migrate.errors import StepInterrupted
from hbase_migrate.replay.discovery import SOURCE
from hbase_migrate.replay.job import FileOutcome, FileTask, ReplayJob
from hbase_migrate.replay.run import run_replay
from hbase_migrate.replay.spark import JOB_GROUP, spark_executor
from hbase_migrate.replay.summary import Observer
from hbase_migrate.spark.jobs import group_job_ids
from hbase_migrate.thrift.thrift2 import Thrift2Client
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
    jobs = group_job_ids(spark.sparkContext, JOB_GROUP)  # a job per part: RS1, RS2
    stages = [s for j in jobs for s in tracker.getJobInfo(j).stageIds]
    assert [tracker.getStageInfo(s).numTasks for s in stages] == [1, 1]
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
    jobs_before = len(group_job_ids(spark.sparkContext, JOB_GROUP))

    small = replay(spec, start=T - 60_000, master="auto")
    assert small.exit_code == 0 and small.engine is not None
    assert (small.engine["engine"], small.engine["estimated_cells"]) == (
        "in-process", estimate)
    assert len(group_job_ids(spark.sparkContext, JOB_GROUP)) == jobs_before

    second = root.write(RS2, T + 100, table, puts("b", 100, 40))
    large = replace(spec, engine=replace(spec.engine, spark_master="auto", auto_cells=1,
                                         large_master="local[2]"))
    summary = replay(large, start=T - 60_000)
    assert summary.exit_code == 0 and summary.engine is not None
    assert (summary.engine["engine"], summary.engine["estimated_cells"]) == (
        "in-process", second.stat().st_size // WAL_BYTES_PER_CELL)  # local: no gain
    assert "large_master = local[2] is this machine" in summary.engine["engine_reason"]
    assert len(group_job_ids(spark.sparkContext, JOB_GROUP)) == jobs_before
    with Thrift2Client(dst.endpoints.thrift2) as target:
        rows = [cells[0].row for cells in target.scan(table)]
    assert rows == sorted(f"{tag}-{i:04d}".encode() for tag, base in (("a", 0), ("b", 100))
                          for i in range(base, base + 40))
    with Ledger.open(spec.ledger_url) as ledger:
        migration = ledger.migration(spec.name)
        assert migration is not None
        engines = [s.metrics["engine"]["engine"] for s in ledger.steps(migration.id, "replay")]
    assert engines == ["in-process", "in-process"]


WAIT_S = 60.0  # a bound on each wait for the replay (a busy machine), never a pause
BLOCKED_CELLS = 7  # the cells of RS1's first file: its one putMultiple is held


class Gate:
    """Stands in for the target gateway's ``call_sizes`` log, in the gateway's handler
    thread before the write is stored: keeps every call, and holds the putMultiple of
    :data:`BLOCKED_CELLS` cells (``reached``) until ``released``."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []
        self.reached, self.released = threading.Event(), threading.Event()

    def append(self, call: tuple[str, int, int]) -> None:
        self.calls.append(call)
        if call[0] == "putMultiple" and call[2] == BLOCKED_CELLS:
            self.reached.set()
            assert self.released.wait(4 * WAIT_S), "the held write was never released"


class Finished(Observer):
    """Sets ``recorded`` once the driver recorded the file named ``name``."""

    def __init__(self, name: str) -> None:
        self.name, self.recorded = name, threading.Event()

    def file_finished(self, task: FileTask, outcome: FileOutcome) -> None:
        if Path(task.path).name == self.name:
            self.recorded.set()


def wal_rows(spec: Any) -> tuple[dict[str, Any], list[Any]]:
    """The migration's WAL-file rows by file name, and its replay steps."""
    with Ledger.open(spec.ledger_url) as ledger:
        migration = ledger.migration(spec.name)
        assert migration is not None
        rows = {Path(r.path).name: r for r in ledger.wal_files(migration.id, SOURCE)}
        return rows, ledger.steps(migration.id, "replay")


def stopped_while_held(spark: Any, spec: Any, gate: Gate, finished: Finished, how: str
                       ) -> None:
    """Replay ``spec`` on ``spark``, stopped (``how``) once ``finished`` saw its file
    recorded while ``gate`` holds a write; the step must say it stopped."""
    from hbase_migrate.lifecycle.replay import replay

    returned = threading.Event()

    def stop_when_held() -> None:
        if gate.reached.wait(WAIT_S) and finished.recorded.wait(WAIT_S):
            if how == "ctrl-c":
                _thread.interrupt_main()
            else:
                runstate.request_stop()
        if not returned.wait(WAIT_S):
            gate.released.set()  # a replay that never stopped: let it end, the test fails

    stopper = threading.Thread(target=stop_when_held, name="stopper")
    stopper.start()
    try:
        with pytest.raises(StepInterrupted, match="stopped"):
            try:
                replay(spec, start=T - 60_000, executor=spark_executor(spark),
                       observer=finished)
            finally:
                returned.set()
    finally:
        stopper.join()


def target_rows(target: Any, table: str) -> list[bytes]:
    with Thrift2Client(target.endpoints.thrift2) as client:
        return [cells[0].row for cells in client.scan(table)]


@pytest.mark.parametrize("how", ["ctrl-c", "runstate"])
def test_a_stopped_replay_cancels_its_spark_jobs_and_a_rerun_converges(
        how: str, spark: Any, tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    """RS2's part finishes and is recorded while RS1's first write is held in the target;
    then the user stops the step (Ctrl-C in the main thread, or a stop asked through
    runstate): the replay cancels its jobs and returns once none of their tasks runs,
    saying it stopped. RS2's file is recorded replayed, RS1's files not; RS1's task never
    writes again (its second file never reaches the target, even once the held write
    goes on). The rerun replays what is left and the target holds every edit."""
    from hbase_migrate.lifecycle.replay import replay

    table, gate = "stop_orders", Gate()
    dst = make_embedded("target", folder=tmp_path / "dst")
    assert dst.endpoints.thrift2 and dst.thrift2_handler is not None
    dst.thrift2_handler.call_sizes = gate  # type: ignore[assignment]
    with Thrift2Client(dst.endpoints.thrift2) as target:
        target.create_table(TableDescriptor(table, (FamilyDescriptor(b"d"),)))
    root = HBaseRoot(tmp_path / "hbase")
    held = [root.write(RS1, T, table, puts("a", 0, BLOCKED_CELLS)),
            root.write(RS1, T + 10, table, puts("c", 20, 3))]
    other = root.write(RS2, T + 20, table, puts("b", 10, 5))
    spec = load_config(write_config(tmp_path, source=source_endpoints(
        "localhost:9090", root=root.root), target=dst.endpoints, tables=[table]))
    before = set(group_job_ids(spark.sparkContext, JOB_GROUP))
    try:
        stopped_while_held(spark, spec, gate, Finished(other.name), how)
        tracker = spark.sparkContext.statusTracker()
        jobs = sorted(set(group_job_ids(spark.sparkContext, JOB_GROUP)) - before)
        assert sorted(tracker.getJobInfo(j).status for j in jobs) == ["FAILED", "SUCCEEDED"]
        assert [tracker.getStageInfo(s).numActiveTasks
                for j in jobs for s in tracker.getJobInfo(j).stageIds] == [0, 0]
        writes = [c for c in gate.calls if c[0] == "putMultiple"]
        assert [c[2] for c in writes] in ([5, BLOCKED_CELLS], [BLOCKED_CELLS, 5])
        rows, (step,) = wal_rows(spec)
        assert rows[other.name].status is WalStatus.REPLAYED
        assert [(rows[f.name].status is WalStatus.REPLAYED, rows[f.name].offset_reached)
                for f in held if f.name in rows] == [(False, 0)] * len(
                    [f for f in held if f.name in rows])
        assert step.status.value == "failed"
        assert ("stopped on request" if how == "runstate" else "KeyboardInterrupt") in (
            step.error or "")
    finally:
        gate.released.set()  # the held write goes on: RS1's task is gone, nothing follows
        runstate.reset()
    assert not [r for r in target_rows(dst, table) if r.startswith(b"c-")]
    assert [c for c in gate.calls if c[0] == "putMultiple"] == writes  # none since the stop

    summary = replay(spec, start=T - 60_000, executor=spark_executor(spark))
    assert summary.exit_code == 0
    assert target_rows(dst, table) == sorted(
        f"{tag}-{i:04d}".encode() for tag, base, n in (
            ("a", 0, BLOCKED_CELLS), ("b", 10, 5), ("c", 20, 3)) for i in range(base, base + n))
    rows, _ = wal_rows(spec)
    assert {name: r.status for name, r in rows.items()} == {
        f.name: WalStatus.REPLAYED for f in (*held, other)}
