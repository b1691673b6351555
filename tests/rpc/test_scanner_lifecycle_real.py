"""A region scanner's life, asked of real Apache HBase 2.6.1 (the session's ``real_hbase``)
and of the embedded cluster with the same raw ``ScanRequest``s and the same expectations
(issue 70). Requests are encoded and replies decoded by Google's protobuf package
(``tests/rpc/proto_reference.py``), so a field the server leaves out is seen as absent.

The expectations, from ``RSRpcServices`` of HBase branch-2.6:

* the call that returns a region's last row says the region has nothing more
  (``more_results_in_region`` false: ``RegionScannerImpl.nextRaw`` peeks at the next stored
  row), and the server closes the scanner then, as it does on a close request;
* a closed scanner's name is kept for a lease period (``closedScanners``, the count of
  ``next_call_seq`` calls it had): a later call on it, without a ``next_call_seq`` or with
  the count plus one, is answered with a response holding only the scanner's id (the
  ``SCANNER_ALREADY_CLOSED`` path after ``builder.setScannerId``); any other
  ``next_call_seq`` is ``OutOfOrderScannerNextException`` (HBASE-28595, May 2024: releases
  before it, 2.5.8 and 2.4.17 among them, answer any call on a closed scanner alike);
* an id never issued is ``UnknownScannerException``, a ``DoNotRetryIOException`` whose
  message quotes the id; so is a close request on it;
* a ``next_call_seq`` out of step on an open scanner is ``OutOfOrderScannerNextException``
  and the scanner stays open (``checkScanNextCallSeq`` advances the count only when it
  matches; the lease is put back)."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.rpc.client import NativeClient
from hbase_migrate.rpc.connection import Connection
from hbase_migrate.rpc.errors import RemoteError
from hbase_migrate.rpc.locate import Region
from hbase_migrate.rpc.scan import decode_scan_response
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType
from tests.rpc.proto_reference import decode, encode
from tests.rpc.two_stacks import described

__all__ = ["described"]  # the module's stacks: the embedded cluster and real HBase

pytestmark = pytest.mark.integration

H = "org.apache.hadoop.hbase."
UNKNOWN = H + "UnknownScannerException"
OUT_OF_ORDER = H + "exceptions.OutOfOrderScannerNextException"
FIRST, SECOND = [b"a1", b"a2", b"a3"], [b"n1", b"n2"]  # the rows of [, m) and [m, )


@pytest.fixture(scope="module")
def regions(described: dict[str, Any]) -> Iterator[tuple[NativeClient, list[Region]]]:
    """A table of two regions split at ``m``: three rows in the first, two in the second."""
    table = f"lifecycle_{uuid.uuid4().hex[:8]}"
    with Thrift2Client(described["thrift2"]) as t2:
        t2.create_table(TableDescriptor(table, (FamilyDescriptor(b"f"),)), [b"m"])
    with NativeClient(described["zookeeper"], described["znode_parent"],
                      max_backoff=1.0) as native:
        native.write(table, [Cell(row, b"f", b"q", 1, CellType.PUT, b"v-" + row)
                             for row in FIRST + SECOND])
        found = native.regions(table)
        assert [r.start for r in found] == [b"", b"m"]
        yield native, found


class Reply:
    """A ScanResponse: its fields as the reference decoder sees them, and its rows."""

    def __init__(self, response: bytes, cell_block: bytes) -> None:
        self.message = decode("ScanResponse", response)
        self.fields = sorted(f.name for f, _ in self.message.ListFields())
        self.rows = [r[0].row for r in decode_scan_response(response, cell_block).results]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.message, name)


def scan(conn: Connection, **fields: Any) -> Reply:
    reply = conn.call("Scan", encode("ScanRequest", **fields))
    return Reply(reply.response or b"", reply.cell_block)


def refused(conn: Connection, **fields: Any) -> RemoteError:
    with pytest.raises(RemoteError) as caught:
        conn.call("Scan", encode("ScanRequest", **fields))
    return caught.value


def open_scanner(native: NativeClient, region: Region, rows: int) -> tuple[Connection, Reply]:
    conn = native.pool.get(region.host, region.port)
    return conn, scan(conn, region={"type": 1, "value": region.name},
                      scan={"column": [{"family": b"f"}]},
                      number_of_rows=rows, client_handles_partials=True)


def only_its_id(reply: Reply, scanner: int) -> bool:
    """The answer to a call on a closed scanner: its id and nothing else."""
    return reply.fields == ["scanner_id"] and reply.scanner_id == scanner


def test_a_scanner_closed_at_its_regions_end(regions: tuple[NativeClient, list[Region]]
                                             ) -> None:
    native, (first, second) = regions
    conn, opened = open_scanner(native, first, 2)
    assert opened.rows == FIRST[:2]
    assert opened.more_results_in_region and opened.more_results
    scanner = opened.scanner_id
    last = scan(conn, scanner_id=scanner, number_of_rows=1, next_call_seq=0,
                client_handles_partials=True)
    # the region's last row comes with the news that the region has no more
    assert last.rows == FIRST[2:]
    assert last.HasField("more_results_in_region") and not last.more_results_in_region
    assert last.more_results
    # closed: one call was counted (seq 0), so the one after it would bring 2
    assert only_its_id(scan(conn, scanner_id=scanner, number_of_rows=1), scanner)
    error = refused(conn, scanner_id=scanner, number_of_rows=1, next_call_seq=1)
    assert (error.class_name, error.do_not_retry) == (OUT_OF_ORDER, True)
    assert only_its_id(scan(conn, scanner_id=scanner, number_of_rows=1, next_call_seq=2),
                       scanner)
    assert only_its_id(scan(conn, scanner_id=scanner, close_scanner=True), scanner)
    # a call that asks for more rows than the region holds: the same, in one call
    conn, whole = open_scanner(native, second, 10)
    assert whole.rows == SECOND and not whole.more_results_in_region
    assert only_its_id(scan(conn, scanner_id=whole.scanner_id, close_scanner=True),
                       whole.scanner_id)
    assert only_its_id(scan(conn, scanner_id=whole.scanner_id, number_of_rows=5,
                            next_call_seq=1), whole.scanner_id)


def test_a_scanner_closed_on_request(regions: tuple[NativeClient, list[Region]]) -> None:
    native, (first, _) = regions
    conn, opened = open_scanner(native, first, 1)
    assert opened.rows == FIRST[:1] and opened.more_results_in_region
    scanner = opened.scanner_id
    closing = scan(conn, scanner_id=scanner, close_scanner=True, next_call_seq=0)
    # no number_of_rows with a close: none read, the region not said to be done
    assert closing.rows == [] and closing.more_results_in_region and closing.more_results
    assert only_its_id(scan(conn, scanner_id=scanner, number_of_rows=10), scanner)
    error = refused(conn, scanner_id=scanner, number_of_rows=10, next_call_seq=1)
    assert (error.class_name, error.do_not_retry) == (OUT_OF_ORDER, True)
    assert only_its_id(scan(conn, scanner_id=scanner, number_of_rows=10, next_call_seq=2),
                       scanner)


def test_a_scanner_never_issued_is_refused(regions: tuple[NativeClient, list[Region]]
                                           ) -> None:
    native, (first, _) = regions
    conn = native.pool.get(first.host, first.port)
    never = random.getrandbits(40) + (1 << 62)  # far from any id a server gives out
    for call in ({"number_of_rows": 1}, {"number_of_rows": 1, "next_call_seq": 0},
                 {"close_scanner": True}):
        error = refused(conn, scanner_id=never, **call)
        assert (error.class_name, error.do_not_retry) == (UNKNOWN, True), call
        assert f"'{never}'" in error.stack_trace, call


def test_a_call_out_of_step_leaves_the_scanner_open(
        regions: tuple[NativeClient, list[Region]]) -> None:
    native, (first, _) = regions
    conn, opened = open_scanner(native, first, 1)
    scanner = opened.scanner_id
    error = refused(conn, scanner_id=scanner, number_of_rows=1, next_call_seq=3)
    assert (error.class_name, error.do_not_retry) == (OUT_OF_ORDER, True)
    following = scan(conn, scanner_id=scanner, number_of_rows=1, next_call_seq=0,
                     client_handles_partials=True)
    assert following.rows == FIRST[1:2] and following.more_results_in_region
    assert scan(conn, scanner_id=scanner, close_scanner=True, next_call_seq=1).rows == []
