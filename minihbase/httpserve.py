"""A ThreadingHTTPServer serving on its own daemon thread: the shared plumbing of the
embedded cluster's HTTP endpoints (WebHDFS, admin)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class BackgroundHttpServer:
    """Binds ``host:port`` (0 = a free port) at construction and serves until :meth:`stop`."""

    def __init__(self, host: str, port: int, handler: type[BaseHTTPRequestHandler],
                 name: str) -> None:
        self.httpd = ThreadingHTTPServer((host, port), handler)
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
        self.thread.join(5)
