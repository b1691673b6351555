"""The client protocol over both transports on the same real HBase 2.6.1 (the session's
``real_hbase``): the clients ``connect`` gives for ``client = "native"`` and for ``client =
"thrift"`` answer the same calls with the same cells (every version, time ranges, columns,
raw scans with their delete markers), the same regions and descriptors, and fail alike on a
missing table; cells written over one transport read back the same over the other. The
admin calls too: a namespace made over one seen over both, a descriptor with every family
attribute the project carries (and a table attribute) created over each and read back the
same over both, disable and enable seen alike, a table created twice or deleted when missing
refused alike (one line naming the table), a deleted table gone for both."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from hbase_migrate.cluster.client import Client, connect
from hbase_migrate.cluster.descriptors import FamilyDescriptor, RegionDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints, load_cluster_json
from hbase_migrate.cluster.errors import ClusterError
from hbase_migrate.cluster.thrift.thrift2 import Thrift2Client
from hbase_migrate.rpc.cluster import NativeCluster
from hbase_migrate.wal.model import Cell, CellType, cell_order
from realstack.hbase import RealHBase
from tests.rpc.cells import ROWS, every_kind
from tests.rpc.test_native_real import FAMILIES, SPLITS

pytestmark = [pytest.mark.integration, pytest.mark.realstack]



@pytest.fixture(scope="module")
def clients(real_hbase: RealHBase) -> Iterator[tuple[Client, Client]]:
    found = load_cluster_json(real_hbase.cluster_json)
    gateways = replace(found, client="thrift")
    native = ClusterEndpoints("native", zookeeper=found.zookeeper,
                              znode_parent=found.znode_parent)
    with connect(native) as rpc, connect(gateways) as thrift:
        assert isinstance(rpc, NativeCluster) and isinstance(thrift, Thrift2Client)
        yield rpc, thrift


def flat(pieces: Iterator[list[Cell]]) -> list[Cell]:
    return [c for piece in pieces for c in piece]


def where(regions: list[RegionDescriptor]) -> list[tuple[bytes, bytes, str, int]]:
    return [(r.start_key, r.end_key, r.server_host, r.server_port) for r in regions]


def test_the_same_answers_over_both_transports(clients: tuple[Client, Client]) -> None:
    rpc, thrift = clients
    written = every_kind(ROWS)
    for client, table in ((rpc, "conform_rpc"), (thrift, "conform_thrift")):
        client.create_table(TableDescriptor(table, FAMILIES), SPLITS)
        assert client.write_cells(table, written) >= 2  # puts, deletes, puts again...
    for table in ("conform_rpc", "conform_thrift"):  # each read over both transports
        raw = flat(rpc.scan(table, raw=True))
        assert raw == sorted(written, key=cell_order)  # markers and hidden cells: exact
        assert flat(thrift.scan(table, raw=True)) == raw
        visible = flat(rpc.scan(table))
        assert visible == flat(thrift.scan(table))
        assert len(visible) < len([c for c in written if c.type == CellType.PUT])
        assert flat(rpc.scan(table, time_range=(101, 103))) == \
            flat(thrift.scan(table, time_range=(101, 103)))
        assert flat(rpc.scan(table, max_versions=1)) == flat(thrift.scan(table, max_versions=1))
        columns = [(b"f", b"q1"), (b"g", None)]
        assert flat(rpc.scan(table, columns=columns)) == flat(thrift.scan(table, columns=columns))
        assert flat(rpc.scan(table, b"g", b"q")) == flat(thrift.scan(table, b"g", b"q"))
        for row in ROWS:
            assert rpc.get(table, row) == thrift.get(table, row), row
            assert rpc.get(table, row, [(b"f", None)], (100, 102), 1) == \
                thrift.get(table, row, [(b"f", None)], (100, 102), 1), row

        assert where(rpc.regions(table)) == where(thrift.regions(table))
        assert [r.start_key for r in rpc.regions(table)] == [b"", *SPLITS]
        for row in (b"g", b"o", b"p"):  # a row equal to a split key: the region it starts
            assert where([rpc.region_for(table, row)]) == where([thrift.region_for(table, row)])
        assert rpc.table_descriptor(table) == thrift.table_descriptor(table)
        assert rpc.table_exists(table) and thrift.table_exists(table)
        assert rpc.is_table_enabled(table) and thrift.is_table_enabled(table)


def test_a_missing_table_fails_alike(clients: tuple[Client, Client]) -> None:
    rpc, thrift = clients
    for client in (rpc, thrift):
        assert not client.table_exists("conform_missing")
        with pytest.raises(ClusterError, match="conform_missing"):
            flat(client.scan("conform_missing"))
        with pytest.raises(ClusterError, match="conform_missing"):
            client.table_descriptor("conform_missing")


RICH = (FamilyDescriptor(b"a", max_versions=5, min_versions=1, ttl=86_400, scope=1,
                         compression="GZ", bloom_filter="ROWCOL", in_memory=True,
                         block_cache=False, block_size=32_768, data_block_encoding="FAST_DIFF",
                         keep_deleted_cells="TRUE"),
        FamilyDescriptor(b"b"))


def test_admin_calls_alike_over_both_transports(clients: tuple[Client, Client]) -> None:
    rpc, thrift = clients
    for client, namespace in ((rpc, "conform_ns_rpc"), (thrift, "conform_ns_thrift")):
        client.create_namespace(namespace)
    assert {"conform_ns_rpc", "conform_ns_thrift"} <= set(rpc.namespaces())
    assert sorted(rpc.namespaces()) == sorted(thrift.namespaces())
    for client, name in ((rpc, "conform_ns_rpc:rich"), (thrift, "conform_ns_thrift:rich")):
        asked = TableDescriptor(name, RICH, ((b"OWNER", b"conformance"),))
        client.create_table(asked, [b"m"])
        read = rpc.table_descriptor(name)
        assert read == thrift.table_descriptor(name)
        assert read.families == RICH and (b"OWNER", b"conformance") in read.attributes
        for other in (rpc, thrift):  # created twice: refused alike, naming the table
            with pytest.raises(ClusterError, match=name):
                other.create_table(asked)
        client.disable_table(name)
        assert not rpc.is_table_enabled(name) and not thrift.is_table_enabled(name)
        client.enable_table(name)
        assert rpc.is_table_enabled(name) and thrift.is_table_enabled(name)
        client.disable_table(name)
        client.delete_table(name)
        assert not rpc.table_exists(name) and not thrift.table_exists(name)
        for other in (rpc, thrift):
            with pytest.raises(ClusterError, match=name):
                other.delete_table(name)
