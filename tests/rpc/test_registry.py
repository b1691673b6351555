"""Clusters given by HBase's connection URIs: ``hbase+rpc://`` reaches meta and the active
master through the RPC connection registry (``ClientMetaService``), with no ZooKeeper
session at all; ``hbase+zk://`` is ZooKeeper's quorum and parent. The embedded cluster serves
the registry on its master and region servers, as HBase 2.6 does; its answers are checked
against what the same cluster registered in ZooKeeper, and a copy, replay and validation
between two embedded clusters given by ``hbase+rpc://`` alone opens no connection to the
ZooKeeper both are registered in."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hbase_migrate.cli import cli
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.missing import where
from hbase_migrate.cluster.uri import parse_cluster_uri
from hbase_migrate.cluster.zk.zookeeper import HBaseZooKeeper
from hbase_migrate.config import IN_PROCESS, load_config
from hbase_migrate.config_toml import to_toml
from hbase_migrate.errors import ConfigError
from hbase_migrate.lifecycle import prepare, replay, snapshot, validate
from hbase_migrate.rpc.cluster import NativeCluster
from hbase_migrate.rpc.registry import RegistryError, RpcRegistry
from hbase_migrate.wal.model import Cell, CellType
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from minihbase.zookeeper import ZooKeeperServer
from tests.socket_watch import connections, ports
from tests.support.minicluster import EmbeddedClusters

TABLE = "orders"


def rpc_uri(mini: MiniHBase) -> str:
    """``hbase+rpc://`` naming the cluster's region servers (not its master)."""
    described = mini.describe()
    return "hbase+rpc://" + ",".join(described["region_server_rpc"].values())


@pytest.fixture
def registered(make_embedded: EmbeddedClusters) -> MiniHBase:
    """A cluster registered in the session's ZooKeeper: what its registry answers is
    checked against what it registered there."""
    return make_embedded("registered", over="native",
                         wal=WalSettings(region_servers=2, roll_period=3600))


def test_uris_parse_as_hbase_reads_them_and_bad_ones_are_one_clear_line() -> None:
    rpc = parse_cluster_uri("hbase+rpc://rs-1:16020,hmaster:16000")
    assert rpc.rpc and rpc.servers == (("rs-1", 16020), ("hmaster", 16000))
    zk = parse_cluster_uri("hbase+zk://zk-1:2181,zk-2:2181/hbase-prod")
    assert (zk.quorum, zk.znode_parent) == ("zk-1:2181,zk-2:2181", "/hbase-prod")
    for bad, said in (("hbase+rpc://", "no bootstrap servers"),
                      ("hbase+rpc://rs-1", "not host:port"),
                      ("hbase+zk://zk-1:2181", "no znode parent"),
                      ("hbase://zk-1:2181/hbase", "expected hbase+rpc://"),
                      ("hbase+rpc://rs-1:16020/x", "no path")):
        with pytest.raises(ConfigError) as caught:
            parse_cluster_uri(bad)
        assert said in str(caught.value) and bad in str(caught.value)
        assert len(str(caught.value).splitlines()) == 1


def test_endpoints_from_uris() -> None:
    rpc = ClusterEndpoints("src", uri="hbase+rpc://rs-1:16020")
    assert (rpc.client, rpc.zookeeper, rpc.bootstrap, rpc.registry) == (
        "native", None, (("rs-1", 16020),), "rpc")
    assert where("source", rpc) == "the source cluster 'src' (uri hbase+rpc://rs-1:16020)"
    zk = ClusterEndpoints("src", uri="hbase+zk://zk-1:2181/hbase-a")
    assert (zk.client, zk.zookeeper, zk.znode_parent, zk.registry) == (
        "native", "zk-1:2181", "/hbase-a", "zookeeper")
    with pytest.raises(ConfigError, match=r"cluster 'src': uri .* and zookeeper .* disagree"):
        ClusterEndpoints("src", uri="hbase+zk://zk-1:2181/hbase-a", zookeeper="zk-2:2181")
    with pytest.raises(ConfigError, match=r"cluster 'src': uri 'hbase\+rpc://': no bootstrap"):
        ClusterEndpoints("src", uri="hbase+rpc://")


def test_the_registry_answers_what_zookeeper_says(registered: MiniHBase) -> None:
    endpoints = registered.endpoints
    with HBaseZooKeeper(endpoints.zookeeper or "", endpoints.znode_parent) as zk:
        expected = (zk.cluster_id(), zk.master(), zk.meta_server())
        live = set(zk.live_servers())
    servers = parse_cluster_uri(rpc_uri(registered)).servers
    registry = RpcRegistry(servers)
    try:
        assert (registry.cluster_id(), registry.active_master(),
                registry.meta_server()) == expected
        assert set(registry.refresh()) == live
        # a region server killed: the one holding meta, so meta moves; both say so
        meta = registry.meta_server()
        registry.close()
        registered.region_servers.kill(str(meta))  # type: ignore[union-attr]
        with HBaseZooKeeper(endpoints.zookeeper or "", endpoints.znode_parent) as zk:
            moved = zk.meta_server()
        assert moved is not None and moved != meta
        assert registry.meta_server() == moved  # asked of the live server
    finally:
        registry.close()


