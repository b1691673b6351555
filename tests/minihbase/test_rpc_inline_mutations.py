"""Mutations that carry their own values (``MutationProto.column_value``, no cell block), as
third-party clients such as hbase-driver send them, served by the embedded cluster as
HBase's ``ProtobufUtil.toPut``/``toDelete`` read them (issue 58): a put's cell takes its
own timestamp or the mutation's, a delete's its own or the latest (never the mutation's), a
delete naming no column removes the row at the mutation's timestamp. Requests are encoded
by Google's protobuf package from shapes written from ``Client.proto``
(``tests/rpc/proto_reference.py``); what the store keeps is the judge."""

from __future__ import annotations

import pytest

from hbase_migrate.rpc.client import NativeClient
from hbase_migrate.rpc.errors import RemoteError
from hbase_migrate.wal.model import Cell
from minihbase.server import MiniHBase
from tests.minihbase.rpc_requests import (
    KEPT,
    PUT,
    WRITES,
    P,
    cluster_of,
    create,
    driver_put,
    mutation,
    qv,
    region_conn,
    specifier,
    stored,
)
from tests.rpc.proto_reference import decode, encode

pytestmark = pytest.mark.integration


def test_inline_mutate_as_hbase_reads_it(rpc_mini: MiniHBase, native: NativeClient) -> None:
    """Each mutation of WRITES in its own Mutate: processed, and the store keeps KEPT; a put
    naming no timestamp at all gets the server's time; a put cell without a value is
    refused with HBase's message."""
    create(rpc_mini, "inl", [])
    name, conn = region_conn(native, "inl")
    cluster, _ = cluster_of(rpc_mini)
    try:
        for sent in WRITES:
            reply = conn.call("Mutate", encode("MutateRequest", region=specifier(name),
                                               mutation=sent))
            response = decode("MutateResponse", reply.response or b"")
            assert response.processed and not response.HasField("result")
        assert stored(rpc_mini, "inl") == KEPT
        before = cluster.clock()
        conn.call("Mutate", encode("MutateRequest", region=specifier(name), mutation=mutation(
            PUT, b"b", {b"f": [qv(b"q", b"now")]})))
        cell, = [c for c in stored(rpc_mini, "inl") if c.row == b"b"]
        assert before <= cell.timestamp <= cluster.clock() and cell.value == b"now"
        with pytest.raises(RemoteError) as caught:
            conn.call("Mutate", encode("MutateRequest", region=specifier(name),
                                       mutation=mutation(PUT, b"b", {b"f": [qv(b"q")]})))
        assert caught.value.class_name == "org.apache.hadoop.hbase.DoNotRetryIOException"
        assert "Missing required field: qualifier value" in caught.value.detail
    finally:
        conn.close()


def test_inline_multi_as_hbase_reads_it(rpc_mini: MiniHBase, native: NativeClient) -> None:
    """WRITES as one Multi per mutation kind run (puts, then deletes): every action done,
    the same cells kept as by Mutate."""
    create(rpc_mini, "inl_multi", [])
    name, conn = region_conn(native, "inl_multi")
    try:
        for batch in (WRITES[:4], WRITES[4:]):
            reply = conn.call("Multi", encode("MultiRequest", regionAction=[{
                "region": specifier(name),
                "action": [{"index": i, "mutation": m} for i, m in enumerate(batch)]}]))
            result, = decode("MultiResponse", reply.response or b"").regionActionResult
            assert [(r.index, r.HasField("exception")) for r in result.resultOrException] == \
                [(i, False) for i in range(len(batch))]
        assert stored(rpc_mini, "inl_multi") == KEPT
    finally:
        conn.close()


def test_a_put_framed_as_hbase_driver_frames_it(rpc_mini: MiniHBase,
                                                native: NativeClient) -> None:
    """hbase-driver's Table.put: no codec in its ConnectionHeader, values inline, a request
    of 128 bytes or more whose length varint it mis-encodes. HBase reads the request up to
    the end of the call and serves it; so does the embedded cluster (it once never
    answered)."""
    create(rpc_mini, "inl_driver", [])
    region, = native.regions("inl_driver")
    value = b"v" * 200
    reply = driver_put(region.host, region.port, region.name, value)
    assert reply.call_id == 66 and reply.exception is None
    assert decode("MutateResponse", reply.response or b"").processed
    assert stored(rpc_mini, "inl_driver") == [Cell(b"row", b"f", b"q", 7, P, value)]


