"""Thrift over HTTP without Kerberos against real HBase 2.6.1 (``realstack start
--thrift-http``): both gateways in HTTP mode answer the project's clients with no
``Authorization`` header at all; a Thrift client speaking plain sockets gets no answer it can
read (the mode is the cluster's, written into its ``cluster.json``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import load_cluster_json
from hbase_migrate.thrift.thrift1 import Thrift1Client, Thrift1Error
from hbase_migrate.thrift.thrift2 import Thrift2Client, Thrift2Error
from hbase_migrate.wal.model import Cell, CellType
from realstack.hbase import RealHBase, RealHBaseOptions
from tests.realstack.fixtures import skip_without_real_stack

pytestmark = [pytest.mark.own_stack, pytest.mark.integration, pytest.mark.realstack]


@pytest.fixture(scope="module")
def plain_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealHBase]:
    skip_without_real_stack()
    with RealHBase(tmp_path_factory.mktemp("plainhttp"), RealHBaseOptions(
            region_servers=1, heap="768m", thrift_http=True, name="plainhttp")) as stack:
        yield stack


def test_unsecured_http_gateways_answer_both_clients(plain_http: RealHBase) -> None:
    found = load_cluster_json(plain_http.cluster_json)
    assert found.transport == "http" and not found.kerberos and found.thrift2
    cell = Cell(b"r", b"d", b"q", 3, CellType.PUT, b"v")
    with Thrift2Client(found.thrift2, found.transport) as t2:
        t2.create_table(TableDescriptor("plain_http", (FamilyDescriptor(b"d"),)))
        t2.put_cells("plain_http", [cell])
        assert t2.get("plain_http", b"r") == [cell]
    with Thrift1Client(found.thrift, found.transport) as t1:
        assert "plain_http" in t1.tables()
        assert t1.row("plain_http", b"r") == {b"d:q": (b"v", 3)}
    with Thrift2Client(found.thrift2, "buffered", timeout=3, retries=0) as sockets, \
            pytest.raises(Thrift2Error, match=r"the reply is not buffered/binary Thrift .* "
                          r"needs transport = \"http\""):
        sockets.table_exists("plain_http")
    with Thrift1Client(found.thrift, "buffered", timeout=3, retries=0) as sockets1, \
            pytest.raises(Thrift1Error, match=r"the reply is not buffered/binary Thrift"):
        sockets1.tables()
