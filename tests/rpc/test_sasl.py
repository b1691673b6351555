"""SASL on an RPC connection against a scripted server speaking HBase's SASL framing
(``rpc.sasl``): negotiation, the connection header and calls wrapped under integrity and
privacy and plain under authentication, a refused negotiation, a server without security,
wrapped tokens cut off or malformed, and the QOP choice. The mechanism is a reversible
toy (its tokens are the framing's payload; real GSSAPI runs in ``test_sasl_real``)."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.errors import ConfigError
from hbase_migrate.rpc.codec import AUTH_KERBEROS, decode_call, encode_reply
from hbase_migrate.rpc.connection import Connection
from hbase_migrate.rpc.errors import RpcConnectionError, RpcTimeoutError
from hbase_migrate.rpc.messages import get_response
from hbase_migrate.rpc.sasl import SaslError, choose_qop, protection_bits
from hbase_migrate.wal.model import Cell, CellType
from tests.rpc.scripted import read_exactly

USER, TARGET = "migrate@TEST.REALM", "hbase/localhost@TEST.REALM"
CELL = Cell(b"r", b"f", b"q", 1, CellType.PUT, b"v")
INT = struct.Struct(">i")


def scramble(data: bytes) -> bytes:
    return bytes(b ^ 0x5A for b in data)


def toy_wrap(data: bytes) -> bytes:
    return b"W" + scramble(data)


def toy_unwrap(token: bytes) -> bytes:
    if token[:1] != b"W":
        raise ValueError("not a wrapped token")
    return scramble(token[1:])


class Toy:
    """The GSSAPI exchange's shape: a first token, an empty one once the context is made,
    then the answer to the server's wrapped security layer offer."""

    user, target = USER, TARGET
    name, auth, user_info, hint = "GSSAPI", AUTH_KERBEROS, True, ""

    def __init__(self, protection: str) -> None:
        self.wanted = protection_bits(protection)
        self.complete, self.qop, self.max_send, self.steps = False, 1, 0, 0

    def step(self, challenge: bytes | None) -> bytes:
        self.steps += 1
        if challenge is None:
            return b"first"
        if challenge == b"made":
            return b""
        self.qop, self.max_send, answer = choose_qop(toy_unwrap(challenge), self.wanted)
        self.complete = True
        return toy_wrap(answer)

    def wrap(self, data: bytes) -> bytes:
        return toy_wrap(data)

    def unwrap(self, token: bytes) -> bytes:
        return toy_unwrap(token)


def token(data: bytes) -> bytes:
    return INT.pack(len(data)) + data


def challenge(data: bytes) -> bytes:
    return INT.pack(0) + token(data)


def java_string(text: str) -> bytes:
    return token(text.encode())


Script = Callable[[socket.socket, dict[str, Any]], None]


class SaslServer:
    """Reads the preamble and the client's tokens; ``script`` answers from there on (the
    dict collects what it saw)."""

    def __init__(self, script: Script) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.seen: dict[str, Any] = {"tokens": []}
        self.script = script
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            try:
                self.seen["preamble"] = read_exactly(conn, 6)
                self.script(conn, self.seen)
                time.sleep(5)  # a script that returns keeps the socket open, silent
            except (EOFError, OSError):
                pass

    def read_token(self, conn: socket.socket) -> bytes:
        (size,) = INT.unpack(read_exactly(conn, 4))
        data = read_exactly(conn, size)
        self.seen["tokens"].append(data)
        return data

    def connect(self, protection: str = "privacy", **kw: Any) -> Connection:
        return Connection("127.0.0.1", self.port, mechanism=lambda host: Toy(protection),
                          **kw)

    def close(self) -> None:
        self.listener.close()


def negotiated(server: SaslServer, conn: socket.socket, offer: int) -> int:
    """The server's side of the exchange; the QOP bit the client chose."""
    assert server.read_token(conn) == b"first"
    conn.sendall(challenge(b"made"))
    assert server.read_token(conn) == b""
    conn.sendall(challenge(toy_wrap(struct.pack(">I", offer << 24 | 1 << 16))))
    (word,) = struct.unpack(">I", toy_unwrap(server.read_token(conn)))
    return int(word >> 24)


