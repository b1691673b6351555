"""Every call to the embedded cluster's RPC ports gets an answer (issue 58): each method of
HBase's ``ClientService``, ``MasterService`` and ``AdminService`` (the lists of the branch-2.6
.proto files, ``tests/rpc/hbase_services.py``), served or not, with any request; a request or
cell block that cannot be read is answered by its call id, as HBase's ``ServerRpcConnection``
does ("unable to read call parameter", DoNotRetryIOException), the connection serving on.
Frames are built by hand here, byte by byte."""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor
from hbase_migrate.rpc.client import NativeClient
from hbase_migrate.rpc.codec import (
    CONNECTION_CALL_ID,
    Reply,
    ReplyDecoder,
    connection_header,
    preamble,
)
from hbase_migrate.rpc.connection import Connection
from hbase_migrate.rpc.errors import RemoteError
from minihbase.server import MiniHBase
from tests.minihbase.rpc_requests import cluster_of
from tests.rpc.hbase_services import METHODS
from tests.rpc.proto_reference import encode

pytestmark = pytest.mark.integration

DO_NOT_RETRY = "org.apache.hadoop.hbase.DoNotRetryIOException"

# What docs/guides/stacks.md says the embedded cluster serves (written here by hand).
SERVED = {
    "ClientService": {"Get", "Scan", "Multi", "Mutate"},
    "AdminService": {"GetRegionInfo", "GetOnlineRegion", "FlushRegion", "CompactRegion",
                     "RollWALWriter"},
    "MasterService": {"IsMasterRunning", "ListNamespaceDescriptors", "CreateNamespace",
                      "GetTableDescriptors", "GetTableState", "CreateTable", "EnableTable",
                      "DisableTable", "DeleteTable", "getProcedureResult",
                      "GetClusterStatus", "ExecProcedure", "IsProcedureDone",
                      "GetTableNames", "FlushTable", "truncateTable", "AddColumn",
                      "ModifyColumn", "DeleteColumn", "ModifyTable", "MoveRegion",
                      "SplitRegion", "SetBalancerRunning", "IsBalancerEnabled",
                      "Balance", "GetSchemaAlterStatus"},
}


def address(mini: MiniHBase, service: str) -> tuple[str, int]:
    described = mini.describe()
    where = (described["master_rpc"] if service == "MasterService"
             else sorted(described["region_server_rpc"].values())[0])
    host, port = where.rsplit(":", 1)
    return host, int(port)


@pytest.fixture(scope="module", params=sorted(METHODS))
def service_conn(request: pytest.FixtureRequest, rpc_mini: MiniHBase
                 ) -> Iterator[tuple[str, Connection]]:
    service = str(request.param)
    conn = Connection(*address(rpc_mini, service), service=service, call_timeout=30)
    try:
        yield service, conn
    finally:
        conn.close()


def test_the_method_lists_are_hbases() -> None:
    """The lists hold what branch-2.6 declares (a few methods each client uses, by name)."""
    assert len(METHODS["ClientService"]) == 9 and "ExecService" in METHODS["ClientService"]
    assert {"ExecProcedure", "GetTableNames", "truncateTable", "getProcedureResult",
            "FlushMasterStore"} <= set(METHODS["MasterService"])
    assert {"GetStoreFile", "StopServer", "GetCachedFilesList"} <= set(METHODS["AdminService"])
    for service, served in SERVED.items():
        assert served <= set(METHODS[service]), service


def test_every_method_not_served_is_refused_by_name(
        service_conn: tuple[str, Connection]) -> None:
    """Each method the embedded cluster does not serve: DoNotRetryIOException naming
    ``Service.Method``, not to be retried; the same connection answers the next."""
    service, conn = service_conn
    refused = [m for m in METHODS[service] if m not in SERVED[service]]
    assert refused
    for method in refused:
        with pytest.raises(RemoteError) as caught:
            conn.call(method, b"")
        error = caught.value
        assert (error.class_name, error.do_not_retry) == (DO_NOT_RETRY, True), method
        assert f"{service}.{method} is not served" in error.detail, method
        assert "UnsupportedOperationException" in error.detail
        assert not conn.closed


def test_every_method_answers_a_request_it_cannot_read(
        service_conn: tuple[str, Connection]) -> None:
    """Every method of the service, served or not, given a request that is not its message
    (a field cut short): a reply, an exception for those that read it; a method that does
    not exist in HBase's protocol is refused by name too."""
    service, conn = service_conn
    garbage = b"\x0a\x7fcut"  # field 1, 127 bytes announced, 3 there
    for method in (*METHODS[service], "NoSuchMethod"):
        try:
            conn.call(method, garbage)
        except RemoteError as error:
            assert error.class_name.startswith(("org.apache.hadoop.hbase.", "java.")), method
            assert error.do_not_retry, method
        assert not conn.closed, method
    with pytest.raises(RemoteError) as caught:
        conn.call("NoSuchMethod", b"")
    assert f"{service}.NoSuchMethod is not served" in caught.value.detail