def test_no_server_answering_is_one_error_naming_each(closed_port: int) -> None:
    port = closed_port
    registry = RpcRegistry([("127.0.0.1", port)], call_timeout=2.0)
    with pytest.raises(RegistryError) as caught:
        registry.meta_server()
    message = str(caught.value)
    assert f"127.0.0.1:{port}" in message and "where hbase:meta is" in message
    assert len(message.splitlines()) == 1


def write_migration(folder: Path, source: MiniHBase, target: MiniHBase) -> Path:
    path = folder / "migration.toml"
    sides = []
    for role, mini in (("source", source), ("target", target)):
        sides.append(f'[{role}]\nname = "{role}"\nuri = "{rpc_uri(mini)}"\n'
                     f'hbase_root = "{mini.hbase_root_dir}"\n')
    path.write_text(
        f'[migration]\nname = "by-uri"\nledger = "sqlite:///{folder / "ledger.db"}"\n'
        + "".join(sides)
        + f'[[tables]]\nsource = "{TABLE}"\n'
        f'[replay]\nroll_period = "1h"\nmargin = "1m"\n'
        f'[spark]\nmaster = "{IN_PROCESS}"\n', encoding="utf-8")
    return path


def cells(rows: range, ts: int, value: bytes) -> list[Cell]:
    return [Cell(f"row-{i:04d}".encode(), b"d", b"q", ts, CellType.PUT, value + b"%d" % i)
            for i in rows]


def test_a_migration_between_clusters_given_by_hbase_rpc_opens_no_zookeeper_session(
        tmp_path: Path, zookeeper: ZooKeeperServer, make_embedded: EmbeddedClusters) -> None:
    src, dst = make_embedded.pair("native", wal=WalSettings(region_servers=2))
    spec = load_config(write_migration(tmp_path, src, dst))
    assert spec.source.endpoints().zookeeper is None
    now = int(time.time() * 1000)
    with connections() as seen:
        with NativeCluster.of(spec.source.endpoints(), spec.gateway) as source:
            source.create_table(TableDescriptor(TABLE, (FamilyDescriptor(b"d", 3),)),
                                [b"row-0050"])
            source.write_cells(TABLE, cells(range(100), now - 60_000, b"old"))
        assert prepare(spec).passed
        copied = snapshot(spec).to_json()
        with NativeCluster.of(spec.source.endpoints(), spec.gateway) as source:
            source.write_cells(TABLE, cells(range(80, 120), now, b"new"))
        replayed = replay(spec).to_json()
        verdict = validate(spec, recompare_wait=0).to_json()["verdict"]
        runner = CliRunner()
        shown = runner.invoke(cli, ["cluster", "info", "--config", str(spec.path),
                                    "--json"])
        text = runner.invoke(cli, ["cluster", "info", "--config", str(spec.path)],
                             env={"COLUMNS": "300"}).output
    assert copied["cells"] == 100 and replayed["exit_code"] == 0, replayed
    assert verdict == "match"
    assert zookeeper.port not in ports(seen), sorted(set(seen))
    rpc_ports = {p for _, p in parse_cluster_uri(rpc_uri(src)).servers}
    assert rpc_ports <= ports(seen)  # the watch saw the registry's connections
    assert shown.exit_code == 0, shown.output
    info: dict[str, Any] = json.loads(shown.output)
    registry = info["registry"]
    assert registry["kind"] == "rpc" and registry["answered_by"] in rpc_uri(src)
    assert registry["master"] == str(src.master_name)
    assert info["zookeeper"] is None
    assert f"registry: HBase's RPC registry (ClientMetaService), answered by " \
        f"{registry['answered_by']}" in text
    assert info["replication"] == {"major": 2, "queues_location": "zookeeper",
                                   "queues": None, "queues_error": None}
    assert "no ZooKeeper: HBase 2.x keeps replication peers and queues in ZooKeeper " \
        "(HBase 2.x here; live servers: the master's status)" in text
    with NativeCluster.of(spec.target.endpoints(), spec.gateway) as target:
        found = {row[0].row: max(row, key=lambda c: c.timestamp).value
                 for row in target.scan(TABLE)}
    expected = {c.row: c.value for c in cells(range(100), 0, b"old")}
    expected.update({c.row: c.value for c in cells(range(80, 120), 0, b"new")})
    assert found == expected


