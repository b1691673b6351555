"""``Mutate`` increments and appends, and ``Get`` with ``existence_only``, on the embedded
cluster as HBase 2.6's ``HRegion`` and ``RSRpcServices`` serve them (issue 58): counters
are 8-byte big-endian longs, a new cell's timestamp is ``max(old + 1, now)``, the new cells
come back in the response (inline, or in the cell block to a client that named a codec),
none with ``setReturnResults(false)``. Requests are encoded by Google's protobuf package
(``tests/rpc/proto_reference.py``), cell blocks written out here byte by byte; the store
is the judge of what was kept."""

from __future__ import annotations

import struct
from typing import Any

import pytest

from hbase_migrate.rpc.client import NativeClient
from hbase_migrate.rpc.codec import KEYVALUE_CODEC
from hbase_migrate.rpc.connection import Connection
from hbase_migrate.rpc.errors import RemoteError
from hbase_migrate.wal.model import CellType
from minihbase.server import MiniHBase
from tests.minihbase.rpc_requests import (
    APPEND,
    INCREMENT,
    PUT,
    cluster_of,
    create,
    long_bytes,
    mutation,
    qv,
    region_conn,
    specifier,
    stored,
)
from tests.rpc.proto_reference import decode, encode

pytestmark = pytest.mark.integration


def keyvalue(row: bytes, family: bytes, qualifier: bytes, ts: int, value: bytes) -> bytes:
    """One put cell of a KeyValueCodec cell block: int32 length, then the KeyValue."""
    key = (struct.pack(">H", len(row)) + row + bytes([len(family)]) + family + qualifier
           + struct.pack(">qB", ts, CellType.PUT))
    kv = struct.pack(">ii", len(key), len(value)) + key + value
    return struct.pack(">i", len(kv)) + kv


def call(conn: Connection, name: bytes, sent: dict[str, Any]) -> tuple[Any, bytes]:
    reply = conn.call("Mutate", encode("MutateRequest", region=specifier(name), mutation=sent))
    return decode("MutateResponse", reply.response or b""), reply.cell_block


def cells_of(response: Any) -> list[tuple[bytes, bytes, int, bytes]]:
    return [(c.family, c.qualifier, c.timestamp, c.value) for c in response.result.cell]


def test_increments_and_appends(rpc_mini: MiniHBase, native: NativeClient) -> None:
    create(rpc_mini, "deltas", [])
    name, conn = region_conn(native, "deltas")
    cluster, _ = cluster_of(rpc_mini)
    try:
        before = cluster.clock()
        first, _ = call(conn, name, mutation(INCREMENT, b"r", {
            b"g": [qv(b"n", long_bytes(1))],
            b"f": [qv(b"z", long_bytes(-3)), qv(b"n", long_bytes(5))]}))
        assert not first.HasField("processed")
        got = cells_of(first)  # by family, then qualifier
        assert [(f, q, v) for f, q, _, v in got] == [
            (b"f", b"n", long_bytes(5)), (b"f", b"z", long_bytes(-3)),
            (b"g", b"n", long_bytes(1))]
        stamp = got[0][2]
        assert before <= stamp <= cluster.clock() and {t for _, _, t, _ in got} == {stamp}
        second, _ = call(conn, name, mutation(INCREMENT, b"r", {
            b"f": [qv(b"n", long_bytes(-7))]}))
        (_, _, later, value), = cells_of(second)
        assert value == long_bytes(-2) and later >= stamp + 1
        wrapped, _ = call(conn, name, mutation(INCREMENT, b"w", {
            b"f": [qv(b"n", long_bytes(2**63 - 1))]}))
        wrapped, _ = call(conn, name, mutation(INCREMENT, b"w", {
            b"f": [qv(b"n", long_bytes(1))]}))
        assert cells_of(wrapped)[0][3] == long_bytes(-2**63)  # Java's long arithmetic
        # a fresh column keeps the delta's own timestamp; the next one moves past now
        own, _ = call(conn, name, mutation(INCREMENT, b"t", {
            b"f": [qv(b"n", long_bytes(4), 1000)]}))
        assert cells_of(own) == [(b"f", b"n", 1000, long_bytes(4))]
        appended, _ = call(conn, name, mutation(APPEND, b"a", {b"f": [qv(b"s", b"ab")]}))
        appended, _ = call(conn, name, mutation(APPEND, b"a", {b"f": [qv(b"s", b"cd")]}))
        assert cells_of(appended)[0][3] == b"abcd"
        conn.call("Mutate", encode("MutateRequest", region=specifier(name), mutation=mutation(
            PUT, b"x", {b"f": [qv(b"s", b"abc", 5)]})))
        with pytest.raises(RemoteError) as caught:
            call(conn, name, mutation(INCREMENT, b"x", {b"f": [qv(b"s", long_bytes(1))]}))
        assert caught.value.class_name == "org.apache.hadoop.hbase.DoNotRetryIOException"
        assert "Field is not a long, it's 3 bytes wide" in caught.value.detail
        quiet = mutation(INCREMENT, b"r", {b"f": [qv(b"n", long_bytes(10))]})
        quiet["attribute"] = [{"name": "_rr_", "value": b"\x00"}]  # setReturnResults(false)
        silent, _ = call(conn, name, quiet)
        assert silent.HasField("result") and not silent.result.cell
    finally:
        conn.close()
    kept = {(c.row, c.family, c.qualifier): c for c in reversed(stored(rpc_mini, "deltas"))
            if c.type == CellType.PUT}  # the newest of each column
    assert kept[(b"r", b"f", b"n")].value == long_bytes(8)
    assert kept[(b"t", b"f", b"n")].timestamp == 1000
    assert kept[(b"a", b"f", b"s")].value == b"abcd"
    assert kept[(b"x", b"f", b"s")].value == b"abc"


