"""One TCP connection to one HBase server (master or region server), and a pool of them.

Many calls are in flight on a connection at once, matched to their replies by call id.
Design: **a reader thread per connection**. Callers write their call under a write lock and
wait on a future; the one reader thread reads the socket, feeds a ``ReplyDecoder`` and
completes the future of each reply's call id. Why: a reply for one call must never wait for
the caller of another to come and read it (with lock-and-read, a caller that timed out or
went away leaves the socket unread and every other caller's reply stuck behind it), and a
broken socket is noticed at once, not at the next read. The cost is one thread per server.

Failure rules (HBase's ``RpcConnection`` does the same):

* a call with no reply within its timeout fails alone (``RpcTimeoutError``); its late reply
  is recognised by call id and skipped;
* a reply with an exception fails its call with a ``RemoteError`` (class name, kind);
* a reply about the connection itself (call id -1: a refused header), a closed or reset
  socket, or bytes that are no reply fail **every** pending call, each with an error naming
  the server and that call, and the connection is closed for good.

With Kerberos the preamble is followed by the SASL negotiation (``sasl``), and every byte
after it passes through the security layer agreed (wrapped under integrity and privacy).
With TLS (``tls``) the handshake comes before the preamble, and everything goes inside it.
"""

from __future__ import annotations

import contextlib
import getpass
import logging
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import replace
from functools import partial
from typing import Any, NamedTuple

from hbase_migrate.cluster import requests
from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.auth.tokens import token_for
from hbase_migrate.rpc import principal
from hbase_migrate.rpc.codec import (
    AUTH_SIMPLE,
    CONNECTION_CALL_ID,
    KEYVALUE_CODEC,
    Reply,
    ReplyDecoder,
    connection_header,
    encode_call,
    preamble,
)
from hbase_migrate.rpc.digest import token_login
from hbase_migrate.rpc.errors import (
    RemoteError,
    RpcConnectionError,
    RpcError,
    RpcTimeoutError,
)
from hbase_migrate.rpc.sasl import (
    PLAIN,
    PROTECTIONS,
    Mechanism,
    SaslError,
    SecurityLayer,
    gssapi_login,
    negotiate,
)
from hbase_migrate.rpc.tls import RpcTlsError, Stream, TlsChannel

log = logging.getLogger(__name__)

CLIENT_SERVICE = "ClientService"
DEFAULT_CALL_TIMEOUT = 60.0
DEFAULT_CONNECT_TIMEOUT = 10.0
_MAX_CALL_ID = 0x7FFFFFFF  # call ids are Java ints; they wrap before turning negative
# The first bytes of a TLS alert or handshake record (TLS 1.x), never of an RPC reply frame
# (a length of more than 350 MB).
TLS_RECORDS = (b"\x15\x03", b"\x16\x03")


def default_user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "hbase-migrate"


class _Pending(NamedTuple):
    method: str
    future: Future[Reply]