class WrappedStream:
    """The server's reading of a wrapped client stream."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn, self.buf = conn, b""

    def read(self, n: int) -> bytes:
        while len(self.buf) < n:
            (size,) = INT.unpack(read_exactly(self.conn, 4))
            self.buf += toy_unwrap(read_exactly(self.conn, size))
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def frame(self) -> bytes:
        (size,) = INT.unpack(self.read(4))
        return self.read(size)


def started(script_for: Callable[[list[SaslServer]], Script]) -> SaslServer:
    holder: list[SaslServer] = []
    server = SaslServer(script_for(holder))
    holder.append(server)
    return server


def wrapped_server(offer: int) -> Callable[[list[SaslServer]], Script]:
    def make(holder: list[SaslServer]) -> Script:
        def script(conn: socket.socket, seen: dict[str, Any]) -> None:
            seen["qop"] = negotiated(holder[0], conn, offer)
            stream = WrappedStream(conn)
            seen["header"] = stream.frame()
            for _ in range(2):
                call = decode_call(stream.frame())
                seen.setdefault("calls", []).append(call.method)
                reply = encode_reply(call.call_id, *get_response([CELL]))
                half = len(reply) // 2
                conn.sendall(token(toy_wrap(reply[:half])) + token(toy_wrap(reply[half:])))
        return script
    return make


@pytest.mark.parametrize(("protection", "offer", "chosen"), [
    ("privacy", 1 | 2 | 4, 4), ("integrity", 2 | 4, 2), ("privacy,integrity", 1 | 2, 2)])
def test_wrapped_connection_header_and_calls(protection: str, offer: int,
                                             chosen: int) -> None:
    server = started(wrapped_server(offer))
    conn = server.connect(protection)
    try:
        replies = [conn.call("Get", b"\x0a\x00"), conn.call("Get", b"\x0a\x00")]
        observed = conn.observed
    finally:
        conn.close()
        server.close()
    assert server.seen["preamble"] == b"HBas\x00\x51"  # auth byte KERBEROS (81)
    assert server.seen["qop"] == chosen
    # What the connection says it runs under: the QOP the server was answered with.
    assert observed == {"tls": None, "sasl": "GSSAPI", "protection": {
        1: "authentication", 2: "integrity", 4: "privacy"}[server.seen["qop"]]}
    header = server.seen["header"]
    user_info = b"\x0a" + bytes([len(USER)]) + USER.encode()  # effective_user: the principal
    assert b"\x0a" + bytes([len(user_info)]) + user_info in header
    assert b"ClientService" in header
    assert server.seen["calls"] == ["Get", "Get"]
    assert [r.call_id for r in replies] == [0, 1] and all(r.cell_block for r in replies)


def test_authentication_leaves_frames_plain() -> None:
    def make(holder: list[SaslServer]) -> Script:
        def script(conn: socket.socket, seen: dict[str, Any]) -> None:
            seen["qop"] = negotiated(holder[0], conn, 1)
            (size,) = INT.unpack(read_exactly(conn, 4))
            seen["header"] = read_exactly(conn, size)
            (size,) = INT.unpack(read_exactly(conn, 4))
            call = decode_call(read_exactly(conn, size))
            conn.sendall(encode_reply(call.call_id, *get_response([CELL])))
        return script

    server = started(make)
    conn = server.connect("authentication")
    try:
        assert conn.call("Get", b"\x0a\x00").call_id == 0
    finally:
        conn.close()
        server.close()
    assert server.seen["qop"] == 1 and b"ClientService" in server.seen["header"]


def refusing(holder: list[SaslServer]) -> Script:
    def script(conn: socket.socket, seen: dict[str, Any]) -> None:
        holder[0].read_token(conn)
        conn.sendall(INT.pack(1) + java_string("javax.security.sasl.SaslException")
                     + java_string("GSS initiate failed\n\tcaused by: checksum failed"))
    return script


def test_a_refused_negotiation_is_one_line_naming_server_principals_and_class() -> None:
    server = started(refusing)
    with pytest.raises(SaslError) as refused:
        server.connect(connect_timeout=5)
    server.close()
    message = str(refused.value)
    assert message == (f"server 127.0.0.1:{server.port}: SASL GSSAPI as {USER} to {TARGET} "
                       "refused: javax.security.sasl.SaslException: GSS initiate failed "
                       "caused by: checksum failed")


@pytest.mark.parametrize("protection", ["privacy", "authentication"])
def test_a_refusal_of_the_last_token_fails_the_first_call(protection: str) -> None:
    """The server refuses the client's answer to its offer (the client, done, has sent its
    header and a call): the call fails naming the server's error, not as garbage."""
    error = INT.pack(1) + java_string("org.apache.hadoop.security.AccessControlException") \
        + java_string("Unauthorized connection for super-user")

    def make(holder: list[SaslServer]) -> Script:
        def script(conn: socket.socket, seen: dict[str, Any]) -> None:
            negotiated(holder[0], conn, 1 | 4)
            conn.sendall(error[:7])  # in two pieces
            time.sleep(0.1)
            conn.sendall(error[7:])
        return script

    server = started(make)
    conn = server.connect(protection, call_timeout=20)
    with pytest.raises(SaslError) as refused:
        conn.call("Get", b"\x0a\x00")
    conn.close()
    server.close()
    assert str(refused.value).endswith(
        f"SASL GSSAPI as {USER} to {TARGET} refused: org.apache.hadoop.security."
        "AccessControlException: Unauthorized connection for super-user")


