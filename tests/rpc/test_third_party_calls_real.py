"""The calls third-party clients of HBase's RPC make (issue 58), sent the same way to real
Apache HBase 2.6.1 (the session's ``real_hbase``) and to the embedded cluster, with the
same expectations (real HBase is the judge): mutations with inline values and the cells
they leave, a put framed as hbase-driver frames it, increments and appends with their
results, ``Get`` with ``existence_only``, the master's table flush (``FlushTable`` and the
``flush-table-proc`` procedure) and ``GetTableNames``. Requests are encoded by Google's
protobuf package (``tests/rpc/proto_reference.py``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.rpc.admin import NativeAdmin
from hbase_migrate.rpc.client import NativeClient
from hbase_migrate.rpc.connection import Connection
from hbase_migrate.rpc.errors import RemoteError
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType
from tests.minihbase.rpc_requests import (
    APPEND,
    DELETE,
    INCREMENT,
    KEPT,
    PUT,
    WRITES,
    driver_put,
    long_bytes,
    mutation,
    qv,
    specifier,
)
from tests.rpc.cells import flat
from tests.rpc.proto_reference import decode, encode
from tests.rpc.two_stacks import described

pytestmark = pytest.mark.integration
__all__ = ["described"]  # the module's stacks: the embedded cluster and real HBase

FAMILIES = (FamilyDescriptor(b"f", max_versions=10), FamilyDescriptor(b"g", max_versions=10))
DO_NOT_RETRY = "org.apache.hadoop.hbase.DoNotRetryIOException"


@pytest.fixture(scope="module")
def native(described: dict[str, Any]) -> Iterator[NativeClient]:
    with NativeClient(described["zookeeper"], described["znode_parent"],
                      max_backoff=1.0) as client:
        yield client


def region_of(described: dict[str, Any], native: NativeClient, table: str
              ) -> tuple[bytes, str, int]:
    """Create ``table`` (one region); its region's name, host and port."""
    with Thrift2Client(described["thrift2"]) as t2:
        t2.create_table(TableDescriptor(table, FAMILIES), [])
    region, = native.regions(table)
    return region.name, region.host, region.port


def mutate(conn: Connection, name: bytes, sent: dict[str, Any]) -> Any:
    reply = conn.call("Mutate", encode("MutateRequest", region=specifier(name), mutation=sent))
    return decode("MutateResponse", reply.response or b"")


def test_inline_mutations_leave_the_same_cells(described: dict[str, Any],
                                               native: NativeClient) -> None:
    """WRITES one Mutate each: processed, no result; a raw scan reads KEPT; a put cell
    without a value refused with HBase's message."""
    name, host, port = region_of(described, native, "third_inline")
    conn = Connection(host, port, codec="")
    try:
        for sent in WRITES:
            response = mutate(conn, name, sent)
            assert response.processed and not response.HasField("result")
        with pytest.raises(RemoteError) as caught:
            mutate(conn, name, mutation(PUT, b"b", {b"f": [qv(b"q")]}))
        assert caught.value.class_name == DO_NOT_RETRY
        assert "Missing required field: qualifier value" in caught.value.stack_trace
    finally:
        conn.close()
    assert flat(native.scan("third_inline", raw=True)) == KEPT


def test_a_put_framed_as_hbase_driver_frames_it(described: dict[str, Any],
                                                native: NativeClient) -> None:
    """A request length varint written as hbase-driver 1.1.1 writes it: read to the end of
    the call and served."""
    name, host, port = region_of(described, native, "third_driver")
    value = b"v" * 200
    reply = driver_put(host, port, name, value)
    assert reply.call_id == 66 and reply.exception is None
    assert flat(native.scan("third_driver")) == [Cell(b"row", b"f", b"q", 7, CellType.PUT,
                                                      value)]


