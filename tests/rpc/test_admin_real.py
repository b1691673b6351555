"""``NativeAdmin`` against real Apache HBase 2.6.1 (the session's ``real_hbase``), checked
by HBase's own admin (the Thrift2 gateway's descriptors and regions, the project's Java
helper's snapshot listing) and by the files in HDFS: one table's life from a namespace to
its deletion, with flushes, a major compaction waited for, a snapshot, its clone and a WAL
roll; the snapshot method's admin channel over it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from rich.console import Console

from hbase_migrate.cluster.admin import JavaAdmin
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.storage.hdfs_files import HdfsRoot
from hbase_migrate.commands.cluster import _render_status, status_info
from hbase_migrate.rpc.admin import NativeAdmin
from hbase_migrate.rpc.admin_channel import NativeAdminChannel
from hbase_migrate.rpc.client import NativeClient
from hbase_migrate.rpc.server_admin import AdminCallError
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.realstack]

NAMESPACE = "nadm"
TABLE = f"{NAMESPACE}:life"
CLONE = f"{NAMESPACE}:clone"
SNAPSHOT = "nadm_life_snap"
SPLITS = [b"g", b"p"]
FAMILIES = (
    FamilyDescriptor(b"f", max_versions=5, min_versions=1, ttl=864000, scope=1,
                     compression="GZ", bloom_filter="ROWCOL", in_memory=True,
                     block_cache=False, block_size=32768, data_block_encoding="FAST_DIFF",
                     keep_deleted_cells="TRUE"),
    FamilyDescriptor(b"g"),
)
ATTRIBUTES = ((b"MAX_FILESIZE", b"2147483648"), (b"hbase_migrate.owner", b"test"))


@pytest.fixture(scope="module")
def described(real_hbase: Any) -> dict[str, Any]:
    return dict(real_hbase.described)


@pytest.fixture(scope="module")
def admin(described: dict[str, Any]) -> Iterator[NativeAdmin]:
    with NativeAdmin(described["zookeeper"], described["znode_parent"],
                     wait_timeout=120) as native:
        yield native


def scanned(client: NativeClient, table: str) -> list[Cell]:
    return [c for row in client.scan(table) for c in row]


def store_files(admin: NativeAdmin, table: str) -> dict[bytes, int]:
    """Store files per region start key, as each region's server counts them now."""
    counts = {}
    for region in admin.locator.regions(table):
        loads = {ld.region: ld for ld in admin.region_loads(region.host, region.port, table)}
        counts[region.start] = loads[region.name].store_files
    return counts


def test_cluster_info_shows_the_masters_status(described: dict[str, Any],
                                               admin: NativeAdmin) -> None:
    """``cluster info``'s status part for a native cluster: the master's view of its
    servers (the stack's own list), printed; none for a cluster of the gateways."""
    native = ClusterEndpoints("native", zookeeper=described["zookeeper"],
                              znode_parent=described["znode_parent"])
    shown = status_info(native)
    assert shown is not None and shown["master"] == str(admin.active_master())
    assert shown["version"] == described["hbase_version"]
    assert [s["server"] for s in shown["live_servers"]] == sorted(described["region_servers"])
    console = Console(record=True, width=200)
    _render_status(console, shown)
    printed = console.export_text()
    assert all(s in printed for s in described["region_servers"]), printed
    assert status_info(ClusterEndpoints("gateways", thrift="x:9090", zookeeper="x:2181",
                                        client="thrift")) is None


