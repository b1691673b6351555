"""TLS on HBase's RPC against scripted servers speaking TLS 1.2 as HBase 2.6's do by default
(``hbase.rpc.tls.protocol``), with certificates of a CA made for the test
(:mod:`realstack.tls`):

* many calls in flight from many threads over one TLS connection, each answered with its
  own bytes (one reading thread, writers in turn, one TLS state);
* a server that wants a client certificate refuses a client without one, in one line;
* the server's host name checked HBase's way: a certificate naming another host refused
  naming both, accepted with ``rpc_tls_verify_hostname = "false"``; the identity rules of
  ``HBaseHostnameVerifier`` (addresses against IP entries, names against DNS entries with a
  one-label wildcard, the common name only without alternative names);
* under TLS 1.3, where the server judges the client's certificate after the client's side of
  the handshake ended, a missing or untrusted client certificate is still refused by the
  connection's making, in the same one line, every time;
* what the connection observed (TLS version, cipher, whether the name was checked) is what
  the server's side of it saw;
* a TLS client meeting a plain server, answering its ClientHello as HBase answers a bad
  preamble, and a plain client meeting a TLS server: one line each naming the server and
  what was expected.
"""

from __future__ import annotations

import logging
import socket
import ssl
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.errors import ConfigError
from hbase_migrate.rpc.codec import CONNECTION_CALL_ID, Call, RemoteException, encode_reply
from hbase_migrate.rpc.connection import Connection
from hbase_migrate.rpc.errors import RpcConnectionError
from hbase_migrate.rpc.messages import (
    Get,
    decode_get_request,
    decode_get_response,
    get_request,
    get_response,
)
from hbase_migrate.rpc.tls import RpcTlsError, client_context, identity_matches
from hbase_migrate.wal.model import Cell, CellType
from realstack.tls import TlsFiles, make_tls
from tests.rpc.scripted import ScriptedServer


def server_context(files: TlsFiles, *, want_client: bool = True,
                   version: ssl.TLSVersion = ssl.TLSVersion.TLSv1_2) -> ssl.SSLContext:
    """A server's TLS context (TLS ``version`` only) from the stack's keystore; client
    certificates of the CA wanted (NEED) unless ``want_client`` is False."""
    password = files.password.read_bytes()
    key, cert, _ = pkcs12.load_key_and_certificates(files.keystore.read_bytes(), password)
    assert key is not None and cert is not None
    pem = files.folder / "server-test.pem"
    pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM) + key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = context.maximum_version = version
    context.load_cert_chain(pem)
    if want_client:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(files.ca)
    return context


def client_security(files: TlsFiles, **changes: Any) -> ClusterSecurity:
    return replace(ClusterSecurity(rpc_tls="on", tls_ca_file=str(files.ca),
                                   tls_cert_file=str(files.client_cert),
                                   tls_key_file=str(files.client_key)), **changes)


def echo(call: Call, conn: socket.socket) -> None:
    """Answer a Get with one cell holding its row: each reply tells which call it is for."""
    row = decode_get_request(call.request)[1].row
    conn.sendall(encode_reply(call.call_id, *get_response(
        [Cell(row, b"f", b"q", 1, CellType.PUT, row * 4000)])))


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    return make_tls(tmp_path_factory.mktemp("tls"), "test")


def get_row(conn: Connection, row: bytes) -> bytes:
    reply = conn.call("Get", get_request(b"t,,1.0123456789abcdef0123456789abcdef.", Get(row)))
    (cell,) = decode_get_response(reply.response or b"", reply.cell_block)
    return cell.value


