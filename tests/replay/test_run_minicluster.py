"""Catch-up from an embedded source cluster whose region servers write real WAL files,
found through its ``cluster.json`` (WebHDFS), into an embedded target, over each transport
(the target written through its Thrift2 gateway or over HBase's own RPC); the target is
judged by reading both clusters' stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import now_ms
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.config import load_config
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.run import run_replay
from hbase_migrate.wal.model import Cell, CellType
from minihbase.server import MiniHBase
from tests.support.minicluster import compare, t2

pytestmark = pytest.mark.integration


def test_catch_up_from_a_live_minicluster(
        tmp_path: Path, embedded_pair: tuple[MiniHBase, MiniHBase]) -> None:
    start = now_ms() - 60_000
    src, dst = embedded_pair
    desc = TableDescriptor("events", (FamilyDescriptor(b"d", max_versions=3),))
    with t2(src) as source, t2(dst) as target:  # the gateways: set-up, not under test
        source.create_table(desc)
        target.create_table(desc)
        now = now_ms()
        for i in range(20):
            source.write_cells("events", [Cell(b"r%02d" % i, b"d", b"q", now + i,
                                               CellType.PUT, b"v%d" % i)])
        source.write_cells("events", [Cell(b"r03", b"d", b"q", now + 3,
                                           CellType.DELETE_COLUMN)])
    (tmp_path / "m.toml").write_text(
        f'[migration]\nname = "live"\nledger = "sqlite:///{tmp_path / "l.db"}"\n'
        f'[source]\ncluster_json = "{src.write_cluster_json()}"\n'
        f'[target]\ncluster_json = "{dst.write_cluster_json()}"\n'
        '[[tables]]\nsource = "events"\n', encoding="utf-8")
    job = ReplayJob.from_spec(load_config(tmp_path / "m.toml"), start=start)
    summary = run_replay(job)
    assert summary.exit_code == 0, summary.to_json()
    assert summary.outcomes
    assert all(o.path.startswith("webhdfs://") for o in summary.outcomes)
    result = compare(src, dst, "events")
    assert result.equal and result.source_cells == 19, result.to_json()
