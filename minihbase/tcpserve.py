"""A threaded TCP server on loopback: one thread accepts, one thread serves each connection.

The base of the embedded cluster's Thrift gateways and RPC ports. The listening socket is
bound without SO_REUSEPORT, so a port already in use fails the start with a clear error.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import socket
import threading
from typing import Self

from stackprocs.process import EmbeddedStackError

log = logging.getLogger(__name__)

HOST = "127.0.0.1"


class LoopbackServer:
    """Accepts on ``HOST:port`` (0 = a free port) and hands each connection to ``serve``
    in a thread of its own; ``accepting()`` false: a new connection is closed at once."""

    def __init__(self, name: str, port: int = 0, what: str = "port") -> None:
        self.name = name
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._sock.bind((HOST, port))
        except OSError as exc:
            self._sock.close()
            reason = "is already in use" if exc.errno == errno.EADDRINUSE else "cannot be bound"
            raise EmbeddedStackError(
                f"{name}: {what} {port} on {HOST} {reason} ({exc.strerror}); choose another "
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

    def start(self) -> Self:
        self._thread.start()
        return self

    def accepting(self) -> bool:
        return True

    def serve(self, client: socket.socket) -> None:
        """Serve one connection until it ends (closed afterwards by the caller)."""
        raise NotImplementedError

    def _accept_loop(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._sock.accept()
            except OSError:
                if self._closed.is_set():
                    return
                log.exception("%s: accept failed", self.name)
                continue
            if not self.accepting():
                client.close()
                continue
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._clients_lock:
                self._clients.add(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True,
                             name=f"{self.name}-client").start()

    def _serve(self, client: socket.socket) -> None:
        try:
            self.serve(client)
        except (EOFError, OSError):
            pass
        except Exception:
            log.exception("%s: connection dropped after an unexpected error", self.name)
        finally:
            with self._clients_lock:
                self._clients.discard(client)
            with contextlib.suppress(OSError):
                client.close()

    def drop_connections(self) -> None:
        """Close every open connection (their threads end)."""
        with self._clients_lock:
            clients = list(self._clients)
        for client in clients:
            with contextlib.suppress(OSError):
                client.shutdown(socket.SHUT_RDWR)

    def stop(self) -> None:
        """Stop accepting, close every connection and wait for the accept thread."""
        self._closed.set()
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        self.drop_connections()
        if self._thread.is_alive():
            self._thread.join(5)
