"""A real HBase 2.6.1 whose RPC takes TLS and plain connections side by side
(``realstack --rpc-tls --rpc-tls-plaintext``: ``hbase.server.netty.tls.supportplaintext``, as
while a cluster moves to TLS): the native client with ``rpc_tls = "on"`` and one with
``"off"`` each read what the other wrote, through the master and the region server."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.cluster.sizing import ClientSettings
from hbase_migrate.rpc.cluster import NativeCluster
from hbase_migrate.wal.model import Cell, CellType
from realstack.hbase import RealHBase, RealHBaseOptions
from tests.realstack.fixtures import running, skip_without_real_stack, stack_endpoints
from tests.rpc.cells import FAMILIES

pytestmark = [pytest.mark.own_stack, pytest.mark.integration, pytest.mark.realstack]
TABLE = "tls_both"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealHBase]:
    skip_without_real_stack()
    yield from running(RealHBase(tmp_path_factory.mktemp("tlsplain"), RealHBaseOptions(
        region_servers=1, heap="768m", rpc_tls=True, rpc_tls_plaintext=True,
        name="tlsplain")), "real HBase with TLS and plain RPC")


def cells(tag: bytes) -> list[Cell]:
    return [Cell(b"%s-%d" % (tag, i), b"f", b"q", 1, CellType.PUT, tag * i) for i in range(20)]


def test_tls_and_plain_clients_side_by_side(stack: RealHBase) -> None:
    found = replace(stack_endpoints(stack), client="native")
    assert found.security is not None and found.security.tls
    plain = replace(found, security=replace(found.security, rpc_tls="off"))
    with NativeCluster.of(found, ClientSettings()) as tls, \
            NativeCluster.of(plain, ClientSettings()) as clear:
        tls.create_table(TableDescriptor(TABLE, FAMILIES))
        assert clear.table_exists(TABLE)
        tls.write_cells(TABLE, cells(b"tls"))
        clear.write_cells(TABLE, cells(b"plain"))
        expected = sorted(cells(b"tls") + cells(b"plain"))
        assert sorted(c for piece in clear.scan(TABLE) for c in piece) == expected
        assert sorted(c for piece in tls.scan(TABLE) for c in piece) == expected
