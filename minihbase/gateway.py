"""A threaded Thrift server for one IDL service, as HBase's ``hbase thrift``/``thrift2`` run.

One thread accepts on a loopback socket, one thread serves each client connection.
Transport (``buffered``/``framed``) and protocol (``binary``/``compact``) are fixed at start,
like HBase's ``-f`` and ``-c`` options. The listening socket is bound without SO_REUSEPORT,
so a port already in use fails the start with a clear error.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import socket
import threading
from types import ModuleType

from thriftpy2.protocol import TBinaryProtocolFactory, TCompactProtocolFactory
from thriftpy2.thrift import TProcessor
from thriftpy2.transport import (
    TBufferedTransportFactory,
    TFramedTransportFactory,
    TSocket,
    TTransportException,
)

from minihbase.process import EmbeddedStackError

log = logging.getLogger(__name__)

HOST = "127.0.0.1"


def _factories(transport: str, protocol: str) -> tuple[object, object]:
    transports = {"buffered": TBufferedTransportFactory, "framed": TFramedTransportFactory}
    protocols = {"binary": TBinaryProtocolFactory, "compact": TCompactProtocolFactory}
    if transport not in transports or protocol not in protocols:
        raise EmbeddedStackError(
            f"unsupported transport/protocol {transport}/{protocol}: expected "
            "buffered|framed and binary|compact")
    return transports[transport](), protocols[protocol]()


class ThriftGateway:
    """Serves ``handler`` for ``service`` on ``HOST:port`` (0 = a free port)."""

    def __init__(self, name: str, service: ModuleType, handler: object, port: int = 0,
                 transport: str = "buffered", protocol: str = "binary") -> None:
        self.name = name
        self.transport = transport
        self.protocol = protocol
        self._trans_factory, self._proto_factory = _factories(transport, protocol)
        self._processor = TProcessor(service, handler)
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._sock.bind((HOST, port))
        except OSError as exc:
            self._sock.close()
            reason = "is already in use" if exc.errno == errno.EADDRINUSE else "cannot be bound"
            raise EmbeddedStackError(
                f"{name}: port {port} on {HOST} {reason} ({exc.strerror}); choose another "
                "port or stop the process holding it") from exc
        self._sock.listen(128)
        self.port: int = self._sock.getsockname()[1]
        self._clients: set[socket.socket] = set()
        self._clients_lock = threading.Lock()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept_loop, name=f"{name}-accept",
                                        daemon=True)

    @property
    def address(self) -> str:
        return f"{HOST}:{self.port}"

    def start(self) -> ThriftGateway:
        self._thread.start()
        return self

    def _accept_loop(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._sock.accept()
            except OSError:
                if self._closed.is_set():
                    return
                log.exception("%s: accept failed", self.name)
                continue
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._clients_lock:
                self._clients.add(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True,
                             name=f"{self.name}-client").start()

    def _serve(self, client: socket.socket) -> None:
        trans = self._trans_factory.get_transport(TSocket(sock=client))  # type: ignore[attr-defined]
        proto = self._proto_factory.get_protocol(trans)  # type: ignore[attr-defined]
        try:
            while not self._closed.is_set():
                self._processor.process(proto, proto)
        except (TTransportException, OSError, EOFError):
            pass
        except Exception:
            log.exception("%s: connection dropped after an unexpected error", self.name)
        finally:
            with self._clients_lock:
                self._clients.discard(client)
            with contextlib.suppress(OSError):
                trans.close()

    def stop(self) -> None:
        """Stop accepting, close every client connection and wait for the accept thread."""
        self._closed.set()
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        with self._clients_lock:
            clients = list(self._clients)
        for client in clients:
            with contextlib.suppress(OSError):
                client.shutdown(socket.SHUT_RDWR)
        if self._thread.is_alive():
            self._thread.join(5)