def test_a_server_without_security_asking_for_simple_auth() -> None:
    def make(holder: list[SaslServer]) -> Script:
        def script(conn: socket.socket, seen: dict[str, Any]) -> None:
            holder[0].read_token(conn)
            conn.sendall(INT.pack(0) + INT.pack(-88))
        return script

    server = started(make)
    with pytest.raises(SaslError, match=r"does not use Kerberos .* set auth = \"none\""):
        server.connect()
    server.close()


def test_a_negotiation_token_cut_off_is_an_error_within_the_connect_timeout() -> None:
    def make(holder: list[SaslServer]) -> Script:
        def script(conn: socket.socket, seen: dict[str, Any]) -> None:
            holder[0].read_token(conn)
            conn.sendall(INT.pack(0) + INT.pack(500) + b"abc")
        return script

    server = started(make)
    began = time.monotonic()
    with pytest.raises(RpcConnectionError) as cut:  # the network's: retried, unlike refusals
        server.connect(connect_timeout=1)
    server.close()
    assert time.monotonic() - began < 4
    assert str(cut.value) == (f"server 127.0.0.1:{server.port}: SASL negotiation: no token "
                              "of 500 bytes within 1 s (3 of 500 bytes came)")


def after_call(send: bytes, then_close: bool) -> Callable[[list[SaslServer]], Script]:
    """Negotiate privacy, read the header and one call, send ``send``."""
    def make(holder: list[SaslServer]) -> Script:
        def script(conn: socket.socket, seen: dict[str, Any]) -> None:
            negotiated(holder[0], conn, 4)
            stream = WrappedStream(conn)
            stream.frame()
            stream.frame()
            conn.sendall(send)
            if then_close:
                conn.shutdown(socket.SHUT_RDWR)
        return script
    return make


def test_a_wrapped_token_longer_than_what_came_then_closed() -> None:
    server = started(after_call(INT.pack(1000) + b"W" * 10, then_close=True))
    conn = server.connect(call_timeout=20)
    began = time.monotonic()
    with pytest.raises(RpcConnectionError) as cut:
        conn.call("Get", b"\x0a\x00")
    conn.close()
    server.close()
    assert time.monotonic() - began < 10  # the close, not the call timeout
    assert str(cut.value) == (
        f"server 127.0.0.1:{server.port}: Get (call id 0) failed: the server closed the "
        "connection (a wrapped token of 1000 bytes at offset 0 cut off after 10)")


def test_a_wrapped_token_longer_than_what_came_is_a_timeout_not_a_hang() -> None:
    server = started(after_call(INT.pack(1000) + b"W" * 10, then_close=False))
    conn = server.connect(call_timeout=1)
    with pytest.raises(RpcTimeoutError, match=r"Get \(call id 0\) got no reply within 1 s"):
        conn.call("Get", b"\x0a\x00")
    conn.close()
    server.close()


@pytest.mark.parametrize(("send", "expected"), [
    (INT.pack(-7), "wrapped token length -7 is not a token"),
    (token(b"X-not-wrapped"), "wrapped token of 13 bytes does not unwrap: not a wrapped "
                              "token")])
def test_a_malformed_wrapped_token_fails_the_call(send: bytes, expected: str) -> None:
    server = started(after_call(send, then_close=False))
    conn = server.connect(call_timeout=20)
    with pytest.raises(RpcConnectionError) as bad:
        conn.call("Get", b"\x0a\x00")
    conn.close()
    server.close()
    assert expected in str(bad.value) and f"127.0.0.1:{server.port}" in str(bad.value)


def test_choose_qop() -> None:
    offer = struct.pack(">I", (1 | 4) << 24 | 4096)
    assert choose_qop(offer, [4, 1]) == (4, 4096, struct.pack(">I", 4 << 24 | 1 << 16))
    assert choose_qop(offer, [2, 1])[:2] == (1, 4096)
    with pytest.raises(ValueError, match="asks for integrity but the server offers "
                                         "authentication, privacy"):
        choose_qop(offer, [2])
    with pytest.raises(ValueError, match="offer is 3 bytes"):
        choose_qop(b"abc", [1])


def test_rpc_protection_setting() -> None:
    assert ClusterSecurity().rpc_protection == "authentication"
    assert protection_bits("privacy, integrity") == [4, 2]
    ClusterSecurity(rpc_protection="privacy,authentication")
    with pytest.raises(ConfigError, match="rpc_protection must be one or more of"):
        ClusterSecurity(rpc_protection="auth-conf")
