"""Replay from a busy source whose open WALs hold megabytes, read over WebHDFS, on both
stacks. HDFS's NameNode records an open file's length as what its writer last reported (an
HBase WAL's header, until it is closed) and refuses an OPEN at or past it; the DataNodes
serve every byte written. Catch-up and ``--follow`` must read such files, resume past the
NameNode's length, and converge, while the source keeps writing. The real HBase of the
session rolls its WALs once an hour (HBase's default period) and at 64 MB, so its open WAL
only grows during the test."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from hdfs import InsecureClient

from hbase_migrate.audit.ledger import Ledger, now_ms
from hbase_migrate.audit.records import WalStatus
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.storage.walstore import WebHdfsWalStore
from hbase_migrate.config import load_config
from hbase_migrate.replay.discovery import SOURCE
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.run import follow_replay, run_replay
from hbase_migrate.replay.summary import RunSummary
from hbase_migrate.snapshot.schema import copy_schema
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.validate.compare import compare_tables
from hbase_migrate.wal.model import Cell, CellType
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from tests.support.minicluster import EmbeddedClusters

pytestmark = pytest.mark.integration
VALUE = 150        # bytes per value
BATCH = 2_000      # cells per put call
BULK = 100_000     # cells written before the first catch-up (about 19 MB of WAL)
FOLLOW = 40_000    # cells written while --follow runs



class Writer:
    """Puts of ``VALUE``-byte values, ``BATCH`` cells a call, rows numbered from 0."""

    def __init__(self, thrift2: str, table: str) -> None:
        self.client = Thrift2Client(thrift2, timeout=120)
        self.table = table
        self.rows = 0

    def write(self, cells: int) -> None:
        while cells > 0:
            n = min(BATCH, cells)
            now = now_ms()
            self.client.put_cells(self.table, [
                Cell(b"r%09d" % (self.rows + i), b"f", b"q", now, CellType.PUT,
                     (b"%09d" % (self.rows + i)) * (VALUE // 9 + 1))
                for i in range(n)])
            self.rows += n
            cells -= n

    def keep_writing(self, cells: int, done: threading.Event) -> threading.Thread:
        """Write ``cells`` more in the background, a batch at a time with short pauses (a
        steady source, not a flood), then set ``done``."""
        def loop() -> None:
            try:
                for _ in range(0, cells, BATCH):
                    self.write(BATCH)
                    time.sleep(0.1)
            finally:
                done.set()
        thread = threading.Thread(target=loop, name="busy-source", daemon=True)
        thread.start()
        return thread


def namenode_lengths(desc: dict[str, Any], paths: list[str]) -> dict[str, int]:
    """The lengths HDFS's NameNode records for the WAL files at ``paths`` (URLs)."""
    client = InsecureClient(desc["webhdfs"], user="hbase")
    return {p: int(client.status(urlsplit(p).path)["length"]) for p in paths}


def test_catch_up_and_follow_read_busy_open_wals(source_cluster: dict[str, Any],
                                                 tmp_path: Path,
                                                 make_embedded: EmbeddedClusters) -> None:
    table = f"busy_{tmp_path.name[-8:].replace('-', '_')}"
    endpoints = ClusterEndpoints.from_json(source_cluster)
    assert endpoints.thrift2
    start = now_ms() - 60_000
    with Thrift2Client(endpoints.thrift2) as admin:
        admin.create_table(TableDescriptor(name=table, families=(FamilyDescriptor(b"f"),)))
    writer = Writer(endpoints.thrift2, table)
    writer.write(BULK)
    dst = make_embedded("target", folder=tmp_path / "dst")
    assert dst.endpoints.thrift2
    with Thrift2Client(endpoints.thrift2) as src_t2, \
            Thrift2Client(dst.endpoints.thrift2) as dst_t2:
        copy_schema(src_t2, dst_t2, table)
        (tmp_path / "m.toml").write_text(
            f'[migration]\nname = "busy"\nledger = "sqlite:///{tmp_path / "l.db"}"\n'
            f'[source]\ncluster_json = "{source_cluster["cluster_json"]}"\n'
            f'[target]\ncluster_json = "{dst.write_cluster_json()}"\n'
            f'[[tables]]\nsource = "{table}"\n', encoding="utf-8")
        spec = load_config(tmp_path / "m.toml")
        job = ReplayJob.from_spec(spec, start=start)

        first = run_replay(job)
        assert first.exit_code == 0, first.to_json()
        # the regime of the defect: open files read far past the NameNode's length
        with Ledger.open(spec.ledger_url) as ledger:
            migration = ledger.migration(spec.name)
            assert migration is not None
            live = {r.path: r.offset_reached for r in ledger.wal_files(migration.id, SOURCE)
                    if "/WALs/" in r.path and r.offset_reached}
        recorded = namenode_lengths(source_cluster, list(live))
        beyond = [p for p in live if live[p] > max(recorded[p], 1 << 20)]
        assert beyond, (live, recorded)

        written, stop_follow = threading.Event(), threading.Event()
        thread = writer.keep_writing(FOLLOW, written)
        runs: list[RunSummary] = []
        last_run: list[int] = []

        def on_run(summary: RunSummary) -> None:
            runs.append(summary)
            if last_run and len(runs) > last_run[0]:
                stop_follow.set()  # a whole run after the last write
            elif written.is_set():
                last_run.append(len(runs))

        try:
            code = follow_replay(job, 0.2, stop_follow, on_run=on_run).exit_code
        finally:
            thread.join(300)
        assert code == 0, [r.to_json() for r in runs if r.exit_code]
        resumed = [o for r in runs[1:] for o in r.outcomes
                   if o.start_offset > recorded.get(o.path, 0) and o.run.entries]
        assert resumed, "no run resumed a live file past the NameNode's length"

        last = run_replay(job)
        assert last.exit_code == 0, last.to_json()
        comparison = compare_tables(src_t2, dst_t2, table)
        assert comparison.equal, comparison
        assert writer.rows == BULK + FOLLOW and len(runs) >= 3


