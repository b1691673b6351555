"""The project's ``NativeAdmin`` against the embedded cluster's master and region servers
over HBase's RPC, judged by the cluster itself (its store, its region servers' WAL files)
and by the Thrift2 gateway: a namespace and a table with split keys from creation to
deletion, its state, flushes, a major compaction, a WAL roll and the cluster status."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.rpc.admin import NativeAdmin
from hbase_migrate.rpc.client import NativeCallError, NativeClient
from hbase_migrate.rpc.server_admin import AdminCallError
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType
from minihbase.server import MiniHBase

pytestmark = pytest.mark.integration

TABLE = "nadm:life"
FAMILIES = (FamilyDescriptor(b"f", max_versions=3, ttl=864000),
            FamilyDescriptor(b"g", bloom_filter="ROWCOL"))
KEPT = (FamilyDescriptor(b"f", max_versions=3), FamilyDescriptor(b"g"))  # no TTL


@pytest.fixture(scope="module")
def admin(rpc_mini: MiniHBase) -> Iterator[NativeAdmin]:
    with NativeAdmin(rpc_mini.zookeeper or "", rpc_mini.znode_parent, wait_timeout=30,
                     master_wait=10) as native:
        yield native


def test_table_life(rpc_mini: MiniHBase, admin: NativeAdmin) -> None:
    """Namespace, create with split keys (regions as the store keeps them, descriptor as
    Thrift2 reads it), disable (data calls refused), enable, delete; errors by HBase's
    exception class."""
    cluster = rpc_mini.cluster
    assert cluster is not None
    admin.create_namespace("nadm")
    assert "nadm" in admin.namespaces() and "nadm" in cluster.namespaces()
    with pytest.raises(AdminCallError) as exists:
        admin.create_namespace("nadm")
    assert exists.value.class_name.endswith("NamespaceExistException")
    admin.create_table(TableDescriptor(TABLE, FAMILIES), [b"g", b"p"])
    assert [(r.start_key, r.end_key) for r in cluster.regions(TABLE)] == \
        [(b"", b"g"), (b"g", b"p"), (b"p", b"")]
    with Thrift2Client(rpc_mini.endpoints.thrift2 or "") as t2:
        assert admin.table_descriptor(TABLE) == t2.table_descriptor(TABLE)
    assert [d.name for d in admin.table_descriptors("nadm")] == [TABLE]
    with pytest.raises(AdminCallError) as twice:
        admin.create_table(TableDescriptor(TABLE, FAMILIES))
    assert twice.value.class_name == "org.apache.hadoop.hbase.TableExistsException"
    with NativeClient(rpc_mini.zookeeper or "", rpc_mini.znode_parent, attempts=3,
                      max_backoff=0.1) as client:
        cell = Cell(b"a", b"f", b"q", int(time.time() * 1000), CellType.PUT, b"v")  # in TTL
        client.write(TABLE, [cell])
        admin.disable_table(TABLE)
        assert admin.table_state(TABLE) == "DISABLED" and not cluster.table(TABLE).enabled
        client.locator.invalidate(TABLE)
        with pytest.raises(NativeCallError):
            client.get(TABLE, b"a")
        admin.enable_table(TABLE)
        assert admin.is_table_enabled(TABLE)
        client.locator.invalidate(TABLE)
        assert client.get(TABLE, b"a") == [cell]
    admin.drop(TABLE)
    assert not admin.table_exists(TABLE) and not cluster.store.has_table(TABLE)
    assert admin.table_state(TABLE) is None


def test_flush_compact_roll_and_status(rpc_mini: MiniHBase, admin: NativeAdmin) -> None:
    """Flush writes flush markers to the region servers' WALs; a major compaction drops
    the delete markers and what they mask from the store; a WAL roll archives a file of
    every live server; the cluster status lists the live servers and their regions."""
    cluster, servers = rpc_mini.cluster, rpc_mini.region_servers
    assert cluster is not None and servers is not None
    admin.create_table(TableDescriptor("nadm_c", KEPT), [b"m"])
    with NativeClient(rpc_mini.zookeeper or "", rpc_mini.znode_parent) as client:
        client.write("nadm_c", [Cell(b"a", b"f", b"q", ts, CellType.PUT, b"v%d" % ts)
                                for ts in (1, 2)])
        client.write("nadm_c", [Cell(b"a", b"f", b"q", 2, CellType.DELETE),
                                Cell(b"z", b"g", b"", 5, CellType.DELETE_FAMILY)])
        entries = servers.counters["entries"]
        admin.flush("nadm_c")
        assert servers.counters["entries"] >= entries + 2  # a marker per region at least
        admin.compact("nadm_c")
        assert [c for _, cells in cluster.store.raw_rows("nadm_c", b"", True, b"")
                for c in cells] == [Cell(b"a", b"f", b"q", 1, CellType.PUT, b"v1")]
        assert [c for row in client.scan("nadm_c", raw=True) for c in row] == \
            [Cell(b"a", b"f", b"q", 1, CellType.PUT, b"v1")]
    rolls = servers.counters["rolls"]
    rolled = admin.roll_wals()
    assert sorted(str(s) for s in rolled) == sorted(rpc_mini.describe()["region_servers"])
    assert servers.counters["rolls"] == rolls + len(rolled)
    status = admin.cluster_status()
    live = {str(s.server): s.regions for s in status.live_servers}
    assert live == {str(s.name): len(servers.hosted(s.slot)) for s in servers.live_servers()}
    assert str(status.master) == str(rpc_mini.master_name)
