"""HBase's own RPC over TLS against real HBase 2.6.1 (``realstack --rpc-tls``): its master and
region servers speak TLS only (``hbase.server.netty.tls.enabled``, no
``supportplaintext``), want client certificates (HBase's default), and are Kerberos-secured
at ``privacy`` too, SASL running inside TLS as HBase's own client does it. One stack for the
module (its own KDC and CA).

* The native client creates a table with split keys, writes every cell type and reads them
  back over TLS and SASL, cross-checked through the Thrift2 gateway (HBase's Java client,
  itself over TLS); the region servers' AdminService flushes.
* A plain client is refused in one line naming the server and that it wants TLS; a client
  trusting another CA, or showing no certificate, is refused in one line naming the server.
* The lifecycle (prepare, the copy under a live writer, replay, validate) with the
  cluster's client native, over TLS and SASL, ends in a match.
* The cluster loads no ``TokenProvider``: a Spark job's driver finds it issues no
  delegation tokens (one info line) and its tasks keep the keytab.
* ``cluster info`` says what the connection to the master negotiated: the TLS version and
  cipher a separate TLS socket gets from that master, the server's name verified, SASL
  GSSAPI at privacy.
* The keystore's password appears in no log, no ``cluster.json`` and no process's
  arguments, and ``cluster.json`` names the client's key file, never its content.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.sizing import ClientSettings
from hbase_migrate.commands.cluster import status_info
from hbase_migrate.hbase.connect import connect
from hbase_migrate.ranges.credentials import job_tokens
from hbase_migrate.rpc.cluster import NativeCluster
from hbase_migrate.rpc.connection import Connection
from hbase_migrate.rpc.errors import RpcConnectionError
from hbase_migrate.rpc.tls import RpcTlsError, client_context
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import CellType, cell_order
from realstack.hbase import RealHBase, RealHBaseOptions
from realstack.tls import make_tls
from tests.realstack.fixtures import kerberos_stack, keytab_keys, leaks, stack_endpoints
from tests.rpc.cells import FAMILIES, ROWS, SPLITS, every_kind
from tests.rpc.secured import lifecycle_native, master

pytestmark = [pytest.mark.own_stack, pytest.mark.integration, pytest.mark.realstack]
TABLE = "tls_cells"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealHBase]:
    yield from kerberos_stack(tmp_path_factory.mktemp("tls"), RealHBaseOptions(
        region_servers=1, heap="1g", kerberos=True, rpc_protection="privacy",
        rpc_tls=True, token_provider=False, name="tls"))


@pytest.fixture(scope="module")
def endpoints(stack: RealHBase) -> ClusterEndpoints:
    found = replace(stack_endpoints(stack), client="native")
    assert found.security is not None and found.security.tls and found.security.kerberos
    return found


def test_reads_and_writes_over_tls_and_sasl_privacy(endpoints: ClusterEndpoints) -> None:
    with connect(endpoints, ClientSettings()) as native, \
            Thrift2Client(endpoints.thrift2 or "", **endpoints.client_auth) as t2:
        assert isinstance(native, NativeCluster)
        native.create_table(TableDescriptor(TABLE, FAMILIES), SPLITS)
        assert [r.start_key for r in native.regions(TABLE)] == [b"", *SPLITS]
        assert native.table_descriptor(TABLE) == t2.table_descriptor(TABLE)
        written = every_kind(ROWS)
        native.write_cells(TABLE, written)
        raw = [c for piece in native.scan(TABLE, raw=True) for c in piece]
        assert raw == sorted(written, key=cell_order)
        visible = [c for piece in native.scan(TABLE) for c in piece]
        assert visible and all(c.type == CellType.PUT for c in visible)
        assert visible == [c for piece in t2.scan(TABLE) for c in piece]
        native.admin.flush(TABLE)
        assert [c for piece in native.scan(TABLE) for c in piece] == visible


def test_a_cluster_without_token_provider_keeps_the_keytab(
        endpoints: ClusterEndpoints, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="hbase_migrate.rpc.tokens")
    assert job_tokens((endpoints,)) == ()
    said = [r.getMessage() for r in caplog.records if r.name == "hbase_migrate.rpc.tokens"]
    assert len(said) == 1 and "\n" not in said[0], said
    assert said[0].startswith(f"cluster {endpoints.name!r} issues no delegation tokens "
                              "(server ")
    assert "no TokenProvider coprocessor, UnknownProtocolException" in said[0]
    assert "log in from the keytab" in said[0]
    assert job_tokens((endpoints,)) == ()  # known for the process: no second line
    assert len([r for r in caplog.records if r.name == "hbase_migrate.rpc.tokens"]) == 1
    with connect(endpoints, ClientSettings()) as native:  # Kerberos, as before
        assert "default" in native.namespaces()


def test_a_plain_client_is_refused(endpoints: ClusterEndpoints) -> None:
    host, port = master(endpoints)
    conn = Connection(host, port, service="MasterService", call_timeout=20)
    try:
        with pytest.raises(RpcConnectionError) as refused:
            conn.call("IsMasterRunning", b"")
    finally:
        conn.close()
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"server {host}:{port}: IsMasterRunning (call id 0) failed: ")
    assert "hbase.server.netty.tls.enabled" in message and 'rpc_tls is "off"' in message
    # With Kerberos: the SASL negotiation meets the hang-up.
    assert endpoints.security is not None
    with pytest.raises(RpcConnectionError) as hung_up:
        Connection(host, port, service="MasterService", cluster=endpoints.name,
                   security=replace(endpoints.security, rpc_tls="off"))
    message = str(hung_up.value)
    assert "\n" not in message and message.startswith(f"server {host}:{port}: SASL negotiation")
    assert "hbase.server.netty.tls.enabled" in message and 'rpc_tls is "off"' in message


def test_another_ca_or_no_client_certificate_is_refused(
        endpoints: ClusterEndpoints, tmp_path: Path) -> None:
    assert endpoints.security is not None
    host, port = master(endpoints)
    other = make_tls(tmp_path, "other")
    with pytest.raises(RpcTlsError) as untrusted:
        Connection(host, port, service="MasterService", cluster=endpoints.name,
                   security=replace(endpoints.security, tls_ca_file=str(other.ca)))
    assert str(untrusted.value).startswith(f"server {host}:{port}: TLS: its certificate is "
                                           f"not trusted by tls_ca_file {other.ca}")
    with pytest.raises(RpcTlsError) as no_certificate:
        Connection(host, port, service="MasterService", cluster=endpoints.name,
                   security=replace(endpoints.security, tls_cert_file=None, tls_key_file=None))
    assert str(no_certificate.value).startswith(f"server {host}:{port}: TLS: the server "
                                                "refused this client's certificate")
    # A certificate of another CA, which the servers do not trust.
    with pytest.raises(RpcTlsError, match=f"refused tls_cert_file {other.client_cert}"):
        Connection(host, port, service="MasterService", cluster=endpoints.name,
                   security=replace(endpoints.security, tls_cert_file=str(other.client_cert),
                                    tls_key_file=str(other.client_key)))


def test_cluster_info_shows_what_the_connection_negotiated(
        endpoints: ClusterEndpoints) -> None:
    assert endpoints.security is not None
    shown = status_info(endpoints, wait=60)
    assert shown is not None and "connection" in shown, shown
    host, port = master(endpoints)
    with socket.create_connection((host, port), 20) as raw, \
            client_context(endpoints.security).wrap_socket(raw) as alone:
        version, cipher = alone.version(), alone.cipher()
    assert cipher is not None
    assert shown["connection"] == {
        "server": shown["master"], "sasl": "GSSAPI", "protection": "privacy",
        "tls": {"version": version, "cipher": cipher[0], "hostname_verified": True}}


def test_lifecycle_native_over_tls(stack: RealHBase, endpoints: ClusterEndpoints,
                                   tmp_path: Path) -> None:
    lifecycle_native(stack, endpoints, tmp_path, "tls_life")


def test_no_secret_in_logs_files_or_arguments(stack: RealHBase) -> None:
    tls = stack.data_dir / "tls"
    password = (tls / "keystore.password").read_text().strip()
    key = (tls / "client.key").read_text()
    secrets = [password, key.splitlines()[1]]
    assert not leaks(stack.log_path.read_bytes(), secrets)
    assert not leaks(stack.cluster_json.read_bytes(), secrets)
    assert stack.pid is not None
    assert not leaks(Path(f"/proc/{stack.pid}/cmdline").read_bytes(), secrets)
    assert oct(os.stat(tls / "keystore.password").st_mode & 0o777) == "0o600"
    assert oct(os.stat(tls / "client.key").st_mode & 0o777) == "0o600"
    if stack.kdc is not None:  # nor the Kerberos keys, over TLS
        assert not leaks(stack.log_path.read_bytes(),
                         keytab_keys(stack.kdc, stack.data_dir / "client.keytab"))