class Connection:
    """A connection to ``host:port`` speaking ``service``; thread-safe. ``security``: SASL
    GSSAPI (``rpc.sasl``) when it says Kerberos, as the principal it names, after logging
    in for ``cluster``, or DIGEST-MD5 (``rpc.digest``) when this process holds a delegation
    token of ``cluster`` (``cluster.auth.tokens``); ``mechanism``: another SASL mechanism
    (given the host) to use."""

    def __init__(self, host: str, port: int, *, service: str = CLIENT_SERVICE,
                 user: str | None = None, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
                 call_timeout: float = DEFAULT_CALL_TIMEOUT, codec: str = KEYVALUE_CODEC,
                 security: ClusterSecurity | None = None, cluster: str = "",
                 mechanism: Callable[[str], Mechanism] | None = None) -> None:
        self.server = f"{host}:{port}"
        self.service = service
        self.call_timeout = call_timeout
        self._write_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._next_id = 0
        self._broken: str | None = None
        self._refused: RpcError | None = None  # the server's refusal that broke it, if one
        self._tls = security is not None and security.tls
        self._received = 0  # bytes read after the connection header (none: see _ended)
        self._open(host, port, connect_timeout, security)
        named: tuple[str, ...] = ()  # the principals the server may run as
        try:
            if mechanism is None and security is not None and security.kerberos:
                token = token_for(cluster) if cluster else None
                if token is None:
                    named = principal.candidates(security, service, host)
                    chosen = self._principal(host, port, connect_timeout, security, named)
                    mechanism = partial(gssapi_login, replace(security,
                                                              hbase_principal=chosen),
                                        cluster or self.server, self.server)
                else:
                    mechanism = partial(token_login, token, security.rpc_protection)
            try:
                self._layer, user = self._authenticate(host, mechanism, user)
            except SaslError:
                principal.remember(self.server, named, None)
                raise
            self._stream.settimeout(None)
            self._stream.sendall(self._layer.seal(connection_header(service, user,
                                                                    codec=codec)))
        except OSError as exc:
            self._sock.close()
            raise RpcConnectionError(f"server {self.server}: connection header not sent: "
                                     f"{exc.strerror or exc}{self._ended()}",
                                     server=self.server) from None
        except BaseException:
            self._sock.close()
            raise
        self._decoder = ReplyDecoder(self.server)
        self._reader = threading.Thread(target=self._read_loop, daemon=True,
                                        name=f"hbase-rpc {self.server}")
        self._reader.start()

    def _open(self, host: str, port: int, connect_timeout: float,
              security: ClusterSecurity | None) -> None:
        """The socket (and TLS channel) to the server, with ``connect_timeout``."""
        try:
            self._sock = socket.create_connection((host, port), timeout=connect_timeout)
        except OSError as exc:
            raise RpcConnectionError(f"server {self.server}: cannot connect for "
                                     f"{self.service}: {exc.strerror or exc}",
                                     server=self.server) from None
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._stream: Stream = self._sock
        try:
            if security is not None and security.tls:
                self._stream = TlsChannel(self._sock, host, self.server, security)
        except BaseException:
            self._sock.close()
            raise

    def _principal(self, host: str, port: int, connect_timeout: float,
                   security: ClusterSecurity, named: tuple[str, ...]) -> str:
        """The server's principal among ``named``: asked with the security preamble when
        there are several (``rpc.principal``), on a new connection when it is too old."""
        if len(named) == 1:
            return named[0]
        known = principal.learned(self.server, named)
        if known is not None:
            return known
        told = principal.ask_principal(self._stream, self.server, named)
        if told is None:  # a server before HBase 2.6
            self._sock.close()
            log.info("%s: knows no security preamble (HBase before 2.6): GSSAPI to %s",
                     self.server, named[0])
            self._open(host, port, connect_timeout, security)
            return named[0]
        principal.remember(self.server, named, told)
        return told

    def _authenticate(self, host: str, mechanism: Callable[[str], Mechanism] | None,
                      user: str | None) -> tuple[SecurityLayer, str | None]:
        """Send the preamble; with a SASL mechanism, negotiate. The security layer agreed
        and the user the connection header names (the principal, with Kerberos: HBase
        takes another name for a user to impersonate; none with a token, which names its
        own)."""
        self._sasl: Mechanism | None = None
        if mechanism is None:
            self._stream.sendall(preamble(AUTH_SIMPLE))
            return PLAIN, user or default_user()
        sasl = self._sasl = mechanism(host)
        self._stream.sendall(preamble(sasl.auth))
        layer = negotiate(self._stream, sasl, self.server, self._ended())
        return layer, (sasl.user if sasl.user_info else None)

    # --- calls --------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._broken is not None

    @property
    def observed(self) -> dict[str, Any]:
        """The security this connection runs under, as negotiated with its server: TLS
        (version, cipher, whether the server's name was checked) or none, the SASL
        mechanism (SIMPLE: none) and the ``hbase.rpc.protection`` agreed (none under
        SIMPLE)."""
        tls = self._stream if isinstance(self._stream, TlsChannel) else None
        sasl = self._sasl
        name = "SIMPLE" if sasl is None else sasl.name
        return {"tls": None if tls is None else {"version": tls.version, "cipher": tls.cipher,
                                                 "hostname_verified": tls.hostname_verified},
                "sasl": name,
                "protection": None if sasl is None else next(
                    (n for n, bit in PROTECTIONS.items() if bit == sasl.qop), None)}

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    def call(self, method: str, request: bytes, cell_block: bytes = b"",
             timeout: float | None = None) -> Reply:
        """Send a call and wait for its reply (``timeout`` seconds, default the
        connection's): the reply, or RemoteError, RpcTimeoutError, RpcConnectionError."""
        return self.start(method, request, cell_block, timeout).result()

    def start(self, method: str, request: bytes, cell_block: bytes = b"",
              timeout: float | None = None) -> PendingCall:
        """Send a call and return at once: its reply is ``result()`` of what it returns
        (several calls can so be in flight from one thread)."""
        timeout = self.call_timeout if timeout is None else timeout
        call_id, future = self._send(method, request, cell_block, timeout)
        return PendingCall(self, method, call_id, future, time.monotonic() + timeout, timeout)

    def _send(self, method: str, request: bytes, cell_block: bytes,
              timeout: float) -> tuple[int, Future[Reply]]:
        future: Future[Reply] = Future()
        with self._state_lock:
            if self._broken is not None:
                if self._refused is not None:  # the same answer a call in flight had
                    raise self._error(self._refused, method, None)
                raise RpcConnectionError(f"server {self.server}: {method} not sent: the "
                                         f"connection is closed ({self._broken})",
                                         server=self.server)
            call_id = self._next_id
            self._next_id = 0 if call_id >= _MAX_CALL_ID else call_id + 1
            self._pending[call_id] = _Pending(method, future)
        frame = encode_call(call_id, method, request, cell_block, int(timeout * 1000))
        if self.service == CLIENT_SERVICE:
            requests.sent()  # a region server's data call (cluster/requests.py)
        try:
            with self._write_lock:
                self._stream.sendall(self._layer.seal(frame))
        except OSError as exc:
            self._fail_all(f"sending failed: {exc.strerror or exc}{self._ended()}")
        return call_id, future

    def forget(self, call_id: int) -> None:
        """Stop waiting for a call (timed out): its late reply is skipped."""
        with self._state_lock:
            self._pending.pop(call_id, None)

    # --- reading ------------------------------------------------------------------------

    def _read_loop(self) -> None:
        try:
            while True:
                data = self._stream.recv(1 << 16)
                if not data:
                    self._fail_all("the server closed the connection"
                                   + self._layer.cut_off() + self._ended())
                    return
                if not self._received and not self._tls and data[:2] in TLS_RECORDS:
                    raise RpcTlsError(f"server {self.server}: answers in TLS (a TLS record "
                                      f"of type {data[0]}): expected plain HBase RPC, as "
                                      "the cluster's rpc_tls = \"off\" says; the server has "
                                      "hbase.server.netty.tls.enabled: set rpc_tls = \"on\"")
                self._received += len(data)
                for reply in self._decoder.feed(self._layer.open(data)):
                    self._deliver(reply)
                self._decoder.check()
        except RpcError as exc:
            self._fail_all(str(exc), exc)
        except OSError as exc:
            self._fail_all(f"the connection broke: {exc.strerror or exc}{self._ended()}")

    def _ended(self) -> str:
        """What a connection closed before any reply may mean."""
        if self._received or self._tls:
            return ""
        return (" before any reply (a server with hbase.server.netty.tls.enabled and no "
                "hbase.server.netty.tls.supportplaintext hangs up on plain connections so; "
                "this cluster's rpc_tls is \"off\")")

    def _deliver(self, reply: Reply) -> None:
        if reply.call_id == CONNECTION_CALL_ID and reply.exception is not None:
            e = reply.exception
            raise RemoteError(e.class_name, e.stack_trace, do_not_retry=True,
                              server=self.server, call="connection header")
        with self._state_lock:
            pending = self._pending.pop(reply.call_id, None)
        if pending is None:
            log.debug("%s: reply to call id %d, which no longer waits: skipped", self.server,
                      reply.call_id)
            return
        pending.future.set_result(reply)

    def _fail_all(self, reason: str, cause: RpcError | None = None) -> None:
        """Close the connection and fail every pending call, each error naming its call."""
        with self._state_lock:
            if self._broken is None:
                self._broken = reason
                if isinstance(cause, SaslError | RpcTlsError | RemoteError):
                    self._refused = cause
            pending, self._pending = self._pending, {}
        self._close_socket()
        for call_id, p in sorted(pending.items()):
            error = (self._error(cause, p.method, call_id) if cause is not None else
                     RpcConnectionError(f"server {self.server}: {p.method} (call id "
                                        f"{call_id}) failed: {reason}", server=self.server))
            if not p.future.done():
                p.future.set_exception(error)

    def _error(self, cause: RpcError, method: str, call_id: int | None) -> RpcError:
        """What a call meets on a connection broken by ``cause``: a refusal (SASL, TLS) as
        it is, the server's exception named for the call, else a broken connection."""
        if isinstance(cause, SaslError | RpcTlsError):
            return cause
        named = method if call_id is None else f"{method} (call id {call_id})"
        if isinstance(cause, RemoteError):
            return RemoteError(cause.class_name, cause.stack_trace,
                               do_not_retry=cause.do_not_retry, server=self.server, call=named)
        return RpcConnectionError(f"server {self.server}: {named} failed: {cause}",
                                  server=self.server)

    def _close_socket(self) -> None:
        with contextlib.suppress(OSError):
            self._stream.shutdown(socket.SHUT_RDWR)
        self._stream.close()

    def close(self) -> None:
        """Close; calls still in flight fail naming the server and the call."""
        self._fail_all("closed by the client")
        if self._reader is not threading.current_thread():
            self._reader.join(5)


