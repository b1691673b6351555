"""ZooKeeper registration (read back with kazoo and the project's reader) and the WebHDFS
view of a running cluster (read with the ``hdfs`` package)."""

from __future__ import annotations

import happybase
import pytest
from hdfs import HdfsError, InsecureClient
from kazoo.client import KazooClient

from hbase_migrate.cluster.descriptors import FamilyDescriptor
from hbase_migrate.cluster.zk.zkpayload import decode_region_server_info
from hbase_migrate.cluster.zk.zookeeper import HBaseZooKeeper
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import CellType
from minihbase.model import ClientCell, Mutation
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from minihbase.zookeeper import ZooKeeperServer
from tests.support.minicluster import EmbeddedClusters

from .walutil import entries_of

pytestmark = pytest.mark.integration


def put(mini: MiniHBase, row: bytes) -> None:
    assert mini.cluster is not None
    mini.cluster.mutate("t", [Mutation(row, (ClientCell(b"f", b"q", 1, CellType.PUT, b"v"),))])


@pytest.fixture
def zk_mini(make_embedded: EmbeddedClusters) -> MiniHBase:
    """A cluster registered in the session's ZooKeeper (a znode parent of its own)."""
    settings = WalSettings(region_servers=3, roll_period=3600, split_delay=3600)
    mini = make_embedded(over="native", wal=settings, replication_peer="1")
    assert mini.cluster is not None
    mini.cluster.create_table("t", [FamilyDescriptor(b"f", scope=1)], [b"g", b"p"])
    return mini


def test_zookeeper_layout_and_killed_server(zk_mini: MiniHBase, zookeeper) -> None:
    rs = zk_mini.region_servers
    assert rs is not None and rs.replication is not None
    for row in (b"a", b"h", b"q"):
        put(zk_mini, row)
    rs.replication.sync()
    with HBaseZooKeeper(zookeeper.address, zk_mini.znode_parent) as zk:
        names = sorted(str(s) for s in zk.live_servers())
        assert names == sorted(zk_mini.describe()["region_servers"]) and len(names) == 3
        master = zk.master()
        rpc_port = int(zk_mini.describe()["master_rpc"].rpartition(":")[2])
        assert master is not None and master.port == rpc_port  # the master's real RPC port
        assert str(zk.meta_server()) == str(rs.servers[0].name)
        cluster_id = zk.cluster_id()
        assert cluster_id and cluster_id in (zk_mini.hbase_root_dir / "hbase.id").read_text(
            "latin-1")
        peer, = zk.replication_peers()
        assert (peer.peer_id, peer.enabled) == ("1", True)
        queues = {str(q.server): q for q in zk.replication_queues()}
        for server in rs.live_servers():
            assert server.wal is not None
            q = queues[str(server.name)]
            assert dict(q.wals) == {server.wal.name: server.wal.size}
    raw = KazooClient(hosts=zookeeper.address)
    raw.start()
    try:
        data, stat = raw.get(f"{zk_mini.znode_parent}/rs/{names[1]}")
        assert stat.ephemeralOwner != 0 and data[0] == 0xFF
        assert decode_region_server_info(data).version_info is not None
        rs.replication.set_enabled(False)  # the dead server's WALs stay queued (pinned)
        dead = rs.kill(names[1])
        assert not raw.exists(f"{zk_mini.znode_parent}/rs/{names[1]}")
    finally:
        raw.stop()
        raw.close()
    with HBaseZooKeeper(zookeeper.address, zk_mini.znode_parent) as zk:
        assert names[1] not in [str(s) for s in zk.live_servers()]
        claimed = [q for q in zk.replication_queues() if q.recovered]
        assert [str(d) for q in claimed for d in q.dead_servers] == [names[1]]
        splitting = zk_mini.hbase_root_dir / "WALs" / dead["splitting"]
        assert set(claimed[0].wals) == {p.name for p in splitting.iterdir()}
        assert set(claimed[0].wals) <= rs.replication.pinned()


