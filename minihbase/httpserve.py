"""A ThreadingHTTPServer serving on its own daemon thread: the shared plumbing of the
embedded cluster's HTTP endpoints (WebHDFS, admin)."""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Server(ThreadingHTTPServer):
    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self.open: set[socket.socket] = set()  # client connections being served
        self.open_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.open_lock:
            self.open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.open_lock:
            self.open.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        """Cut every client connection (kept-alive ones too), as a stopped server would."""
        with self.open_lock:
            connections, self.open = self.open, set()
        for connection in connections:
            with contextlib.suppress(OSError):  # already closed by its client
                connection.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (a reader that had read enough) is no error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class BackgroundHttpServer:
    """Binds ``host:port`` (0 = a free port) at construction and serves until :meth:`stop`."""

    def __init__(self, host: str, port: int, handler: type[BaseHTTPRequestHandler],
                 name: str) -> None:
        self.httpd = _Server((host, port), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.1}, name=name, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.httpd.drop_connections()
        self.thread.join(5)
