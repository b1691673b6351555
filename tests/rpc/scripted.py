"""A scripted HBase server at the socket: it reads the preamble, the connection header and
each call as HBase's RPC frames them, and hands every call to the test's script, which
answers it (or not) by writing bytes to the socket: the faults a real cluster cannot stage
on demand."""

from __future__ import annotations

import contextlib
import socket
import ssl
import struct
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Self

from hbase_migrate.rpc.codec import Call, decode_call

Script = Callable[[Call, socket.socket], None]


def read_exactly(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


class ScriptedServer:
    """Listens on a loopback port; each connection is served by ``script`` in a thread
    (inside TLS when given a server ``tls`` context, as a server with
    ``hbase.server.netty.tls.enabled``); ``greeting`` is written as soon as a connection
    header is read, before any call (a refusal, as HBase sends one)."""

    def __init__(self, script: Script, tls: ssl.SSLContext | None = None,
                 greeting: bytes = b"") -> None:
        self.script = script
        self.tls = tls
        self.greeting = greeting
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.preambles: list[bytes] = []
        self.headers: list[bytes] = []
        self.calls: list[Call] = []
        self.connections: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
            self.preambles.append(read_exactly(conn, 6))
            (size,) = struct.unpack(">i", read_exactly(conn, 4))
            self.headers.append(read_exactly(conn, size))
            if self.greeting:
                conn.sendall(self.greeting)
            while True:
                (size,) = struct.unpack(">i", read_exactly(conn, 4))
                call = decode_call(read_exactly(conn, size))
                self.calls.append(call)
                self.script(call, conn)
        except (EOFError, OSError):
            pass

    def close(self) -> None:
        self.listener.close()
        for conn in self.connections:
            conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class OutOfOrder:
    """A script that holds each call until ``hold`` calls wait (or none came for ``linger``
    seconds) and then answers the held calls last first, as busy handlers of a region server
    may finish. ``answer`` turns a call into its reply frame when it is answered (so what the
    server applies happens in the order of the answers); ``most_held`` is the most calls
    that waited at once, ``rounds`` the calls of each answered group."""

    def __init__(self, answer: Callable[[Call], bytes], hold: int = 2,
                 linger: float = 0.2) -> None:
        self.answer, self.hold, self.linger = answer, hold, linger
        self.most_held = 0
        self.rounds: list[list[Call]] = []
        self._held: list[tuple[Call, socket.socket]] = []
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def __call__(self, call: Call, conn: socket.socket) -> None:
        with self._lock:
            self._held.append((call, conn))
            self.most_held = max(self.most_held, len(self._held))
            if self._timer is not None:
                self._timer.cancel()
            if len(self._held) >= self.hold:
                self._answer_held()
                return
            self._timer = threading.Timer(self.linger, self._linger)
            self._timer.daemon = True
            self._timer.start()

    def _linger(self) -> None:
        with self._lock:
            self._answer_held()

    def _answer_held(self) -> None:
        held, self._held = self._held, []
        if held:
            self.rounds.append([call for call, _ in held])
        for call, conn in reversed(held):
            with contextlib.suppress(OSError):
                conn.sendall(self.answer(call))