def test_webhdfs_lists_stats_reads_and_loses_archived(zk_mini: MiniHBase) -> None:
    rs = zk_mini.region_servers
    assert rs is not None and zk_mini.webhdfs is not None
    for row in (b"a", b"b", b"c"):
        put(zk_mini, row)
    client = InsecureClient(zk_mini.webhdfs.url, user="hbase")
    servers = client.list("/hbase/WALs")
    assert sorted(servers) == sorted(zk_mini.describe()["region_servers"])
    assert zk_mini.cluster is not None
    first = zk_mini.cluster.regions("t")[0]
    server = rs.server(f"{first.server_host},{first.server_port},{first.server_start_code}")
    assert server.wal is not None
    path = f"/hbase/WALs/{server.name}/{server.wal.name}"
    assert client.list(f"/hbase/WALs/{server.name}") == [server.wal.name]
    local = server.wal.path.read_bytes()
    # an open file, as HDFS's NameNode knows it: the length its writer reported when it
    # created it (magic, header length, header), until it is closed
    assert local[4] < 0x80  # a one-byte varint
    header = 4 + 1 + local[4]
    assert client.status(path)["length"] == header < len(local)
    with client.read(path) as reader:  # the DataNode serves every byte written
        assert reader.read() == local
    offset = entries_of(server.wal.path)[-2].offset
    with pytest.raises(HdfsError, match=rf"Offset={offset} out of the range \[0, {header}\)"):
        client.read(path, offset=offset, length=40).__enter__()
    archived, = rs.roll(server.slot)
    with pytest.raises(HdfsError, match=r"(?i)not (exist|found)"):
        client.status(path)
    assert client.status(f"/hbase/oldWALs/{archived}")["length"] >= len(local)


def test_gateways_show_assignment_and_edits_follow_a_move(
        make_embedded: EmbeddedClusters) -> None:
    mini = make_embedded(wal=WalSettings(region_servers=2, roll_period=3600))  # its gateways
    assert mini.cluster is not None and mini.region_servers is not None
    mini.cluster.create_table("t", [FamilyDescriptor(b"f")], [b"m"])
    host, port = mini.endpoints.thrift.split(":")
    conn = happybase.Connection(host, int(port))
    try:
        def listed() -> tuple[list[int], list[tuple[str, int, int]]]:
            t1 = [r["port"] for r in conn.table("t").regions()]
            with Thrift2Client(mini.endpoints.thrift2) as t2:
                t2_servers = [(r.server_host, r.server_port, r.server_start_code)
                              for r in t2.regions("t")]
            return t1, t2_servers
        names = [s.name for s in mini.region_servers.servers]
        ports, servers = listed()
        # round robin over the two servers, named by their RPC ports
        assert sorted(ports) == sorted(n.port for n in names) and len(set(ports)) == 2
        assert {(n.host, n.port, n.start_code) for n in names} == set(servers)
        region = mini.cluster.regions("t")[0]
        moved = mini.region_servers.move(region.encoded_name)
        ports_after, _ = listed()
        assert ports_after[0] != ports[0] and ports_after[1] == ports[1]
        put(mini, b"a")
        target = mini.region_servers.server(moved["to"])
        assert target.wal is not None
        last = entries_of(target.wal.path)[-1]
        assert last.key.encoded_region_name == region.encoded_name.encode()
        assert [c.row for c in last.cells] == [b"a"]
    finally:
        conn.close()


def test_restart_adopts_queues_of_earlier_servers(make_embedded: EmbeddedClusters,
                                                  zookeeper: ZooKeeperServer) -> None:
    """A disabled peer keeps the earlier run's WALs queued: after a restart the new server
    claims that queue, and its files stay pinned against the cleaner."""
    settings = WalSettings(region_servers=1, roll_period=3600, archive_ttl=0,
                           cleaner_interval=3600)
    first = make_embedded(over="native", wal=settings, replication_peer="1")
    parent = first.znode_parent
    assert first.cluster is not None and first.region_servers is not None
    assert first.region_servers.replication is not None
    first.cluster.create_table("t", [FamilyDescriptor(b"f")])
    put(first, b"a")
    first.region_servers.replication.set_enabled(False)
    rolled, = first.region_servers.roll()
    old_server = str(first.region_servers.servers[0].name)
    first.stop()
    again = first.start()  # the same cluster, restarted
    rs = again.region_servers
    assert rs is not None and rs.replication is not None
    assert rs.replication.enabled is False
    assert rolled in rs.replication.pinned()
    rs.clean()
    assert (again.hbase_root_dir / "oldWALs" / rolled).exists()
    with HBaseZooKeeper(zookeeper.address, parent) as zk:
        claimed, = [q for q in zk.replication_queues() if q.recovered]
        assert [str(d) for d in claimed.dead_servers] == [old_server]
        assert rolled in claimed.wals
    rs.replication.set_enabled(True)
    assert rolled in rs.clean()