def test_cluster_info_says_where_hbase_3_keeps_replication_and_reads_its_queues(
        registered: MiniHBase) -> None:
    """A cluster given by ``hbase+rpc://`` alone whose master says HBase 3: the queues are
    read from ``hbase:replication`` over the RPC (HBase 3's ``TableReplicationQueueStorage``
    rows, written here), the peers said to be in the peer storage; none of it is said to be
    in ZooKeeper "on HBase 2.x"."""
    import io

    from rich.console import Console

    from hbase_migrate.commands.cluster import render, replication_without_zookeeper
    from hbase_migrate.hbase.admin import cluster_status
    from hbase_migrate.hbase.connect import connect
    from hbase_migrate.replay.table_queues import QUEUE_TABLE

    endpoints = ClusterEndpoints("three", uri=rpc_uri(registered))
    status = cluster_status(endpoints, 10.0)
    assert "error" not in status, status
    status["version"] = "3.0.0-alpha-4"  # what the master of that release reports
    # no peer was ever added: HBase 3's master has not created the table yet, no queue
    assert replication_without_zookeeper(endpoints, status) == {
        "major": 3, "queues_location": "table hbase:replication", "queues_error": None,
        "queues": []}
    server = "rs-1.example.com,16020,1700000000000"
    group = server.replace(",", "%2C")
    with connect(endpoints) as client:
        client.create_table(TableDescriptor(QUEUE_TABLE, (
            FamilyDescriptor(b"hfileref"), FamilyDescriptor(b"queue"), FamilyDescriptor(b"sid"))))
        client.write_cells(QUEUE_TABLE, [Cell(f"7-{server}".encode(), b"queue", group.encode(),
                                              1, CellType.PUT, f"{group}.1700:77".encode())])
    found = replication_without_zookeeper(endpoints, status)
    assert found == {"major": 3, "queues_location": "table hbase:replication",
                     "queues_error": None,
                     "queues": [{"server": server, "queue_id": f"7-{server}", "peer_id": "7",
                                 "recovered": False, "dead_servers": [],
                                 "wals": {f"{group}.1700": 77}}]}
    out = io.StringIO()
    render({"name": "three", "side": "target", "client": "native", "zookeeper": None,
            "registry": {"kind": "rpc", "answered_by": "x", "cluster_id": "c", "master": "m",
                         "meta_server": "s"}, "replication": found, "wal_store": None},
           Console(file=out, width=300))
    text = out.getvalue()
    assert "2.x" not in text, text
    assert "on HBase 3.x replication queues are kept in the table hbase:replication" in text
    assert "replication peers in the peer storage: ZooKeeper unless " \
        "hbase.replication.peer.storage.impl = filesystem" in text
    assert f"{group}.1700" in text and "77" in text


def test_spark_executors_are_checked_to_reach_the_registry_servers() -> None:
    from hbase_migrate.spark.preflight import addresses

    by_uri = ClusterEndpoints("src", uri="hbase+rpc://rs-1:16020,rs-2:16020",
                              webhdfs="http://nn:9870")
    assert addresses("source", by_uri) == [
        ("source cluster 'src' RPC registry server", "rs-1", 16020),
        ("source cluster 'src' RPC registry server", "rs-2", 16020),
        ("source cluster 'src' WebHDFS", "nn", 9870)]


def test_a_migration_file_names_clusters_by_uri_and_reads_back_its_own_output(
        tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    path.write_text('[migration]\nname = "u"\n'
                    '[source]\nuri = "hbase+rpc://rs-1:16020,rs-2:16020"\n'
                    'webhdfs = "http://nn:9870"\n'
                    '[target]\nuri = "hbase+zk://zk-1:2181/hbase-t"\n'
                    '[[tables]]\nsource = "t"\n', encoding="utf-8")
    spec = load_config(path)
    source, target = spec.source.endpoints(), spec.target.endpoints()
    assert source.bootstrap == (("rs-1", 16020), ("rs-2", 16020)) and source.native
    assert (target.zookeeper, target.znode_parent) == ("zk-1:2181", "/hbase-t")
    assert spec.source.identity == "hbase+rpc://rs-1:16020,rs-2:16020"
    again = tmp_path / "again.toml"
    again.write_text(to_toml(spec.to_dict()), encoding="utf-8")
    assert load_config(again).source.endpoints() == source
    assert load_config(again).target.endpoints() == target
    bad = path.read_text().replace("rs-2:16020", "rs-2")
    path.write_text(bad, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[source\]: cluster 'source': uri .*'rs-2' is not "
                                          r"host:port"):
        load_config(path)
