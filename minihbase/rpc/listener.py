"""One RPC port of the embedded cluster, speaking HBase's own protocol (``RPC.proto``).

A connection opens with the preamble (``HBas``, version 0, auth SIMPLE), then the
ConnectionHeader naming the service; then calls, several in flight at once (served by a pool
of threads, each answered when done, matched by its call id as on HBase) with a
ResponseHeader, the response message and its cell block (``hbase_migrate.rpc.codec`` builds
and reads every byte; this module only moves them). Every call is answered: a failed call
with its Java exception class, as HBase's ``ServerCall`` does; a method not served or a
request that cannot be read with DoNotRetryIOException naming the service and method, the
connection serving on. The security preamble (``Securi``) gets SecurityNotEnabledException,
as from an HBase server without security, and the connection goes on. A bad preamble, an
auth other than SIMPLE, a service this port does not serve or a call header that cannot be
read gets a connection-level reply (call id -1) and the connection is closed.

While ``alive()`` is false (a killed region server) the port takes no calls: a new
connection is closed at once and a connection in use is closed at its next call, as a
client of a dead HBase server sees it.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import struct
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

from hbase_migrate.rpc.codec import (
    AUTH_SIMPLE,
    CONNECTION_CALL_ID,
    KEYVALUE_CODEC_WITH_TAGS,
    BadCall,
    Call,
    ConnectionHeader,
    RemoteException,
    decode_call,
    decode_connection_header,
    encode_reply,
    read_preamble,
)
from hbase_migrate.rpc.principal import SECURITY_NOT_ENABLED, SECURITY_PREAMBLE
from hbase_migrate.wal.cells import CellCorruptError
from hbase_migrate.wal.protobuf import ProtobufError
from minihbase.model import IllegalArgumentError, MiniHBaseError
from minihbase.tcpserve import LoopbackServer

log = logging.getLogger(__name__)

MAX_CALL = 256 << 20  # hbase.ipc.max.request.size
HANDLERS = 16  # calls served at once per port (hbase.regionserver.handler.count: 30)
H = "org.apache.hadoop.hbase."
DO_NOT_RETRY = H + "DoNotRetryIOException"
_INT32 = struct.Struct(">i")


class ServiceError(Exception):
    """A call's failure as HBase raises it: the Java class and its message."""

    def __init__(self, class_name: str, message: str, *, do_not_retry: bool = False,
                 hostname: str = "", port: int = 0) -> None:
        super().__init__(f"{class_name}: {message}")
        self.class_name = class_name
        self.message = message
        self.do_not_retry = do_not_retry
        self.hostname = hostname
        self.port = port

    @property
    def trace(self) -> str:
        """What HBase sends as the stack trace: the exception's line, then its frames."""
        return f"{self.class_name}: {self.message}\n\tat minihbase (embedded cluster)\n"

    def remote(self) -> RemoteException:
        return RemoteException(self.class_name, self.trace, self.hostname, self.port,
                               self.do_not_retry)


def service_error(exc: Exception) -> ServiceError:
    """The Java exception HBase would raise for an error of the embedded cluster: the class
    its message names (``org.apache.hadoop.hbase.X: ...``), DoNotRetryIOException for a bad
    request, IOException for anything else."""
    if isinstance(exc, ServiceError):
        return exc
    if isinstance(exc, (ProtobufError, CellCorruptError, IllegalArgumentError)):
        return ServiceError(DO_NOT_RETRY, f"bad request: {exc}", do_not_retry=True)
    if isinstance(exc, MiniHBaseError):
        text = str(exc)
        name, sep, message = text.partition(": ")
        if sep and name.startswith(H) and " " not in name:
            return ServiceError(name, message, do_not_retry=not exc.retryable)
        return ServiceError(DO_NOT_RETRY if not exc.retryable else "java.io.IOException",
                            text, do_not_retry=not exc.retryable)
    return ServiceError("java.io.IOException", f"{type(exc).__name__}: {exc}")


class CallContext(NamedTuple):
    """What a handler gets: the call and its connection's header."""

    call: Call
    header: ConnectionHeader

    @property
    def in_block(self) -> bool:
        """Whether cells go in the cell block (the client named a codec)."""
        return bool(self.header.codec)

    @property
    def tags(self) -> bool:
        return self.header.codec == KEYVALUE_CODEC_WITH_TAGS


Handler = Callable[[CallContext], tuple[bytes, bytes]]  # -> (response, cell block)
Services = Mapping[str, Mapping[str, Handler]]  # service name -> method name -> handler


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    out = bytearray()
    while len(out) < size:
        chunk = sock.recv(min(size - len(out), 1 << 20))
        if not chunk:
            raise EOFError(f"connection closed after {len(out)} of {size} bytes")
        out += chunk
    return bytes(out)