def frame(header: bytes, rest: bytes) -> bytes:
    """A call frame: int32 length, varint-delimited header (under 128 bytes), then ``rest``."""
    body = bytes([len(header)]) + header + rest
    return struct.pack(">i", len(body)) + body


def call_header(call_id: int, method: bytes, *, param: bool = True, block: int = 0) -> bytes:
    """A RequestHeader: 1 call_id, 3 method_name, 4 request_param, 5 cell_block_meta."""
    out = b"\x08" + bytes([call_id]) + b"\x1a" + bytes([len(method)]) + method
    if param:
        out += b"\x20\x01"
    if block:
        out += b"\x2a\x02\x08" + bytes([block])
    return out


def replies(sock: socket.socket, count: int) -> list[Reply]:
    decoder, got = ReplyDecoder(), list[Reply]()
    while len(got) < count:
        chunk = sock.recv(65536)
        if not chunk:
            break
        got += decoder.feed(chunk)
    return got


def test_calls_that_cannot_be_read_are_answered_by_id(rpc_mini: MiniHBase) -> None:
    """A cell block announced past the end of the call, a header without request_param:
    each answered with DoNotRetryIOException under its own call id; then a good call on the
    same connection is served. A RequestHeader that cannot be read has no id to answer:
    a connection-level FatalConnectionException (call id -1), then the connection closes."""
    with socket.create_connection(address(rpc_mini, "MasterService"), timeout=30) as sock:
        sock.sendall(preamble() + connection_header("MasterService", "u"))
        sock.sendall(frame(call_header(1, b"IsMasterRunning", block=50), b"\x00")
                     + frame(call_header(2, b"IsMasterRunning", param=False), b"\x00")
                     + frame(call_header(3, b"IsMasterRunning"), b"\x00"))
        got = {r.call_id: r for r in replies(sock, 3)}
        for bad in (1, 2):
            exception = got[bad].exception
            assert exception is not None and exception.class_name == DO_NOT_RETRY
            assert exception.do_not_retry and "MasterService.IsMasterRunning" in \
                exception.stack_trace
        assert got[3].exception is None and got[3].response is not None
        sock.sendall(frame(b"\x08", b"\x00"))  # a header cut inside its first field
        last, = replies(sock, 1)
        assert last.call_id == CONNECTION_CALL_ID and last.exception is not None
        assert last.exception.class_name.endswith("FatalConnectionException")
        assert sock.recv(1) == b""  # closed after it


def test_what_would_change_the_answer_is_refused_not_ignored(rpc_mini: MiniHBase) -> None:
    """A Get or Scan with a filter or a comparator the embedded cluster does not serve, a
    Multi with a condition of its own (deprecated): DoNotRetryIOException naming it, where
    ignoring it would give rows HBase would not. A plain Get still reads."""
    cluster, _ = cluster_of(rpc_mini)
    cluster.create_table("refusals", (FamilyDescriptor(b"f"),), [])
    with NativeClient(rpc_mini.zookeeper or "", rpc_mini.znode_parent) as native:
        region, = native.regions("refusals")
    spec = {"type": 1, "value": region.name}
    fuzzy = "org.apache.hadoop.hbase.filter.FuzzyRowFilter"
    bits = "org.apache.hadoop.hbase.filter.BitComparator"
    by_bits = {"name": "org.apache.hadoop.hbase.filter.ValueFilter",
               "serialized_filter": encode("ValueFilter", compare_filter={
                   "compare_op": 2, "comparator": {"name": bits}})}
    conn = Connection(region.host, region.port, call_timeout=30)
    try:
        for method, request, named in (
                ("Get", encode("GetRequest", region=spec,
                               get={"row": b"r", "filter": {"name": fuzzy}}),
                 f"the filter {fuzzy}"),
                ("Scan", encode("ScanRequest", region=spec, scan={"filter": {"name": fuzzy}},
                                number_of_rows=10), f"the filter {fuzzy}"),
                ("Scan", encode("ScanRequest", region=spec, scan={"filter": by_bits},
                                number_of_rows=10), f"the comparator {bits}"),
                ("Multi", encode("MultiRequest", condition={"row": b"r", "family": b"f"},
                                 regionAction=[{"region": spec, "action": [
                                     {"index": 0, "get": {"row": b"r"}}]}]),
                 "a condition of the whole request in a Multi")):
            with pytest.raises(RemoteError) as caught:
                conn.call(method, request)
            assert caught.value.class_name == DO_NOT_RETRY, named
            assert f"{named} is not served" in caught.value.detail
        reply = conn.call("Get", encode("GetRequest", region=spec, get={"row": b"r"}))
        assert reply.exception is None
    finally:
        conn.close()
