"""The registrar writes HBase's ZooKeeper layout on a real ZooKeeper; raw bytes carry
HBase's prefixes; the product's reader decodes it; peers, queues, and the migration lock."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from kazoo.client import KazooClient

from hbase_migrate.cluster.errors import ClusterError, MigrationLockedError
from hbase_migrate.cluster.zk.replication_payload import (
    ReplicationPeer,
    ReplicationState,
    TableCF,
    encode_replication_peer,
)
from hbase_migrate.cluster.zk.zkpayload import add_metadata
from hbase_migrate.cluster.zk.zookeeper import (
    QUEUES_IN_TABLE,
    QUEUES_IN_ZOOKEEPER,
    HBaseZooKeeper,
    QueueInfo,
)
from hbase_migrate.wal.names import ServerName
from minihbase.zkregistry import ZkRegistrar
from minihbase.zookeeper import ZooKeeperServer

pytestmark = pytest.mark.integration

IDENT = "4242@testhost"
RS1 = ServerName("rs1.example.com", 16020, 1700000000000)
RS_DEAD = ServerName("rs-dead.example.com", 16020, 1600000000000)  # '-' in the host
MASTER = ServerName("master.example.com", 16000, 1700000000001)
WAL1 = "rs1.example.com%2C16020%2C1700000000000.1700000100000"
WAL2 = "rs1.example.com%2C16020%2C1700000000000.1700000200000"


@pytest.fixture
def parent() -> str:
    return f"/hbase-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def raw(zookeeper: ZooKeeperServer) -> Iterator[KazooClient]:
    client = KazooClient(hosts=zookeeper.address, timeout=5)
    client.start(timeout=10)
    yield client
    client.stop()
    client.close()


def _eventually(check: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def _payload(raw_bytes: bytes) -> bytes:
    """Check the metadata prefix byte by byte and return what follows it."""
    assert raw_bytes[0] == 0xFF
    id_len = int.from_bytes(raw_bytes[1:5], "big")
    assert id_len == len(IDENT) + 8  # identifier + 8 salt bytes
    assert raw_bytes[5 : 5 + len(IDENT)] == IDENT.encode()
    return raw_bytes[5 + id_len :]


def test_registrar_layout_raw_bytes_and_reader(
    zookeeper: ZooKeeperServer, raw: KazooClient, parent: str
) -> None:
    cluster_id = str(uuid.uuid4())
    registrar = ZkRegistrar(zookeeper.address, parent, identifier=IDENT)
    registrar.set_cluster_id(cluster_id)
    registrar.set_master(MASTER)
    registrar.set_meta_server(RS1)
    registrar.set_running()
    registrar.register_server(RS1)

    hbaseid = _payload(raw.get(f"{parent}/hbaseid")[0])
    assert hbaseid == b"PBUF" + b"\x0a" + bytes([len(cluster_id)]) + cluster_id.encode()
    rs_payload = _payload(raw.get(f"{parent}/rs/{RS1}")[0])
    assert rs_payload[:8] == b"PBUF\x08\x9e\x7d\x12"  # infoPort 16030, then VersionInfo
    assert b"minihbase" in rs_payload
    assert raw.exists(f"{parent}/rs/{RS1}").ephemeralOwner != 0
    assert raw.exists(f"{parent}/master").ephemeralOwner != 0
    assert _payload(raw.get(f"{parent}/running")[0])[:5] == b"PBUF\x0a"

    with HBaseZooKeeper(zookeeper.address, parent) as zk:
        assert zk.cluster_id() == cluster_id
        assert zk.master() == MASTER
        assert zk.meta_server() == RS1
        assert zk.live_servers() == [RS1]
        registrar.close()  # the registrar's session ends: the server is "killed"
        assert _eventually(lambda: zk.live_servers() == [])
        assert zk.master() is None
        assert zk.cluster_id() == cluster_id  # persistent znodes stay


def test_replication_peers_and_queues(
    zookeeper: ZooKeeperServer, raw: KazooClient, parent: str
) -> None:
    rs2 = ServerName("rs2.example.com", 16020, 1700000000002)
    with ZkRegistrar(zookeeper.address, parent, identifier=IDENT) as reg:
        reg.add_replication_peer("1", "zk-b:2181:/hbase")
        reg.add_replication_peer("2", "zk-c:2181:/hbase", enabled=False)
        assert _payload(raw.get(f"{parent}/replication/peers/2/peer-state")[0]) == \
            b"PBUF\x08\x01"
        reg.set_queue_position(RS1, "1", WAL1, 1234)
        reg.add_queue_wal(RS1, "1", WAL2)
        assert raw.get(f"{parent}/replication/rs/{RS1}/1/{WAL2}")[0] == b""
        assert _payload(raw.get(f"{parent}/replication/rs/{RS1}/1/{WAL1}")[0]) == \
            b"PBUF\x08\xd2\x09"  # 1234 = 0x52 | 9 << 7
        dead_wal = "rs-dead.example.com%2C16020%2C1600000000000.1600000000100"
        reg.set_queue_position(RS_DEAD, "1", dead_wal, 77)
        # a bare 8-byte long, as very old writers left it
        raw.create(f"{parent}/replication/rs/{RS_DEAD}/2/{dead_wal}",
                   (5).to_bytes(8, "big"), makepath=True)
        claimed = reg.claim_queues(RS_DEAD, rs2)
        assert claimed == [f"1-{RS_DEAD}", f"2-{RS_DEAD}"]
        assert raw.exists(f"{parent}/replication/rs/{RS_DEAD}") is None

        with HBaseZooKeeper(zookeeper.address, parent) as zk:
            peers = zk.replication_peers()
            assert [(p.peer_id, p.cluster_key, p.state, p.enabled) for p in peers] == [
                ("1", "zk-b:2181:/hbase", ReplicationState.ENABLED, True),
                ("2", "zk-c:2181:/hbase", ReplicationState.DISABLED, False),
            ]
            assert zk.queues_location() == QUEUES_IN_ZOOKEEPER
            assert zk.replication_queues() == [
                QueueInfo(RS1, "1", "1", (), {WAL1: 1234, WAL2: 0}),
                QueueInfo(rs2, f"1-{RS_DEAD}", "1", (RS_DEAD,), {dead_wal: 77}),
                QueueInfo(rs2, f"2-{RS_DEAD}", "2", (RS_DEAD,), {dead_wal: 5}),
            ]
            reg.remove_queue_wal(RS1, "1", WAL1)
            assert zk.replication_queues()[0].wals == {WAL2: 0}


def test_1x_peer_with_legacy_table_cfs(
    zookeeper: ZooKeeperServer, raw: KazooClient, parent: str
) -> None:
    peer = ReplicationPeer("zk-old:2181:/hbase", bandwidth=1024)
    base = f"{parent}/replication/peers/7"
    raw.create(base, add_metadata(encode_replication_peer(peer, "1.x")), makepath=True)
    raw.create(f"{base}/peer-state", add_metadata(b"PBUF\x08\x00"))
    raw.create(f"{base}/tableCFs", add_metadata(b"ns1.t1:cf1;t2"))
    with HBaseZooKeeper(zookeeper.address, parent) as zk:
        (info,) = zk.replication_peers()
    assert info.schema == "1.x"
    assert info.config.bandwidth == 1024
    assert info.table_cfs == (TableCF(b"ns1", b"t1", (b"cf1",)), TableCF(b"default", b"t2"))


def test_3x_layout_reports_the_queue_table(
    zookeeper: ZooKeeperServer, parent: str
) -> None:
    with ZkRegistrar(zookeeper.address, parent) as reg:
        reg.register_server(RS1)
        reg.add_replication_peer("1", "zk-b:2181:/hbase")  # peers, and no replication/rs
        with HBaseZooKeeper(zookeeper.address, parent) as zk:
            assert zk.queues_location() == QUEUES_IN_TABLE
            assert zk.replication_queues() == []
            assert [p.peer_id for p in zk.replication_peers()] == ["1"]


def test_wrong_parent_and_unreachable_quorum_are_clear_errors(
    zookeeper: ZooKeeperServer, closed_port: int,
) -> None:
    with HBaseZooKeeper(zookeeper.address, "/no-such-hbase") as zk, \
            pytest.raises(ClusterError, match=r"zookeeper\.znode\.parent") as err:
        zk.live_servers()
    assert zookeeper.address in str(err.value) and "/no-such-hbase" in str(err.value)
    dead = f"127.0.0.1:{closed_port}"
    with pytest.raises(ClusterError, match=re.escape(f"quorum {dead}")):
        HBaseZooKeeper(dead, timeout=1.0).start()


def test_migration_lock_times_out_naming_the_holder(zookeeper: ZooKeeperServer) -> None:
    name = f"mig-{uuid.uuid4().hex[:6]}"
    with HBaseZooKeeper(zookeeper.address) as first, HBaseZooKeeper(zookeeper.address) as other:
        held = first.lock(name, "host-a pid 111")
        assert held.acquire()
        waiting = other.lock(name, "host-b pid 222", timeout=0.5)
        with pytest.raises(MigrationLockedError) as err:
            waiting.acquire()
        assert name in str(err.value) and "host-a pid 111" in str(err.value)
        assert err.value.holder == "host-a pid 111"
        held.release()
        assert waiting.acquire(timeout=5)
        assert waiting.holder() == "host-b pid 222"
        waiting.release()