def test_increments_appends_and_existence(described: dict[str, Any],
                                          native: NativeClient) -> None:
    """Counters as 8-byte longs, new cells by family and qualifier, ``max(old + 1, now)``,
    a fresh column's own timestamp, appends, a value that is not a long refused, no cells
    with ``setReturnResults(false)``; ``existence_only`` answered with a count of 0."""
    name, host, port = region_of(described, native, "third_deltas")
    conn = Connection(host, port, codec="")
    try:
        first = mutate(conn, name, mutation(INCREMENT, b"r", {
            b"g": [qv(b"n", long_bytes(1))],
            b"f": [qv(b"z", long_bytes(-3)), qv(b"n", long_bytes(5))]}))
        assert not first.HasField("processed")
        assert [(c.family, c.qualifier, c.value) for c in first.result.cell] == [
            (b"f", b"n", long_bytes(5)), (b"f", b"z", long_bytes(-3)),
            (b"g", b"n", long_bytes(1))]
        stamp = first.result.cell[0].timestamp
        second = mutate(conn, name, mutation(INCREMENT, b"r", {
            b"f": [qv(b"n", long_bytes(-7))]}))
        assert second.result.cell[0].value == long_bytes(-2)
        assert second.result.cell[0].timestamp >= stamp + 1
        own = mutate(conn, name, mutation(INCREMENT, b"t", {
            b"f": [qv(b"n", long_bytes(4), 1000)]}))
        assert [(c.timestamp, c.value) for c in own.result.cell] == [(1000, long_bytes(4))]
        mutate(conn, name, mutation(APPEND, b"a", {b"f": [qv(b"s", b"ab")]}))
        appended = mutate(conn, name, mutation(APPEND, b"a", {b"f": [qv(b"s", b"cd")]}))
        assert appended.result.cell[0].value == b"abcd"
        mutate(conn, name, mutation(PUT, b"x", {b"f": [qv(b"s", b"abc", 5)]}))
        with pytest.raises(RemoteError) as caught:
            mutate(conn, name, mutation(INCREMENT, b"x", {b"f": [qv(b"s", long_bytes(1))]}))
        assert caught.value.class_name == DO_NOT_RETRY
        assert "Field is not a long, it's 3 bytes wide" in caught.value.stack_trace
        quiet = mutation(INCREMENT, b"r", {b"f": [qv(b"n", long_bytes(10))]})
        quiet["attribute"] = [{"name": "_rr_", "value": b"\x00"}]
        silent = mutate(conn, name, quiet)
        assert silent.HasField("result") and not silent.result.cell
        for row, found in ((b"r", True), (b"nothing", False)):
            reply = conn.call("Get", encode("GetRequest", region=specifier(name),
                                            get={"row": row, "existence_only": True}))
            result = decode("GetResponse", reply.response or b"").result
            assert (result.exists, result.HasField("associated_cell_count"),
                    len(result.cell)) == (found, True, 0)
    finally:
        conn.close()
    newest = {(c.row, c.qualifier): c.value for c in reversed(flat(native.scan(
        "third_deltas")))}
    assert newest[(b"r", b"n")] == long_bytes(8) and newest[(b"a", b"s")] == b"abcd"