class PendingCall:
    """A call sent and not yet answered; ``result()`` waits for its reply until the call's
    deadline (its timeout from when it was sent)."""

    def __init__(self, conn: Connection, method: str, call_id: int, future: Future[Reply],
                 deadline: float, timeout: float) -> None:
        self.conn, self.method, self.call_id = conn, method, call_id
        self.future, self.deadline, self.timeout = future, deadline, timeout

    def done(self) -> bool:
        return self.future.done()

    def remaining(self) -> float:
        """Seconds left until the call's deadline."""
        return max(0.0, self.deadline - time.monotonic())

    def result(self) -> Reply:
        """The reply, or RemoteError, RpcTimeoutError, RpcConnectionError."""
        conn = self.conn
        try:
            reply = self.future.result(self.remaining())
        except FutureTimeout:
            conn.forget(self.call_id)
            raise RpcTimeoutError(f"server {conn.server}: {self.method} (call id "
                                  f"{self.call_id}) got no reply within {self.timeout:g} s",
                                  server=conn.server) from None
        if reply.exception is not None:
            e = reply.exception
            raise RemoteError(e.class_name, e.stack_trace, do_not_retry=e.do_not_retry,
                              server=conn.server, call=f"{self.method} (call id {self.call_id})",
                              hostname=e.hostname, port=e.port)
        return reply


