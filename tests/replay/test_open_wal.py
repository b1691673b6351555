"""Replay from a busy source whose open WALs hold megabytes, read over WebHDFS, on both
stacks. HDFS's NameNode records an open file's length as what its writer last reported (an
HBase WAL's header, until it is closed) and refuses an OPEN at or past it; the DataNodes
serve every byte written. Catch-up and ``--follow`` must read such files, resume past the
NameNode's length, and converge, while the source keeps writing. The real HBase of the
session rolls its WALs once an hour (HBase's default period) and at 64 MB, so its open WAL
only grows during the test."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from hdfs import InsecureClient

from hbase_migrate.audit.ledger import Ledger, now_ms
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.thrift2 import Thrift2Client
from hbase_migrate.config import load_config
from hbase_migrate.replay.discovery import SOURCE
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.run import RunSummary, follow_replay, run_replay
from hbase_migrate.snapshot.schema import copy_schema
from hbase_migrate.validate.compare import compare_tables
from hbase_migrate.wal.model import Cell, CellType
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase

pytestmark = pytest.mark.integration
STACKS = ["minihbase", pytest.param("real", marks=pytest.mark.realstack)]
VALUE = 150        # bytes per value
BATCH = 2_000      # cells per put call
BULK = 60_000      # cells written before the first catch-up (about 12 MB of WAL)


@pytest.fixture(params=STACKS)
def source(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, Any]]:
    if request.param == "real":
        real = request.getfixturevalue("real_hbase")
        yield {**real.described, "cluster_json": real.cluster_json}
        return
    with MiniHBase(tmp_path / "src", "source",
                   wal=WalSettings(region_servers=2, roll_period=3600)) as mini:
        path = mini.write_cluster_json()
        yield {**json.loads(path.read_text()), "cluster_json": path}


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

    def keep_writing(self, stop: threading.Event) -> threading.Thread:
        def loop() -> None:
            while not stop.is_set():
                self.write(BATCH)
        thread = threading.Thread(target=loop, name="busy-source", daemon=True)
        thread.start()
        return thread


def namenode_lengths(desc: dict[str, Any], paths: list[str]) -> dict[str, int]:
    """The lengths HDFS's NameNode records for the WAL files at ``paths`` (URLs)."""
    client = InsecureClient(desc["webhdfs"], user="hbase")
    return {p: int(client.status(urlsplit(p).path)["length"]) for p in paths}


def test_catch_up_and_follow_read_busy_open_wals(source: dict[str, Any],
                                                 tmp_path: Path) -> None:
    table = f"busy_{tmp_path.name[-8:].replace('-', '_')}"
    endpoints = ClusterEndpoints.from_json(source)
    assert endpoints.thrift2
    start = now_ms() - 60_000
    with Thrift2Client(endpoints.thrift2) as admin:
        admin.create_table(TableDescriptor(name=table, families=(FamilyDescriptor(b"f"),)))
    writer = Writer(endpoints.thrift2, table)
    writer.write(BULK)
    with MiniHBase(tmp_path / "dst", "target") as dst:
        assert dst.endpoints.thrift2
        with Thrift2Client(endpoints.thrift2) as src_t2, \
                Thrift2Client(dst.endpoints.thrift2) as dst_t2:
            copy_schema(src_t2, dst_t2, table)
            (tmp_path / "m.toml").write_text(
                f'[migration]\nname = "busy"\nledger = "sqlite:///{tmp_path / "l.db"}"\n'
                f'[source]\ncluster_json = "{source["cluster_json"]}"\n'
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
            recorded = namenode_lengths(source, list(live))
            beyond = [p for p in live if live[p] > max(recorded[p], 1 << 20)]
            assert beyond, (live, recorded)

            stop_writes, stop_follow = threading.Event(), threading.Event()
            thread = writer.keep_writing(stop_writes)
            runs: list[RunSummary] = []
            began = time.monotonic()

            def on_run(summary: RunSummary) -> None:
                runs.append(summary)
                if len(runs) >= 4 and time.monotonic() - began > 5:
                    stop_follow.set()

            try:
                code = follow_replay(job, 0.5, stop_follow, on_run=on_run)
            finally:
                stop_writes.set()
                thread.join(120)
            assert code == 0, [r.to_json() for r in runs if r.exit_code]
            resumed = [o for r in runs[1:] for o in r.outcomes
                       if o.start_offset > recorded.get(o.path, 0) and o.run.entries]
            assert resumed, "no run resumed a live file past the NameNode's length"

            last = run_replay(job)
            assert last.exit_code == 0, last.to_json()
            comparison = compare_tables(src_t2, dst_t2, table)
            assert comparison.equal, comparison
            assert writer.rows > BULK
