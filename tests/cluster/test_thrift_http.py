"""Thrift over HTTP (``transport = "http"``) against in-process servers: thriftpy2's own HTTP
Thrift server (an independent implementation of the same wire: POST a binary-protocol call,
read the reply body) for the Thrift1 and Thrift2 clients, and plain HTTP servers for what a
gateway answers besides a reply (401 without credentials, 503, nobody listening). The same
clients against real HBase gateways in HTTP mode with SPNEGO: tests/realstack/
test_thrift_http_real.py."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from happybase.connection import Hbase
from thriftpy2.http import make_server

from hbase_migrate.cluster.auth.kerberos import KerberosError
from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.errors import ConfigError
from hbase_migrate.services import free_port
from hbase_migrate.thrift.thrift1 import Thrift1Client, Thrift1UnreachableError
from hbase_migrate.thrift.thrift2 import Thrift2Client, Thrift2UnreachableError
from hbase_migrate.thrift.thrift2_idl import hbase2


class Gateway2:
    """Enough of THBaseService: tableExists and get."""

    def tableExists(self, table: Any) -> bool:
        return bool(table.qualifier == b"present")

    def get(self, table: bytes, tget: Any) -> Any:
        value = hbase2.TColumnValue(family=b"d", qualifier=b"q", value=b"v" * 100_000,
                                    timestamp=7, type=4)
        return hbase2.TResult(row=tget.row, columnValues=[value])


class Gateway1:
    """Enough of Hbase (Thrift1): getTableNames."""

    def getTableNames(self) -> list[bytes]:
        return [b"t1", b"ns:t2"]


def serve(server: Any) -> Iterator[str]:
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.httpd.server_address[1]}"
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


@pytest.fixture
def gateway2() -> Iterator[str]:
    yield from serve(make_server(hbase2.THBaseService, Gateway2(), "127.0.0.1", free_port()))


@pytest.fixture
def gateway1() -> Iterator[str]:
    yield from serve(make_server(Hbase, Gateway1(), "127.0.0.1", free_port()))


def test_thrift2_calls_are_http_posts(gateway2: str) -> None:
    with Thrift2Client(gateway2, transport="http", timeout=5) as client:
        assert client.table_exists("present")
        assert not client.table_exists("absent")
        for _ in range(3):  # one keep-alive session, call after call
            cells = client.get("t", b"r")
        assert [(c.row, c.value) for c in cells] == [(b"r", b"v" * 100_000)]


def test_thrift1_calls_are_http_posts(gateway1: str) -> None:
    with Thrift1Client(gateway1, transport="http", timeout=5) as client:
        assert client.tables() == ["t1", "ns:t2"]
        assert client.tables() == ["t1", "ns:t2"]


def test_https_with_the_clusters_ca_file(
        tls_server_context: tuple[ssl.SSLContext, Path]) -> None:
    """``tls_ca_file`` makes the calls https, verified against that CA (here the gateway's
    own self-signed certificate); without it the certificate is refused."""
    context, cert = tls_server_context
    server = make_server(hbase2.THBaseService, Gateway2(), "127.0.0.1", free_port())
    server.httpd.socket = context.wrap_socket(server.httpd.socket, server_side=True)
    for endpoint in serve(server):
        with Thrift2Client(endpoint, transport="http", timeout=5,
                           security=ClusterSecurity(tls_ca_file=str(cert))) as client:
            assert client.table_exists("present")
        with Thrift2Client(endpoint, transport="http", timeout=5, retries=0) as plain, \
                pytest.raises(Thrift2UnreachableError):
            plain.table_exists("present")  # http:// to an https server
        with Thrift2Client(endpoint, transport="http", timeout=5, retries=0,
                           security=ClusterSecurity(tls_ca_file="/etc/ssl/certs/"
                                                    "ca-certificates.crt")) as unknown, \
                pytest.raises(Thrift2UnreachableError, match="CERTIFICATE_VERIFY_FAILED"):
            unknown.table_exists("present")


class Answer(BaseHTTPRequestHandler):
    """Answers every POST with the server's ``status`` (401 asks for Negotiate)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        status = self.server.status  # type: ignore[attr-defined]
        self.server.seen.append(self.headers.get("Content-Type"))  # type: ignore[attr-defined]
        self.send_response(status)
        if status == 401:
            self.send_header("WWW-Authenticate", "Negotiate")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def answering() -> Iterator[HTTPServer]:
    server = HTTPServer(("127.0.0.1", 0), Answer)
    server.status, server.seen = 401, []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_a_401_without_credentials_is_one_line(answering: HTTPServer) -> None:
    endpoint = f"127.0.0.1:{answering.server_address[1]}"
    with Thrift2Client(endpoint, transport="http", timeout=3, retries=3, backoff=0.01,
                       cluster="secured") as t2, \
            pytest.raises(KerberosError, match=r"^cluster 'secured', thrift2 gateway http://"
                          r".* requires SPNEGO \(Kerberos\) .* no credentials; set auth"):
        t2.table_exists("t")
    with Thrift1Client(endpoint, transport="http", timeout=3, retries=3, backoff=0.01,
                       cluster="secured") as t1, \
            pytest.raises(KerberosError, match=r"thrift gateway .* requires SPNEGO"):
        t1.tables()
    assert len(answering.seen) == 2  # type: ignore[attr-defined]  # not retried
    assert set(answering.seen) == {"application/x-thrift"}  # type: ignore[attr-defined]


def test_http_errors_and_no_listener_are_transport_errors(answering: HTTPServer,
                                                          closed_port: int) -> None:
    answering.status = 503  # type: ignore[attr-defined]
    endpoint = f"127.0.0.1:{answering.server_address[1]}"
    with Thrift2Client(endpoint, transport="http", timeout=3, retries=2, backoff=0.01) as t2, \
            pytest.raises(Thrift2UnreachableError, match=r"after 3 attempts.*HTTP 503"):
        t2.table_exists("t")
    with Thrift1Client(f"127.0.0.1:{closed_port}", transport="http", timeout=3, retries=1,
                       backoff=0.01) as t1, \
            pytest.raises(Thrift1UnreachableError, match=r"after 2 attempts"):
        t1.tables()


def test_http_transport_is_binary_only() -> None:
    with pytest.raises(ConfigError, match=r"transport \"http\" needs protocol \"binary\""):
        ClusterEndpoints("c", "h:1", transport="http", protocol="compact")
    assert ClusterEndpoints("c", "h:1", transport="http").transport == "http"