def test_atomic_region_actions(described: dict[str, Any], native: NativeClient) -> None:
    """RowMutations (an atomic RegionAction): a put, a delete and an increment applied
    together, processed, the increment's cells in the first result and the others empty;
    one family the table lacks fails the whole region action and applies nothing; a Get in
    it is refused."""
    name, host, port = region_of(described, native, "third_atomic")
    conn = Connection(host, port, codec="")

    def atomic(*mutations: dict[str, Any]) -> Any:
        reply = conn.call("Multi", encode("MultiRequest", regionAction=[{
            "region": specifier(name), "atomic": True,
            "action": [{"index": i, "mutation": m} for i, m in enumerate(mutations)]}]))
        result, = decode("MultiResponse", reply.response or b"").regionActionResult
        return result

    try:
        mutate(conn, name, mutation(PUT, b"k", {b"f": [qv(b"b", b"old", 5)]}))
        done = atomic(mutation(PUT, b"k", {b"f": [qv(b"a", b"new", 5)]}),
                      mutation(DELETE, b"k", {b"f": [qv(b"b", ts=5, delete_type=1)]}),
                      mutation(INCREMENT, b"k", {b"f": [qv(b"n", long_bytes(3))]}))
        assert done.processed and not done.HasField("exception")
        first, *rest = done.resultOrException
        assert [(c.qualifier, c.value) for c in first.result.cell] == [(b"n", long_bytes(3))]
        assert [(r.index, len(r.result.cell), r.HasField("exception")) for r in rest] == \
            [(1, 0, False), (2, 0, False)]
        failed = atomic(mutation(PUT, b"k2", {b"f": [qv(b"a", b"x", 5)]}),
                        mutation(PUT, b"k2", {b"nope": [qv(b"a", b"x", 5)]}))
        assert not failed.processed and not failed.resultOrException
        assert failed.exception.name.endswith("NoSuchColumnFamilyException")
        reply = conn.call("Multi", encode("MultiRequest", regionAction=[{
            "region": specifier(name), "atomic": True,
            "action": [{"index": 0, "get": {"row": b"k"}}]}]))
        refused, = decode("MultiResponse", reply.response or b"").regionActionResult
        assert refused.exception.name == DO_NOT_RETRY
    finally:
        conn.close()
    kept = [(c.row, c.qualifier, c.value) for c in flat(native.scan("third_atomic"))]
    assert kept == [(b"k", b"a", b"new"), (b"k", b"n", long_bytes(3))]


LESS, EQUAL, NOT_EQUAL, GREATER = 0, 2, 3, 5  # CompareType


def test_check_and_mutate(described: dict[str, Any], native: NativeClient) -> None:
    """checkAndPut, checkAndDelete and a conditional increment: processed says whether the
    condition held (the given value compared with the cell's, no value for a column that
    is missing or empty), and only then is the mutation applied; the condition's row must
    be the mutation's."""
    name, host, port = region_of(described, native, "third_cam")
    conn = Connection(host, port, codec="")

    def cam(op: int, value: bytes | None, sent: dict[str, Any], qualifier: bytes = b"q",
            row: bytes = b"c") -> Any:
        comparable = {"value": b"" if value is None else value}  # b"": no value
        condition = {"row": row, "family": b"f", "qualifier": qualifier, "compare_type": op,
                     "comparator": {"name": "org.apache.hadoop.hbase.filter.BinaryComparator",
                                    "serialized_comparator": encode(
                                        "BinaryComparator", comparable=comparable)}}
        reply = conn.call("Mutate", encode("MutateRequest", region=specifier(name),
                                           mutation=sent, condition=condition))
        return decode("MutateResponse", reply.response or b"")

    def put(qualifier: bytes, value: bytes, ts: int) -> dict[str, Any]:
        return mutation(PUT, b"c", {b"f": [qv(qualifier, value, ts)]})

    try:
        mutate(conn, name, put(b"q", b"5", 10))
        outcomes = [
            cam(EQUAL, b"5", put(b"r", b"eq", 20)).processed,
            cam(EQUAL, b"6", put(b"r", b"no", 21)).processed,
            cam(LESS, b"3", put(b"s", b"less", 22)).processed,
            cam(GREATER, b"3", put(b"s", b"greater", 23)).processed,
            cam(EQUAL, None, put(b"t", b"new", 24), qualifier=b"missing").processed,
            cam(EQUAL, None, put(b"t", b"exists", 25)).processed,
            cam(NOT_EQUAL, None, mutation(DELETE, b"c", {b"f": [qv(b"r", ts=20)]})).processed]
        assert outcomes == [True, False, True, False, True, False, True]
        counted = cam(EQUAL, b"5", mutation(INCREMENT, b"c", {b"f": [qv(b"n", long_bytes(1))]}))
        assert counted.processed
        assert [(c.qualifier, c.value) for c in counted.result.cell] == [(b"n", long_bytes(1))]
        with pytest.raises(RemoteError) as caught:
            cam(EQUAL, b"5", put(b"u", b"x", 26), row=b"other")
        assert caught.value.class_name == DO_NOT_RETRY
        assert "The row of the action <c> doesn't match the original one <other>" in \
            caught.value.stack_trace
    finally:
        conn.close()
    kept = [(c.qualifier, c.value) for c in flat(native.scan("third_cam"))]
    assert kept == [(b"n", long_bytes(1)), (b"q", b"5"), (b"s", b"less"), (b"t", b"new")]


