"""One connection, and the client's retry decision, against a scripted server: calls in
flight matched by id, a reply cut in half then the socket closed, a call never answered,
an exception class never seen before, garbage, a refused connection header."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import pytest

from hbase_migrate.cluster.retry import Kind, classify, known
from hbase_migrate.rpc.client import NativeCallError, NativeClient
from hbase_migrate.rpc.codec import (
    CONNECTION_CALL_ID,
    Call,
    RemoteException,
    encode_reply,
)
from hbase_migrate.rpc.connection import Connection
from hbase_migrate.rpc.errors import RemoteError, RpcConnectionError, RpcTimeoutError
from hbase_migrate.rpc.locate import Region
from hbase_migrate.rpc.messages import decode_get_request, get_response
from hbase_migrate.wal.model import Cell, CellType
from tests.rpc.scripted import ScriptedServer

CELL = Cell(b"r", b"f", b"q", 1, CellType.PUT, b"v")
NSRE = "org.apache.hadoop.hbase.NotServingRegionException"


def answer(call: Call, conn: socket.socket) -> None:
    conn.sendall(encode_reply(call.call_id, *get_response([CELL])))


def test_the_connection_opens_as_hbase_expects() -> None:
    with ScriptedServer(answer) as server:
        conn = Connection("127.0.0.1", server.port, user="alice")
        reply = conn.call("Get", b"\x0a\x00")
        conn.close()
    assert server.preambles == [b"HBas\x00\x50"]
    header = server.headers[0]
    assert b"\x0a\x07\x0a\x05alice" in header and b"\x12\x0dClientService" in header
    assert b"org.apache.hadoop.hbase.codec.KeyValueCodec" in header
    assert server.calls[0][:3] == (0, "Get", b"\x0a\x00")
    assert server.calls[0].timeout_ms == 60000
    assert reply.call_id == 0


def test_calls_in_flight_are_matched_by_id() -> None:
    """Eight callers at once; the server answers them in reverse order, each with its own
    row: every caller gets its own."""
    held: list[tuple[Call, socket.socket]] = []
    lock = threading.Lock()

    def reverse(call: Call, conn: socket.socket) -> None:
        with lock:
            held.append((call, conn))
            if len(held) < 8:
                return
            for c, k in reversed(held):
                row = decode_get_request(c.request)[1].row
                k.sendall(encode_reply(c.call_id, *get_response([CELL._replace(row=row)])))

    from hbase_migrate.rpc.messages import Get, decode_get_response, get_request

    with ScriptedServer(reverse) as server:
        conn = Connection("127.0.0.1", server.port)
        got: dict[bytes, bytes] = {}

        def one(row: bytes) -> None:
            reply = conn.call("Get", get_request(b"region", Get(row)), timeout=10)
            got[row] = decode_get_response(reply.response or b"", reply.cell_block)[0].row

        threads = [threading.Thread(target=one, args=(b"row%d" % i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        conn.close()
    assert got == {b"row%d" % i: b"row%d" % i for i in range(8)}


def test_a_reply_cut_in_half_then_closed_fails_every_pending_call() -> None:
    calls: list[Call] = []

    def cut(call: Call, conn: socket.socket) -> None:
        calls.append(call)
        if len(calls) == 2:
            frame = encode_reply(call.call_id, *get_response([CELL]))
            conn.sendall(frame[: len(frame) // 2])
            time.sleep(0.1)
            conn.shutdown(socket.SHUT_RDWR)
            conn.close()

    with ScriptedServer(cut) as server:
        conn = Connection("127.0.0.1", server.port)
        errors: list[BaseException] = []

        def one() -> None:
            try:
                conn.call("Get", b"", timeout=10)
            except RpcConnectionError as exc:
                errors.append(exc)

        threads = [threading.Thread(target=one) for _ in range(2)]
        for t in threads:
            t.start()
            time.sleep(0.05)
        for t in threads:
            t.join()
        assert conn.closed
        with pytest.raises(RpcConnectionError, match="not sent: the connection is closed"):
            conn.call("Get", b"")
    messages = sorted(str(e) for e in errors)
    server_name = f"127.0.0.1:{server.port}"
    assert messages == [f"server {server_name}: Get (call id {i}) failed: the server closed "
                        "the connection" for i in (0, 1)]


def test_a_call_never_answered_times_out_alone() -> None:
    """Call 0 is never answered in time; its late reply comes after call 1's question and is
    skipped; call 1 gets its own answer on the same connection."""
    def late(call: Call, conn: socket.socket) -> None:
        if call.call_id == 1:
            conn.sendall(encode_reply(0, *get_response([CELL._replace(row=b"late")])))
            answer(call, conn)

    with ScriptedServer(late) as server:
        conn = Connection("127.0.0.1", server.port)
        began = time.monotonic()
        with pytest.raises(RpcTimeoutError, match=r"Get \(call id 0\) got no reply within "
                           r"0\.3 s") as info:
            conn.call("Get", b"", timeout=0.3)
        assert 0.3 <= time.monotonic() - began < 2
        assert info.value.server == f"127.0.0.1:{server.port}"
        reply = conn.call("Get", b"", timeout=5)
        assert reply.call_id == 1 and not conn.closed
        conn.close()


def test_an_exception_class_never_seen_before() -> None:
    odd = "com.example.hbase.BrandNewException"

    def raise_odd(call: Call, conn: socket.socket) -> None:
        conn.sendall(encode_reply(call.call_id, exception=RemoteException(
            odd, f"{odd}: something new\n\tat somewhere")))

    with ScriptedServer(raise_odd) as server:
        conn = Connection("127.0.0.1", server.port)
        with pytest.raises(RemoteError) as info:
            conn.call("Get", b"")
        conn.close()
    exc = info.value
    assert exc.class_name == odd and exc.kind is Kind.RETRY and not exc.known and exc.retryable
    assert str(exc) == (f"server 127.0.0.1:{server.port}, Get (call id 0): {odd} (an "
                        f"exception class unknown to this client): {odd}: something new")


def test_garbage_from_the_server_names_offset_and_call() -> None:
    """Call 1 is answered with a header whose field 3 claims 5 bytes where 2 are left: the
    call fails naming the stream offset and call id 1; the connection is closed."""
    first = encode_reply(0, *get_response([CELL]))

    def garbage(call: Call, conn: socket.socket) -> None:
        if call.call_id == 0:
            conn.sendall(first)
        else:
            conn.sendall(bytes.fromhex("00000005" "04" "0801" "1a05"))

    with ScriptedServer(garbage) as server:
        conn = Connection("127.0.0.1", server.port)
        conn.call("Get", b"")
        with pytest.raises(RpcConnectionError, match=rf"server 127.0.0.1:{server.port}: Get "
                           rf"\(call id 1\) failed: .*reply stream byte offset "
                           rf"{len(first) + 5} \(call id 1\): malformed reply"):
            conn.call("Get", b"", timeout=5)
        assert conn.closed


def test_a_refused_connection_header_fails_calls_with_the_class() -> None:
    def refuse(call: Call, conn: socket.socket) -> None:
        conn.sendall(encode_reply(CONNECTION_CALL_ID, exception=RemoteException(
            "org.apache.hadoop.hbase.ipc.FatalConnectionException", "unknown service",
            do_not_retry=True)))

    with ScriptedServer(refuse) as server:
        conn = Connection("127.0.0.1", server.port)
        with pytest.raises(RemoteError, match="FatalConnectionException") as info:
            conn.call("Get", b"")
    assert info.value.kind is Kind.NEVER and conn.closed


def test_a_call_after_the_header_was_refused_meets_the_refusal() -> None:
    """HBase refuses a header (no credentials) at once and hangs up: a call made after the
    refusal arrived gets the server's exception, as a call in flight does, not a bare
    "connection closed"."""
    refusal = encode_reply(CONNECTION_CALL_ID, exception=RemoteException(
        "org.apache.hadoop.hbase.security.AccessDeniedException",
        "Authentication is required", do_not_retry=True))
    with ScriptedServer(answer, greeting=refusal) as server:
        conn = Connection("127.0.0.1", server.port)
        deadline = time.monotonic() + 10
        while not conn.closed and time.monotonic() < deadline:
            time.sleep(0.01)
        assert conn.closed
        with pytest.raises(RemoteError, match="AccessDeniedException") as info:
            conn.call("IsMasterRunning", b"")
    assert info.value.kind is Kind.NEVER and not server.calls
    assert "IsMasterRunning" in str(info.value)


def test_classification_table() -> None:
    assert classify(NSRE) is Kind.RELOCATE
    assert classify("org.apache.hadoop.hbase.exceptions.RegionMovedException") is Kind.RELOCATE
    assert classify("org.apache.hadoop.hbase.RegionTooBusyException") is Kind.RETRY
    assert classify("org.apache.hadoop.hbase.TableNotFoundException") is Kind.NEVER
    assert classify("org.apache.hadoop.hbase.UnknownScannerException") is Kind.SCANNER
    assert classify("java.io.IOException") is Kind.RETRY and not known("java.io.IOException")
    assert classify("java.io.IOException", do_not_retry=True) is Kind.NEVER
    assert not RemoteError("java.io.IOException", do_not_retry=True).retryable


class OneRegion:
    """A locator stand-in: one region on the scripted server; counts invalidations."""

    def __init__(self, port: int) -> None:
        self.region = Region("t", b"", b"", 1, b"t,,1.0123456789abcdef0123456789abcdef.",
                             "127.0.0.1", port, 5)
        self.invalidated = 0

    def locate(self, table: str, row: bytes, **_: Any) -> Region:
        return self.region

    def invalidate(self, table: str, region: Region | None = None) -> None:
        self.invalidated += 1


def client_on(server: ScriptedServer, **kw: Any) -> tuple[NativeClient, OneRegion]:
    kw.setdefault("call_timeout", 5)
    locator = OneRegion(server.port)
    return NativeClient("127.0.0.1:1", max_backoff=0.01, locator=locator, **kw), locator


def test_the_client_relocates_then_succeeds() -> None:
    def moved_once(call: Call, conn: socket.socket) -> None:
        if call.call_id == 0:
            conn.sendall(encode_reply(0, exception=RemoteException(NSRE, "not here")))
        else:
            answer(call, conn)

    with ScriptedServer(moved_once) as server:
        client, locator = client_on(server)
        assert client.get("t", b"r") == [CELL]
        client.close()
    assert locator.invalidated == 1 and client.retried[Kind.RELOCATE] == 1


def test_the_client_gives_up_in_one_line() -> None:
    odd = "com.example.hbase.BrandNewException"

    def always(call: Call, conn: socket.socket) -> None:
        conn.sendall(encode_reply(call.call_id, exception=RemoteException(odd, "again")))

    with ScriptedServer(always) as server:
        client, _ = client_on(server, attempts=3)
        with pytest.raises(NativeCallError) as info:
            client.get("t", b"r")
        client.close()
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"table t, region 0123456789abcdef0123456789abcdef (start b''), "
                              f"server 127.0.0.1:{server.port}, call Get row b'r': gave up "
                              "after 3 attempts: ")
    assert "unknown to this client" in message


def test_a_never_retry_class_fails_at_once() -> None:
    def no_family(call: Call, conn: socket.socket) -> None:
        conn.sendall(encode_reply(call.call_id, exception=RemoteException(
            "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException", "nope",
            do_not_retry=True)))

    with ScriptedServer(no_family) as server:
        client, _ = client_on(server)
        with pytest.raises(NativeCallError, match="NoSuchColumnFamilyException: nope"):
            client.get("t", b"r")
        client.close()
    assert len(server.calls) == 1


def test_a_timed_out_call_is_retried_on_the_same_connection() -> None:
    def slow_first(call: Call, conn: socket.socket) -> None:
        if call.call_id != 0:
            answer(call, conn)

    with ScriptedServer(slow_first) as server:
        client, _ = client_on(server, call_timeout=0.3)
        assert client.get("t", b"r") == [CELL]
        client.close()
    assert len(server.connections) == 1 and client.retried[Kind.RELOCATE] == 1


def test_a_malformed_cell_block_fails_at_once_naming_the_call() -> None:
    def short_block(call: Call, conn: socket.socket) -> None:
        response, block = get_response([CELL, CELL])
        conn.sendall(encode_reply(call.call_id, response, block[:-30]))

    with ScriptedServer(short_block) as server:
        client, _ = client_on(server)
        with pytest.raises(NativeCallError, match=r"call Get row b'r': malformed reply: cell "
                           "block of 26 bytes holds fewer than 2 cells from offset 0"):
            client.get("t", b"r")
        client.close()
    assert len(server.calls) == 1