def test_many_calls_in_flight_over_one_tls_connection(files: TlsFiles) -> None:
    with ScriptedServer(echo, tls=server_context(files)) as server:
        conn = Connection("127.0.0.1", server.port, security=client_security(files))
        wrong: list[tuple[bytes, int]] = []

        def caller(n: int) -> None:
            for i in range(25):
                row = b"row-%d-%d" % (n, i)
                value = get_row(conn, row)
                if value != row * 4000:
                    wrong.append((row, len(value)))

        threads = [threading.Thread(target=caller, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        conn.close()
    assert not wrong
    assert len(server.calls) == 200
    assert server.preambles == [b"HBas\x00\x50"]  # the preamble came inside TLS, whole


def test_a_server_wanting_a_client_certificate_refuses_none(files: TlsFiles) -> None:
    with ScriptedServer(echo, tls=server_context(files)) as server:
        security = client_security(files, tls_cert_file=None, tls_key_file=None)
        with pytest.raises(RpcTlsError) as refused:
            Connection("127.0.0.1", server.port, security=security)
    assert str(refused.value).startswith(f"server 127.0.0.1:{server.port}: TLS: the server "
                                         "refused this client's certificate")
    assert "none was given: set tls_cert_file and tls_key_file" in str(refused.value)


def test_a_certificate_naming_another_host_is_refused(tmp_path: Path) -> None:
    elsewhere = make_tls(tmp_path, "elsewhere", hosts=("db.example", "10.1.2.3"))
    with ScriptedServer(echo, tls=server_context(elsewhere)) as server:
        with pytest.raises(RpcTlsError) as refused:
            Connection("127.0.0.1", server.port, security=client_security(elsewhere))
        assert str(refused.value).startswith(
            f"server 127.0.0.1:{server.port}: TLS: its certificate names 10.1.2.3, "
            "db.example, not 127.0.0.1")
        unchecked = client_security(elsewhere, rpc_tls_verify_hostname="false")
        conn = Connection("127.0.0.1", server.port, security=unchecked)
        assert get_row(conn, b"r") == b"r" * 4000
        conn.close()


def test_certificates_replaced_where_they_were_are_loaded_again(tmp_path: Path) -> None:
    """A rotation: a new CA, server and client certificate written over the old files. A
    client of this process connecting afterwards trusts the new CA, not the one it loaded."""
    before = make_tls(tmp_path / "certs", "rotated")
    old_ca = before.ca.read_bytes()
    with ScriptedServer(echo, tls=server_context(before)) as server:
        conn = Connection("127.0.0.1", server.port, security=client_security(before))
        assert get_row(conn, b"old") == b"old" * 4000
        conn.close()
    after = make_tls(tmp_path / "certs", "rotated")
    assert after.ca == before.ca and after.ca.read_bytes() != old_ca
    with ScriptedServer(echo, tls=server_context(after)) as server:
        conn = Connection("127.0.0.1", server.port, security=client_security(after))
        assert get_row(conn, b"new") == b"new" * 4000
        conn.close()


def test_a_rotation_caught_halfway_keeps_the_files_loaded_before(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A new key written before its certificate: connections made meanwhile use the files
    loaded before, saying so, instead of failing the step."""
    files = make_tls(tmp_path / "certs", "halfway")
    other = make_tls(tmp_path / "next", "halfway")
    with ScriptedServer(echo, tls=server_context(files)) as server:
        conn = Connection("127.0.0.1", server.port, security=client_security(files))
        conn.close()
        files.client_key.write_bytes(other.client_key.read_bytes())  # its certificate not yet
        with caplog.at_level(logging.WARNING, logger="hbase_migrate.rpc.tls"):
            conn = Connection("127.0.0.1", server.port, security=client_security(files))
            assert get_row(conn, b"r") == b"r" * 4000
            conn.close()
    assert "cannot load the client certificate and key" in caplog.text
    assert "the TLS files loaded before are used until these load" in caplog.text
    with pytest.raises(ConfigError, match="cannot load the client certificate"):
        client_context(client_security(files, tls_ca_file=str(other.ca)))  # none loaded before


def test_identities_as_hbase_verifies_them() -> None:
    alt = {"subject": ((("commonName", "ignored.example"),),),
           "subjectAltName": (("DNS", "*.rs.example"), ("DNS", "master.example"),
                              ("IP Address", "10.0.0.7"))}
    assert identity_matches(alt, "rs1.rs.example")
    assert identity_matches(alt, "MASTER.example")
    assert not identity_matches(alt, "a.b.rs.example")  # a wildcard covers one label
    assert identity_matches(alt, "10.0.0.7")
    assert not identity_matches(alt, "10.0.0.8")
    assert not identity_matches(alt, "ignored.example")  # no CN once there are SANs
    only_cn = {"subject": ((("commonName", "rs1.example"),),)}
    assert identity_matches(only_cn, "rs1.example")
    assert not identity_matches(only_cn, "rs2.example")
    assert not identity_matches({"subject": ()}, "rs1.example")


def test_a_tls_client_meeting_a_plain_server(files: TlsFiles) -> None:
    """The plain server reads the ClientHello as a preamble, answers it as HBase's
    ``doBadPreambleHandling`` does (a FatalConnectionException on call id -1) and closes."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            preamble = conn.recv(6)
            conn.sendall(encode_reply(CONNECTION_CALL_ID, exception=RemoteException(
                "org.apache.hadoop.hbase.ipc.FatalConnectionException",
                f"Expected HEADER=HBas but received HEADER={preamble[:4]!r}")))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        with pytest.raises(RpcTlsError) as refused:
            Connection("127.0.0.1", port, security=client_security(files))
    finally:
        listener.close()
    assert str(refused.value).startswith(f"server 127.0.0.1:{port}: TLS handshake failed")
    assert "expected a server with TLS on its RPC port (hbase.server.netty.tls.enabled)" \
        in str(refused.value)


def test_a_plain_client_meeting_a_tls_server(files: TlsFiles) -> None:
    """The server hangs up as the preamble or the first call arrives, or answers with a TLS
    alert: whichever the client meets first is the one line."""
    with ScriptedServer(echo, tls=server_context(files, want_client=False)) as server, \
            pytest.raises((RpcTlsError, RpcConnectionError)) as refused:
        conn = Connection("127.0.0.1", server.port, call_timeout=10)
        try:
            get_row(conn, b"r")
        finally:
            conn.close()
    text = str(refused.value)
    assert text.startswith(f"server 127.0.0.1:{server.port}")
    assert "rpc_tls" in text and "hbase.server.netty.tls.enabled" in text


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3])
def test_a_refused_client_certificate_is_one_line_at_connecting(
        files: TlsFiles, tmp_path: Path, version: ssl.TLSVersion) -> None:
    """No certificate, or one of a CA the server does not trust: under TLS 1.3 the client's
    handshake ends before the server's alert comes; the error must not depend on which the
    client meets first (its preamble's write, a reset, the alert)."""
    other = make_tls(tmp_path, "other")
    cases = {"none was given": client_security(files, tls_cert_file=None,
                                               tls_key_file=None),
             f"refused tls_cert_file {other.client_cert}": client_security(
                 files, tls_cert_file=str(other.client_cert),
                 tls_key_file=str(other.client_key))}
    with ScriptedServer(echo, tls=server_context(files, version=version)) as server:
        for expected, security in cases.items():
            for _ in range(6):
                with pytest.raises(RpcTlsError) as refused:
                    conn = Connection("127.0.0.1", server.port, security=security,
                                      call_timeout=10)
                    try:  # a refusal that came late must fail the first call alike
                        get_row(conn, b"r")
                    finally:
                        conn.close()
                text = str(refused.value)
                assert "\n" not in text
                assert text.startswith(f"server 127.0.0.1:{server.port}: TLS: the server "
                                       "refused this client's certificate"), text
                assert expected in text
        assert not server.calls  # no call ever reached the server


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3])
def test_the_connection_says_what_it_negotiated(files: TlsFiles, tmp_path: Path,
                                                version: ssl.TLSVersion) -> None:
    seen: list[tuple[str | None, str]] = []

    def recording(call: Call, conn: socket.socket) -> None:
        assert isinstance(conn, ssl.SSLSocket)
        cipher = conn.cipher()
        assert cipher is not None
        seen.append((conn.version(), cipher[0]))
        echo(call, conn)

    elsewhere = make_tls(tmp_path, "elsewhere", hosts=("db.example",))
    for tls_files, security in ((files, client_security(files)), (elsewhere, client_security(
            elsewhere, rpc_tls_verify_hostname="false"))):
        with ScriptedServer(recording, tls=server_context(tls_files, version=version)) \
                as server:
            conn = Connection("127.0.0.1", server.port, security=security)
            try:
                assert get_row(conn, b"r") == b"r" * 4000
                observed = conn.observed
            finally:
                conn.close()
        server_version, server_cipher = seen.pop()
        assert observed == {"tls": {"version": server_version, "cipher": server_cipher,
                                    "hostname_verified": tls_files is files},
                            "sasl": "SIMPLE", "protection": None}
        assert server_version == version.name.replace("_", ".")
