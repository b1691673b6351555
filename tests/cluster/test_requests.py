"""The requests the transports count as sent to region servers
(:mod:`hbase_migrate.cluster.requests`) are those the embedded cluster's servers received:
over HBase's own RPC every ``ClientService`` call (``hbase:meta`` look-ups too), through its
Thrift2 gateway every data call; the counts are the calling thread's alone."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.requests import counted
from hbase_migrate.hbase.connect import connect
from hbase_migrate.wal.model import Cell, CellType
from minihbase.server import MiniHBase
from tests.support.minicluster import EmbeddedClusters

pytestmark = pytest.mark.integration
TABLE = "counted"
THRIFT2_DATA_CALLS = ("get", "putMultiple", "deleteMultiple", "openScanner",
                      "getScannerRows")


def counting(received: Counter[str], name: str, handler: Callable[..., Any]
             ) -> Callable[..., Any]:
    def served(*args: Any) -> Any:
        received[name] += 1
        return handler(*args)
    return served


def watch(mini: MiniHBase, native: bool) -> Counter[str]:
    """The calls the cluster's region servers (native) or its gateway serve from now on."""
    received: Counter[str] = Counter()
    if native:
        for listener in mini.rpc:
            calls = listener.services["ClientService"]
            assert isinstance(calls, dict)  # looked up at each call
            for name, handler in list(calls.items()):
                calls[name] = counting(received, name, handler)
    else:
        _, gateway = mini._served["thrift2"]  # what the gateway calls, by name, per call
        for name in THRIFT2_DATA_CALLS:
            setattr(gateway, name, counting(received, name, getattr(gateway, name)))
    return received


def test_requests_counted_are_those_the_servers_received(
        transport: str, make_embedded: EmbeddedClusters) -> None:
    native = transport == "native"
    mini = make_embedded("counted", over=transport)
    with connect(mini.endpoints) as client:
        assert mini.endpoints.native is native
        client.create_table(TableDescriptor(TABLE, (FamilyDescriptor(b"f"),)), [b"r150"])
        received = watch(mini, native)
        cells = [Cell(b"r%03d" % i, b"f", b"q", 1, CellType.PUT, b"v" * 50)
                 for i in range(300)]
        with counted() as writes:
            client.write_cells(TABLE, cells)
        assert writes.count == sum(received.values()) > 0
        received.clear()
        with counted() as reads:
            assert sum(len(piece) for piece in client.scan(TABLE)) == len(cells)
        assert reads.count == sum(received.values()) >= 2  # both regions
        received.clear()
        with counted() as here:  # another thread's scan counts in that thread alone
            other = threading.Thread(target=lambda: list(client.scan(TABLE, b"r2")))
            other.start()
            other.join()
        assert here.count == 0 and sum(received.values()) > 0
        with counted() as admin:
            client.table_descriptor(TABLE)  # the master's, not a region server's
        assert admin.count == 0
