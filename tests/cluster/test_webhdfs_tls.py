"""WebHDFS over https: verified against the cluster's ``tls_ca_file``, secured or not, even
when ``REQUESTS_CA_BUNDLE`` names another bundle; an unknown certificate is refused."""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.errors import WebHdfsUnreachableError
from hbase_migrate.cluster.storage.walstore import WebHdfsWalStore

SYSTEM_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


class EmptyListings(BaseHTTPRequestHandler):
    """A NameNode whose every folder is empty (LISTSTATUS)."""

    def do_GET(self) -> None:
        body = json.dumps({"FileStatuses": {"FileStatus": []}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def namenode(tls_server_context: tuple[ssl.SSLContext, Path]) -> Iterator[tuple[str, Path]]:
    context, cert = tls_server_context
    server = ThreadingHTTPServer(("127.0.0.1", 0), EmptyListings)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", cert
    finally:
        server.shutdown()
        server.server_close()


def test_https_webhdfs_is_checked_against_the_clusters_ca_file(
        namenode: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    url, cert = namenode
    if Path(SYSTEM_BUNDLE).exists():  # another bundle in the environment changes nothing
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", SYSTEM_BUNDLE)
    store = WebHdfsWalStore(url, security=ClusterSecurity(tls_ca_file=str(cert)), timeout=5)
    assert store.list_wal_files() == []
    unknown = WebHdfsWalStore(url, security=ClusterSecurity(tls_ca_file=SYSTEM_BUNDLE),
                              timeout=5)
    with pytest.raises(WebHdfsUnreachableError, match="CERTIFICATE_VERIFY_FAILED"):
        unknown.list_wal_files()