def test_conditional_region_actions(described: dict[str, Any], native: NativeClient) -> None:
    """checkAndMutate in a Multi: one action, or a RowMutations of a put and an increment;
    processed says whether the condition held; each action answered by its position, the
    first with the increment's cells, the others by index alone; nothing done when the
    condition fails."""
    name, host, port = region_of(described, native, "third_cmulti")
    conn = Connection(host, port, codec="")

    def conditional(value: bytes, *mutations: dict[str, Any]) -> Any:
        condition = {"row": b"c", "family": b"f", "qualifier": b"q", "compare_type": EQUAL,
                     "comparator": {"name": "org.apache.hadoop.hbase.filter.BinaryComparator",
                                    "serialized_comparator": encode(
                                        "BinaryComparator", comparable={"value": value})}}
        reply = conn.call("Multi", encode("MultiRequest", regionAction=[{
            "region": specifier(name), "atomic": True, "condition": condition,
            "action": [{"index": i, "mutation": m} for i, m in enumerate(mutations)]}]))
        result, = decode("MultiResponse", reply.response or b"").regionActionResult
        return result

    def shape(result: Any) -> list[tuple[int, bool, list[bytes]]]:
        return [(r.index, r.HasField("result"), [c.value for c in r.result.cell])
                for r in result.resultOrException]

    try:
        mutate(conn, name, mutation(PUT, b"c", {b"f": [qv(b"q", b"5", 10)]}))
        one = conditional(b"5", mutation(PUT, b"c", {b"f": [qv(b"a", b"one", 11)]}))
        assert one.processed and shape(one) == [(0, False, [])]
        both = conditional(b"5", mutation(PUT, b"c", {b"f": [qv(b"b", b"two", 12)]}),
                           mutation(INCREMENT, b"c", {b"f": [qv(b"n", long_bytes(2))]}))
        assert both.processed and shape(both) == [(0, True, [long_bytes(2)]),
                                                  (1, False, [])]
        missed = conditional(b"6", mutation(PUT, b"c", {b"f": [qv(b"x", b"no", 13)]}),
                             mutation(INCREMENT, b"c", {b"f": [qv(b"n", long_bytes(5))]}))
        assert not missed.processed and shape(missed) == [(0, False, []), (1, False, [])]
    finally:
        conn.close()
    kept = [(c.qualifier, c.value) for c in flat(native.scan("third_cmulti"))]
    assert kept == [(b"a", b"one"), (b"b", b"two"), (b"n", long_bytes(2)), (b"q", b"5")]


def test_truncate_table(described: dict[str, Any], native: NativeClient) -> None:
    """truncateTable: an enabled table is refused in the call; a disabled one is emptied,
    its split points kept or not, and enabled again once the procedure is FINISHED."""
    with Thrift2Client(described["thrift2"]) as t2:
        t2.create_table(TableDescriptor("third_trunc", FAMILIES), [b"g", b"p"])
    native.write("third_trunc", [Cell(r, b"f", b"q", 1, CellType.PUT, r) for r in (b"a", b"z")])
    table = {"namespace": b"default", "qualifier": b"third_trunc"}
    with NativeAdmin(described["zookeeper"], described["znode_parent"]) as admin:
        active = admin.active_master()
        master = Connection(active.host, active.port, service="MasterService",
                            call_timeout=120)
        try:
            with pytest.raises(RemoteError) as caught:
                master.call("truncateTable", encode("TruncateTableRequest", tableName=table))
            assert caught.value.class_name == "org.apache.hadoop.hbase.TableNotDisabledException"
            for preserve, bounds in ((True, [(b"", b"g"), (b"g", b"p"), (b"p", b"")]),
                                     (False, [(b"", b"")])):
                admin.disable_table("third_trunc")
                done = decode("TruncateTableResponse", master.call("truncateTable", encode(
                    "TruncateTableRequest", tableName=table,
                    preserveSplits=preserve)).response or b"")
                assert not finished(master, done.proc_id).HasField("exception")
                assert admin.table_state("third_trunc") == "ENABLED"
                assert [(r.start, r.end) for r in native.regions("third_trunc")] == bounds
                assert flat(native.scan("third_trunc")) == []
        finally:
            master.close()