class RpcListener(LoopbackServer):
    """Serves ``services`` on ``HOST:port`` (0: a free port), one thread per connection."""

    def __init__(self, name: str, services: Services, port: int = 0,
                 alive: Callable[[], bool] = lambda: True) -> None:
        super().__init__(f"{name} rpc", port, "RPC port")
        self.services = services
        self.alive = alive
        self.latency = 0.0  # seconds each call waits before it is served (a slow server)
        self._handlers = ThreadPoolExecutor(HANDLERS, thread_name_prefix=f"{name} rpc call")

    def accepting(self) -> bool:
        return self.alive()

    def serve(self, client: socket.socket) -> None:
        header = self._handshake(client)
        writing = threading.Lock()  # one reply at a time on the socket

        def answer(call: Call | BadCall, header: ConnectionHeader) -> None:
            if self.latency:
                time.sleep(self.latency)
            if not self.alive():
                return
            reply = self._answer(call, header)
            with writing, contextlib.suppress(OSError):  # a closed connection: no one waits
                client.sendall(reply)

        while header is not None and not self._closed.is_set() and self.alive():
            (size,) = _INT32.unpack(_read_exactly(client, 4))
            if not 0 < size <= MAX_CALL:
                with writing:
                    self._fatal(client, f"call length {size}: expected 1 to {MAX_CALL}")
                return
            try:
                call: Call | BadCall = decode_call(_read_exactly(client, size))
            except BadCall as exc:  # its id is known: answered, the connection serves on
                call = exc
            except ProtobufError as exc:  # no call id to answer: about the connection
                with writing:
                    self._fatal(client, f"malformed call header: {exc}")
                return
            self._handlers.submit(answer, call, header)

    def stop(self, wait: bool = True) -> None:
        """Stop accepting (the port refuses connections), close every connection, and let
        the calls under way end (their replies go nowhere): before the cluster behind them
        closes when ``wait``, else in their own time (a server killed under the store's
        lock, which they may be waiting for)."""
        super().stop()
        self._handlers.shutdown(wait=wait, cancel_futures=True)

    def _handshake(self, client: socket.socket) -> ConnectionHeader | None:
        """Read the preamble and ConnectionHeader; None when the connection was refused.
        The security preamble (a client asking the server's principal, HBASE-28321) is
        answered as an HBase server without security does, SecurityNotEnabledException with
        call id -1, and the preamble read again (``ServerRpcConnection.processPreamble``)."""
        first = _read_exactly(client, 6)
        if first == SECURITY_PREAMBLE:
            error = ServiceError(SECURITY_NOT_ENABLED, "security is not enabled")
            client.sendall(encode_reply(CONNECTION_CALL_ID, exception=error.remote()))
            first = _read_exactly(client, 6)
        try:
            auth = read_preamble(first)
        except ProtobufError as exc:
            self._fatal(client, str(exc))
            return None
        if auth != AUTH_SIMPLE:
            self._fatal(client, f"auth method {auth} is not served here: only SIMPLE "
                                f"({AUTH_SIMPLE})")
            return None
        (size,) = _INT32.unpack(_read_exactly(client, 4))
        if not 0 <= size <= MAX_CALL:
            self._fatal(client, f"connection header length {size}")
            return None
        try:
            header = decode_connection_header(_read_exactly(client, size))
        except ProtobufError as exc:
            self._fatal(client, f"malformed connection header: {exc}")
            return None
        if header.service not in self.services:
            self._fatal(client, f"service {header.service!r} is not served on this port "
                                f"({', '.join(sorted(self.services))})",
                        H + "ipc.UnknownServiceException")
            return None
        return header

    def _fatal(self, client: socket.socket, message: str,
               class_name: str = H + "ipc.FatalConnectionException") -> None:
        error = ServiceError(class_name, message, do_not_retry=True)
        with contextlib.suppress(OSError):
            client.sendall(encode_reply(CONNECTION_CALL_ID, exception=error.remote()))
            client.shutdown(socket.SHUT_WR)
            client.settimeout(2.0)  # what the client sent still unread would reset the
            while client.recv(65536):  # connection before it reads the reply
                pass

    def _answer(self, call: Call | BadCall, header: ConnectionHeader) -> bytes:
        """The reply to one call: its response, or the exception it raised."""
        where = f"{header.service}.{call.method}"
        try:
            if isinstance(call, BadCall):
                raise ServiceError(DO_NOT_RETRY, f"{where}: unable to read call parameter: "
                                   f"{call}", do_not_retry=True)
            handler = self.services[header.service].get(call.method)
            if handler is None:  # HBase: UnsupportedOperationException, not to be retried
                raise ServiceError(DO_NOT_RETRY, "java.lang.UnsupportedOperationException: "
                                   f"{where} is not served by the embedded cluster",
                                   do_not_retry=True)
            response, block = handler(CallContext(call, header))
            return encode_reply(call.call_id, response, block)
        except Exception as exc:  # every failure is answered, as HBase does
            error = service_error(exc)
            if error is not exc and error.class_name == "java.io.IOException":
                log.warning("%s: %s failed: %s", self.name, where,
                            "".join(traceback.format_exception(exc)).strip())
            return encode_reply(call.call_id, exception=error.remote())
