"""The shared fixtures and the oracle (``tests/support``): the product's client of an
embedded cluster, over each transport, writes what the cluster's store then holds, and
reads what a plain happybase scan of the Thrift1 gateway reads."""

from __future__ import annotations

from hbase_migrate.cluster.client import Client
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.wal.model import Cell, CellType
from minihbase.server import MiniHBase
from tests.support.oracle import plain_scan, stored_cells

T = 1_700_000_000_000


def test_the_client_over_each_transport_agrees_with_the_oracle(
        client: Client, embedded: MiniHBase, transport: str) -> None:
    assert embedded.endpoints.client == ("native" if transport == "native" else "thrift")
    client.create_table(TableDescriptor("t", (FamilyDescriptor(b"d", max_versions=2),)))
    client.put_cells("t", [Cell(b"a", b"d", b"q", T + v, CellType.PUT, b"v%d" % v)
                           for v in range(3)] + [Cell(b"b", b"d", b"", T, CellType.PUT, b"")])
    # two versions of a:q are kept (the family keeps 2)
    assert stored_cells(embedded, "t") == [(b"a", b"d", b"q", T + 1, b"v1"),
                                           (b"a", b"d", b"q", T + 2, b"v2"),
                                           (b"b", b"d", b"", T, b"")]
    assert embedded.endpoints.thrift
    newest = {c.row: {c.family + b":" + c.qualifier: c.value} for row in client.scan("t")
              for c in row if c.timestamp == max(x.timestamp for x in row)}
    assert plain_scan(embedded.endpoints.thrift, "t") == newest == {
        b"a": {b"d:q": b"v2"}, b"b": {b"d:": b""}}
