"""The report's header names each cluster as the migration reaches it: over HBase's own RPC
by its ZooKeeper and parent znode (not `thrift:` and gateways it never used), through its
Thrift gateways by those."""

from __future__ import annotations

import html
from pathlib import Path

import pytest

from hbase_migrate.config import load_config
from hbase_migrate.lifecycle import prepare, report
from minihbase.server import MiniHBase
from minihbase.zookeeper import ZooKeeperServer
from tests.support.minicluster import clusters_over_rpc, run_workload, write_migration

pytestmark = pytest.mark.integration


def _header(path: Path) -> str:
    page = path.read_text("utf-8")
    start = page.index('<div class="sub">')
    return html.unescape(page[start:page.index("</div>", start)])


def test_native_clusters_are_named_by_their_zookeeper(
        tmp_path: Path, zookeeper: ZooKeeperServer) -> None:
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        run_workload(src, "t", seed=1, ops=20)
        spec = load_config(write_migration(tmp_path, src, dst, "t"))
        prepare(spec)
        report(spec, out=tmp_path / "r.html")
    header = _header(tmp_path / "r.html")
    assert f"native: ZooKeeper {zookeeper.address}{src.znode_parent}" in header
    assert f"native: ZooKeeper {zookeeper.address}{dst.znode_parent}" in header
    assert "thrift" not in header


def test_gateway_clusters_are_named_by_their_gateways(tmp_path: Path) -> None:
    with MiniHBase(tmp_path / "src", "source") as src, \
            MiniHBase(tmp_path / "dst", "target") as dst:
        run_workload(src, "t", seed=1, ops=20)
        spec = load_config(write_migration(tmp_path, src, dst, "t"))
        prepare(spec)
        report(spec, out=tmp_path / "r.html")
        gateways = [f"thrift: {c.endpoints.thrift},{c.endpoints.thrift2}" for c in (src, dst)]
    header = _header(tmp_path / "r.html")
    assert all(g in header for g in gateways), header