def test_delta_cells_in_the_cell_block_and_in_a_multi(rpc_mini: MiniHBase,
                                                      native: NativeClient) -> None:
    """A client that named a codec gets an increment's cells in the cell block (the Result
    counts them); a Multi's increment is answered in its own ResultOrException."""
    create(rpc_mini, "deltas_block", [])
    name, conn = region_conn(native, "deltas_block", KEYVALUE_CODEC)
    try:
        response, block = call(conn, name, mutation(INCREMENT, b"r", {
            b"f": [qv(b"n", long_bytes(3))]}))
        assert response.result.associated_cell_count == 1 and not response.result.cell
        cell, = [c for c in stored(rpc_mini, "deltas_block")]
        assert block == keyvalue(b"r", b"f", b"n", cell.timestamp, long_bytes(3))
    finally:
        conn.close()
    name, conn = region_conn(native, "deltas_block")
    try:
        reply = conn.call("Multi", encode("MultiRequest", regionAction=[{
            "region": specifier(name), "action": [
                {"index": 0, "mutation": mutation(PUT, b"m", {b"f": [qv(b"q", b"v", 9)]})},
                {"index": 1, "mutation": mutation(INCREMENT, b"r", {
                    b"f": [qv(b"n", long_bytes(4))]})}]}]))
        result, = decode("MultiResponse", reply.response or b"").regionActionResult
        put, increment = result.resultOrException
        assert (put.index, put.HasField("exception"), len(put.result.cell)) == (0, False, 0)
        assert [(c.qualifier, c.value) for c in increment.result.cell] == \
            [(b"n", long_bytes(7))]
    finally:
        conn.close()


def test_get_existence_only(rpc_mini: MiniHBase, native: NativeClient) -> None:
    """``Table.exists``: a Result of ``exists`` and no cells (count 0), with or without
    a codec."""
    create(rpc_mini, "exists", [])
    for codec in ("", KEYVALUE_CODEC):
        name, conn = region_conn(native, "exists", codec)
        try:
            conn.call("Mutate", encode("MutateRequest", region=specifier(name),
                                       mutation=mutation(PUT, b"r", {b"f": [qv(b"q", b"v")]})))
            for row, found in ((b"r", True), (b"nothing", False)):
                reply = conn.call("Get", encode("GetRequest", region=specifier(name),
                                                get={"row": row, "existence_only": True}))
                result = decode("GetResponse", reply.response or b"").result
                assert (result.exists, result.HasField("associated_cell_count"),
                        len(result.cell), reply.cell_block) == (found, True, 0, b"")
        finally:
            conn.close()