class Pool:
    """One connection per server, made on first use and replaced once broken."""

    def __init__(self, *, user: str | None = None, call_timeout: float = DEFAULT_CALL_TIMEOUT,
                 connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
                 codec: str = KEYVALUE_CODEC, service: str = CLIENT_SERVICE,
                 security: ClusterSecurity | None = None, cluster: str = "") -> None:
        self.user = user
        self.security, self.cluster = security, cluster
        self.service = service  # what every connection of the pool speaks
        self.codec = codec
        self.call_timeout = call_timeout
        self.connect_timeout = connect_timeout
        self._lock = threading.Lock()
        self._connections: dict[tuple[str, int], Connection] = {}

    def get(self, host: str, port: int) -> Connection:
        """The connection to ``host:port``, made now if there is none (the pool's lock is
        not held while connecting: a server that does not answer delays only its callers;
        two callers racing to connect keep the first connection made)."""
        with self._lock:
            conn = self._connections.get((host, port))
        if conn is not None and not conn.closed:
            return conn
        made = Connection(host, port, service=self.service, user=self.user,
                          call_timeout=self.call_timeout,
                          connect_timeout=self.connect_timeout, codec=self.codec,
                          security=self.security, cluster=self.cluster)
        with self._lock:
            conn = self._connections.get((host, port))
            if conn is None or conn.closed:
                self._connections[(host, port)] = made
                return made
        made.close()
        return conn

    def drop(self, host: str, port: int) -> None:
        """Close the connection to a server (a stopped server, a broken stream)."""
        with self._lock:
            conn = self._connections.pop((host, port), None)
        if conn is not None:
            conn.close()

    def close(self) -> None:
        with self._lock:
            connections, self._connections = list(self._connections.values()), {}
        for conn in connections:
            conn.close()
