"""The report's header names each cluster as the migration reaches it: over HBase's own RPC
by its ZooKeeper and parent znode (not `thrift:` and gateways it never used), through its
Thrift gateways by those; over HBase's RPC registry by its ``hbase+rpc://`` URI, a Bigtable
target by its instance."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from hbase_migrate.config import load_config
from hbase_migrate.lifecycle import prepare, report
from minihbase.zookeeper import ZooKeeperServer
from tests.support.minicluster import (
    EmbeddedClusters,
    clusters_over_rpc,
    run_workload,
    write_migration,
)

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


def test_gateway_clusters_are_named_by_their_gateways(tmp_path: Path,
                                                      make_embedded: EmbeddedClusters) -> None:
    src, dst = make_embedded.pair()
    run_workload(src, "t", seed=1, ops=20)
    spec = load_config(write_migration(tmp_path, src, dst, "t"))
    prepare(spec)
    report(spec, out=tmp_path / "r.html")
    gateways = [f"thrift: {c.endpoints.thrift},{c.endpoints.thrift2}" for c in (src, dst)]
    header = _header(tmp_path / "r.html")
    assert all(g in header for g in gateways), header


def _spec_with(tmp_path: Path, source: str, target: str) -> Path:
    path = tmp_path / "migration.toml"
    path.write_text(f'[migration]\nname = "m"\nledger = "sqlite:///{tmp_path / "l.db"}"\n'
                    f'[source]\n{source}\n[target]\n{target}\n[[tables]]\nsource = "t"\n',
                    encoding="utf-8")
    return path


@pytest.mark.parametrize(("source", "target", "expected"), [
    ('name = "old"\nuri = "hbase+rpc://rs-1:16020,rs-2:16020"',
     'kind = "bigtable"\nproject = "my-project"\ninstance = "hbase-copy"',
     ("native: hbase+rpc://rs-1:16020,rs-2:16020",
      "bigtable: projects/my-project/instances/hbase-copy")),
    ('name = "old"\nzookeeper = "zk-1:2181"\nznode_parent = "/hbase-a"',
     'name = "new"\nuri = "hbase+rpc://hmaster:16000"',
     ("native: ZooKeeper zk-1:2181/hbase-a", "native: hbase+rpc://hmaster:16000")),
    ('name = "old"\nuri = "hbase+zk://zk-1:2181,zk-2:2181/hbase-b"',
     'kind = "bigtable"\nproject = "my-project"\ninstance = "hbase-copy"\n'
     'emulator_host = "127.0.0.1:8086"',
     ("native: ZooKeeper zk-1:2181,zk-2:2181/hbase-b",
      "bigtable: projects/my-project/instances/hbase-copy (emulator 127.0.0.1:8086)")),
])
def test_each_side_is_named_as_its_section_gives_it(
        tmp_path: Path, source: str, target: str, expected: tuple[str, str]) -> None:
    """A Bigtable target by its instance, a cluster over HBase's RPC registry by its URI, one
    over ZooKeeper by quorum and parent: never an empty name or ``None``."""
    from hbase_migrate.audit.ledger import Ledger

    spec = load_config(_spec_with(tmp_path, source, target))
    with Ledger.open(spec.ledger_url) as ledger:  # what every step records first
        ledger.ensure_spec(spec)
    report(spec, out=tmp_path / "r.html")
    header = re.sub(r"<[^>]+>", "", _header(tmp_path / "r.html"))  # the text a user reads
    assert header.startswith(f"{expected[0]} → {expected[1]} · tables t → t"), header
    assert "None" not in header and "thrift" not in header