def test_a_table_life_over_the_native_admin(described: dict[str, Any],
                                            admin: NativeAdmin) -> None:
    began = time.monotonic()
    status = admin.cluster_status()
    assert status.version == described["hbase_version"]
    assert sorted(str(s.server) for s in status.live_servers) == \
        sorted(described["region_servers"])
    assert status.master == admin.active_master() and status.cluster_id

    admin.create_namespace(NAMESPACE)
    with Thrift2Client(described["thrift2"]) as t2:
        assert NAMESPACE in admin.namespaces() and NAMESPACE in t2.namespaces()

    desc = TableDescriptor(TABLE, FAMILIES, ATTRIBUTES)
    admin.create_table(desc, list(reversed(SPLITS)))
    native_desc = admin.table_descriptor(TABLE)
    with Thrift2Client(described["thrift2"]) as t2:
        assert native_desc == t2.table_descriptor(TABLE)  # HBase's Admin, in the gateway
        gateway_regions = [(r.start_key, r.end_key) for r in t2.regions(TABLE)]
    assert native_desc.families == FAMILIES
    assert set(ATTRIBUTES) <= set(native_desc.attributes)
    assert gateway_regions == [(b"", b"g"), (b"g", b"p"), (b"p", b"")]
    assert admin.table_state(TABLE) == "ENABLED" and not admin.table_exists(f"{TABLE}_no")

    with NativeClient(described["zookeeper"], described["znode_parent"]) as client:
        rows = [b"a1", b"h1", b"q1", b"z1"]
        now = int(time.time() * 1000)  # within the family's TTL
        for ts in (now, now + 1):  # two flushes: two store files in every region written to
            client.write(TABLE, [Cell(r, b"f", b"q", ts, CellType.PUT, b"v%d" % ts)
                                 for r in rows])
            admin.flush(TABLE)
        assert store_files(admin, TABLE) == {b"": 2, b"g": 2, b"p": 2}
        admin.compact(TABLE)  # major, waited for
        assert store_files(admin, TABLE) == {b"": 1, b"g": 1, b"p": 1}
        assert all(admin.region_state(r).compaction == "NONE"
                   for r in admin.locator.regions(TABLE))
        region = admin.locator.regions(TABLE)[0]
        assert region.name in {r.name for r in admin.online_regions(region.host, region.port)}

        admin.snapshot(TABLE, SNAPSHOT, ttl_seconds=3600)
        mine = admin.snapshots("nadm_")
        assert [(s.name, s.table, s.ttl) for s in mine] == [(SNAPSHOT, TABLE, 3600)]
        java = JavaAdmin("source", described["zookeeper"], described["znode_parent"])
        assert java.listed("nadm_.*") == mine  # HBase's own Admin.listSnapshots
        admin.clone_snapshot(SNAPSHOT, CLONE)
        assert admin.table_descriptor(CLONE).families == FAMILIES
        assert scanned(client, CLONE) == scanned(client, TABLE)
        assert len(scanned(client, CLONE)) == 8

        client.write(TABLE, [Cell(b"a1", b"f", b"q", now + 2, CellType.PUT, b"later")])
        admin.disable_table(TABLE)
        admin.restore_snapshot(SNAPSHOT, TABLE)
        admin.enable_table(TABLE)
        assert scanned(client, TABLE) == scanned(client, CLONE)
    admin.delete_snapshot(SNAPSHOT)
    assert admin.snapshots("nadm_") == []

    hdfs = HdfsRoot(described["webhdfs"], described["hbase_root"], "source")
    server = status.live_servers[0].server
    before = set(hdfs.listing(f"WALs/{server}"))
    admin.roll_wal(server.host, server.port)  # HBase 2.x rolls after answering
    wait_for(lambda: set(hdfs.listing(f"WALs/{server}")) - before, 30, "a new WAL file")

    for table in (CLONE, TABLE):
        admin.drop(table)
        assert not admin.table_exists(table)
    with Thrift2Client(described["thrift2"]) as t2:
        assert not t2.table_exists(TABLE) and not t2.table_exists(CLONE)
    with pytest.raises(AdminCallError, match=rf"^DisableTable table {TABLE}, master \S+: "
                       r"org\.apache\.hadoop\.hbase\.TableNotFoundException"):
        admin.disable_table(TABLE)
    assert time.monotonic() - began < 90


def test_the_native_admin_channel(described: dict[str, Any], admin: NativeAdmin) -> None:
    """The snapshot method's channel over the native admin: a flush and major compaction
    that drops a delete marker (a put under it shows again, as after ``major_compact`` in
    the hbase shell), then a snapshot listed by prefix, cloned, restored, dropped."""
    table, clone, snap = "nadm_channel", "nadm_channel_clone", "nadm_channel_s"
    channel = NativeAdminChannel("target", described["zookeeper"], described["znode_parent"])
    admin.create_table(TableDescriptor(table, (FamilyDescriptor(b"f", max_versions=3),)))
    put = Cell(b"r", b"f", b"q", 5, CellType.PUT, b"v")
    with NativeClient(described["zookeeper"], described["znode_parent"]) as client:
        client.write(table, [put, Cell(b"r", b"f", b"q", 10, CellType.DELETE_COLUMN)])
        client.write(table, [put])
        assert client.get(table, b"r") == []  # hidden by the marker
        channel.flush_and_compact(table)
        client.write(table, [put])
        assert client.get(table, b"r") == [put]  # the marker is gone

        channel.snapshot(table, snap, 600)
        assert channel.snapshots("nadm_channel") == [snap]
        channel.clone(snap, clone)
        client.write(table, [put._replace(timestamp=6, value=b"after")])
        channel.restore(snap, table)
        assert client.get(table, b"r") == client.get(clone, b"r") == [put]
    channel.delete(snap)
    channel.drop(clone)
    channel.drop(table)
    assert channel.snapshots("nadm_channel") == [] and not admin.table_exists(table)