def finished(master: Connection, proc_id: int) -> Any:
    """The procedure's result once it is no longer RUNNING (at most a minute)."""
    deadline = time.monotonic() + 60
    while True:
        result = decode("GetProcedureResultResponse", master.call("getProcedureResult", encode(
            "GetProcedureResultRequest", proc_id=proc_id)).response or b"")
        if result.state != 1 or time.monotonic() > deadline:  # RUNNING
            break
        time.sleep(0.2)
    assert result.state == 2  # FINISHED
    return result


def test_master_flush_and_table_names(described: dict[str, Any],
                                      native: NativeClient) -> None:
    """FlushTable: a procedure FINISHED, failing as a procedure for a missing table;
    ``flush-table-proc`` run and done (not done for a table never flushed), an unknown
    procedure refused; GetTableNames by regex."""
    region_of(described, native, "third_flush")
    with NativeAdmin(described["zookeeper"], described["znode_parent"]) as admin:
        active = admin.active_master()
    master = Connection(active.host, active.port, service="MasterService", call_timeout=120)
    table = {"namespace": b"default", "qualifier": b"third_flush"}
    try:
        done = decode("FlushTableResponse", master.call("FlushTable", encode(
            "FlushTableRequest", table_name=table)).response or b"")
        assert not finished(master, done.proc_id).HasField("exception")
        missing = decode("FlushTableResponse", master.call("FlushTable", encode(
            "FlushTableRequest", table_name={"namespace": b"default",
                                             "qualifier": b"third_none"})).response or b"")
        failure = finished(master, missing.proc_id).exception.generic_exception
        assert (failure.class_name, failure.message) == \
            ("org.apache.hadoop.hbase.TableNotFoundException", "third_none")
        never = {"signature": "flush-table-proc", "instance": "third_never"}
        assert not decode("IsProcedureDoneResponse", master.call("IsProcedureDone", encode(
            "IsProcedureDoneRequest", procedure=never)).response or b"").done
        with pytest.raises(RemoteError) as caught:
            master.call("IsProcedureDone", encode("IsProcedureDoneRequest", procedure={
                "signature": "no-such-proc", "instance": "third_flush"}))
        assert caught.value.class_name == "java.io.IOException"
        proc = {"signature": "flush-table-proc", "instance": "third_flush"}
        sent = decode("ExecProcedureResponse", master.call("ExecProcedure", encode(
            "ExecProcedureRequest", procedure=proc)).response or b"")
        assert sent.expected_timeout == 300_000
        assert decode("IsProcedureDoneResponse", master.call("IsProcedureDone", encode(
            "IsProcedureDoneRequest", procedure=proc)).response or b"").done
        with pytest.raises(RemoteError) as caught:
            master.call("ExecProcedure", encode("ExecProcedureRequest", procedure={
                "signature": "no-such-proc", "instance": "third_flush"}))
        assert caught.value.class_name == DO_NOT_RETRY
        assert "The procedure is not registered: no-such-proc" in caught.value.stack_trace
        listed = decode("GetTableNamesResponse", master.call("GetTableNames", encode(
            "GetTableNamesRequest", regex="third_fl.*")).response or b"").table_names
        assert [(t.namespace, t.qualifier) for t in listed] == [(b"default", b"third_flush")]
    finally:
        master.close()