def _job(tmp_path: Path, source: MiniHBase, target: MiniHBase, table: str) -> ReplayJob:
    (tmp_path / "m.toml").write_text(
        f'[migration]\nname = "busy"\nledger = "sqlite:///{tmp_path / "l.db"}"\n'
        f'[source]\ncluster_json = "{source.write_cluster_json()}"\n'
        f'[target]\ncluster_json = "{target.write_cluster_json()}"\n'
        f'[[tables]]\nsource = "{table}"\n', encoding="utf-8")
    return ReplayJob.from_spec(load_config(tmp_path / "m.toml"), start=now_ms() - 60_000)


@pytest.fixture
def clusters(make_embedded: EmbeddedClusters) -> tuple[MiniHBase, MiniHBase, Writer]:
    """An embedded source (two region servers, the table split so both write) and target,
    the table on both, and a writer of the source."""
    src, dst = make_embedded.pair(wal=WalSettings(region_servers=2, split_delay=3600))
    assert src.cluster is not None and src.endpoints.thrift2 and dst.endpoints.thrift2
    src.cluster.create_table("t", [FamilyDescriptor(b"f")], [b"r000010000"])
    with Thrift2Client(src.endpoints.thrift2) as a, Thrift2Client(dst.endpoints.thrift2) as b:
        copy_schema(a, b, "t")
    return src, dst, Writer(src.endpoints.thrift2, "t")


def _equal(src: MiniHBase, dst: MiniHBase) -> bool:
    assert src.endpoints.thrift2 and dst.endpoints.thrift2
    with Thrift2Client(src.endpoints.thrift2) as a, Thrift2Client(dst.endpoints.thrift2) as b:
        return compare_tables(a, b, "t").equal


def test_a_dead_servers_open_file_is_read_past_the_namenode_length(
        clusters: tuple[MiniHBase, MiniHBase, Writer], tmp_path: Path) -> None:
    """A killed server's last WAL keeps its lease in ``-splitting`` (the NameNode still knows
    only its header) until the split recovers it: replay resumes there all the same."""
    src, dst, writer = clusters
    assert src.region_servers is not None
    job = _job(tmp_path, src, dst, "t")
    writer.write(20_000)
    assert run_replay(job).exit_code == 0
    writer.write(10_000)
    dead = src.region_servers.kill(0)["splitting"]
    first = run_replay(job)
    assert first.exit_code == 0, first.to_json()
    resumed = [o for o in first.outcomes if f"/{dead}/" in o.path and o.start_offset]
    assert resumed and resumed[0].run.entries, first.to_json()
    assert resumed[0].start_offset > namenode_lengths(src.describe(), [resumed[0].path])[
        resumed[0].path]
    assert _equal(src, dst)


def test_a_file_that_cannot_be_read_now_fails_alone_and_is_retried(
        clusters: tuple[MiniHBase, MiniHBase, Writer], tmp_path: Path) -> None:
    src, dst, writer = clusters
    assert src.webhdfs is not None
    job = _job(tmp_path, src, dst, "t")
    writer.write(30_000)
    listed = [f for f in WebHdfsWalStore(src.webhdfs.url).list_wal_files()
              if f.state == "live"]
    assert len(listed) == 2
    bad, good = listed
    src.webhdfs.missing_blocks.add(urlsplit(bad.path).path)
    failed = run_replay(job)
    assert failed.exit_code != 0
    errors = {o.path: o.error for o in failed.outcomes if o.error}
    assert list(errors) == [bad.path]
    assert errors[bad.path].startswith(f"{bad.path}: replay stopped at byte offset 0: ")
    assert "Could not obtain block" in errors[bad.path] and "\n" not in errors[bad.path]
    with Ledger.open(job.spec.ledger_url) as ledger:
        migration = ledger.migration(job.spec.name)
        assert migration is not None
        rows = {r.path: r for r in ledger.wal_files(migration.id, SOURCE)}
    assert rows[bad.path].status is WalStatus.FAILED
    assert "Could not obtain block" in (rows[bad.path].error or "")
    assert rows[good.path].offset_reached > namenode_lengths(src.describe(), [good.path])[
        good.path]  # the other file went on
    src.webhdfs.missing_blocks.clear()  # the DataNode is back
    again = run_replay(job)
    assert again.exit_code == 0, again.to_json()
    assert _equal(src, dst)
