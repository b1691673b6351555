"""Delegation tokens on the session's secured real HBase 2.6.1 (``secured_stack``: its own
KDC, ``hbase.rpc.protection`` = ``privacy,integrity,authentication``, HBase's
``TokenProvider`` on its regions).

* A token is obtained over HBase's RPC (Kerberos), then the native client reads and writes
  with it alone, at privacy and at integrity: the server says the connection is
  ``TOKEN``-authenticated (``WhoAmI``, and its security audit log), and what was written is
  read back through a Kerberos connection, an independent path.
* A token whose password or key is wrong is refused in one line naming the cluster and the
  server and what to do.
* The copy as Spark tasks (local mode): the driver obtains the token, the tasks' HBase
  connections authenticate with it (the server's audit log), the copy equals the source.
* Neither the token's password nor the keytab's keys reach the log, the ledger or the
  errors.

A secured cluster without ``TokenProvider`` is in ``test_tls_real`` (its own stack).
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from hbase_migrate.cluster.auth.tokens import Token, forget_tokens, use_token
from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.sizing import ClientSettings
from hbase_migrate.config import load_config
from hbase_migrate.hbase.connect import connect
from hbase_migrate.lifecycle import prepare, snapshot
from hbase_migrate.ranges.credentials import job_tokens
from hbase_migrate.rpc.cluster import NativeCluster
from hbase_migrate.rpc.digest import DigestMechanism
from hbase_migrate.rpc.sasl import SaslError
from hbase_migrate.rpc.tokens import obtain_token, who_am_i
from hbase_migrate.wal.model import cell_order
from minihbase.workload import Workload, WorkloadSpec
from realstack.hbase import RealHBase
from tests.realstack import fixtures
from tests.realstack.fixtures import (
    kerberos_environment,
    keytab_keys,
    leaks,
    native_cluster_json,
    stack_endpoints,
)
from tests.rpc.cells import FAMILIES, ROWS, SPLITS, every_kind

pytestmark = [pytest.mark.integration, pytest.mark.realstack]


@pytest.fixture(scope="module")
def endpoints(secured_stack: RealHBase) -> Iterator[ClusterEndpoints]:
    """The stack's, native (this process's Kerberos environment put back afterwards)."""
    with kerberos_environment():
        found = replace(stack_endpoints(secured_stack), client="native")
        assert found.security is not None and found.security.kerberos
        assert found.security.rpc_protection == fixtures.SECURED_PROTECTION
        yield found


@pytest.fixture(scope="module")
def token(endpoints: ClusterEndpoints) -> Token:
    """A token obtained over Kerberos (no token in use yet: GSSAPI)."""
    forget_tokens()
    with connect(endpoints, ClientSettings()) as kerberos:
        assert isinstance(kerberos, NativeCluster)
        assert who_am_i(kerberos)[1] == "KERBEROS"
        got = obtain_token(kerberos, endpoints.name)
    assert got is not None
    return got


@pytest.fixture(autouse=True)
def no_token_afterwards() -> Iterator[None]:
    yield
    forget_tokens()


def secrets(token: Token, stack: RealHBase) -> list[str]:
    keys = keytab_keys(stack.kdc, stack.data_dir / "client.keytab") if stack.kdc else []
    return [token.password.hex(), base64.b64encode(token.password).decode(), *keys]


def test_the_token_names_the_client_principal(token: Token,
                                              endpoints: ClusterEndpoints) -> None:
    assert endpoints.security is not None
    assert token.owner == endpoints.security.principal
    assert token.cluster == endpoints.name and token.expires_ms > 0
    assert len(token.password) >= 16  # an HMAC of the identifier
    assert token.password.hex() not in repr(token)


@pytest.mark.parametrize("protection", ["privacy", "integrity"])
def test_reads_and_writes_authenticated_by_token(
        token: Token, endpoints: ClusterEndpoints, secured_stack: RealHBase, protection: str,
        caplog: pytest.LogCaptureFixture) -> None:
    assert endpoints.security is not None
    caplog.set_level(logging.DEBUG)
    table = f"tokens_{protection}"
    with_token = replace(endpoints, security=replace(endpoints.security,
                                                     rpc_protection=protection))
    use_token(token)
    with connect(with_token, ClientSettings()) as native:
        assert isinstance(native, NativeCluster)
        user, method = who_am_i(native)  # the server's own view (a short user name)
        assert method == "TOKEN" and token.owner.startswith(f"{user}@")
        native.create_table(TableDescriptor(table, FAMILIES), SPLITS)  # the master's
        written = every_kind(ROWS)
        native.write_cells(table, written)
        raw = [c for piece in native.scan(table, raw=True) for c in piece]
        conn = native.data.pool.get(*native.data.locator.meta_server())
        layer = conn._layer  # what negotiation agreed
        assert isinstance(layer._mechanism, DigestMechanism)
        assert layer._mechanism.qop == {"privacy": 4, "integrity": 2}[protection]
    assert raw == sorted(written, key=cell_order)
    forget_tokens()
    with connect(endpoints, ClientSettings()) as kerberos:  # read back by Kerberos
        assert isinstance(kerberos, NativeCluster)
        assert who_am_i(kerberos)[1] == "KERBEROS"
        assert [c for piece in kerberos.scan(table, raw=True) for c in piece] == raw
    assert not leaks(caplog.text, secrets(token, secured_stack))
    audit = secured_stack.log_path.read_text(encoding="utf-8", errors="replace")
    assert f"Auth successful for {token.owner} (auth:TOKEN)" in audit


@pytest.mark.parametrize("damage", ["password", "key"])
def test_a_bad_token_is_refused_in_one_line(
        token: Token, endpoints: ClusterEndpoints, secured_stack: RealHBase, damage: str) -> None:
    if damage == "password":
        bad = replace(token, password=bytes(b ^ 0x5A for b in token.password))
    else:  # a key the cluster never had: an identifier naming key id 424242
        from hbase_migrate.wal.protobuf import Message, bytes_field, varint_field

        m = Message(token.identifier[4:], "TokenIdentifier")
        body = (varint_field(1, 0) + bytes_field(2, m.req_bytes(2, "username"))
                + varint_field(3, 424242) + varint_field(4, m.opt_int(4) or 0)
                + varint_field(5, m.opt_int(5) or 0) + varint_field(6, m.opt_int(6) or 0))
        bad = Token.of(token.cluster, len(body).to_bytes(4, "big") + body, token.password)
    use_token(bad)
    with connect(endpoints, ClientSettings()) as native:
        assert isinstance(native, NativeCluster)
        with pytest.raises(SaslError) as refused:
            native.get("hbase:meta", b"")
    message = str(refused.value)
    assert "\n" not in message
    assert f"cluster {endpoints.name!r}" in message
    assert re.match(r"server [\w.-]+:\d+: SASL DIGEST-MD5 ", message), message
    assert "InvalidToken" in message or "DIGEST-MD5" in message
    assert "run the job again" in message
    assert not leaks(message, secrets(token, secured_stack))


def test_a_spark_copy_authenticates_by_token(
        endpoints: ClusterEndpoints, secured_stack: RealHBase, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    """The copy as Spark tasks (local mode, a worker process of its own): the driver
    obtains the cluster's token and the tasks' HBase connections authenticate with it, as
    the region server's security audit log says of the connections made during the copy."""
    pytest.importorskip("pyspark")
    forget_tokens()
    caplog.set_level(logging.DEBUG)
    source, target = "tokens_spark", "tokens_spark_copy"
    writer = Workload(endpoints, WorkloadSpec(source, 71, 150))
    try:
        writer.ensure_table()
        writer.run()
    finally:
        writer.close()
    cluster = native_cluster_json(secured_stack, tmp_path)
    cluster.chmod(0o600)  # it names a keytab
    ledger = tmp_path / "ledger.db"
    config = tmp_path / "migration.toml"
    config.write_text(
        f'[migration]\nname = "tokens"\nledger = "sqlite:///{ledger}"\n'
        f'[source]\ncluster_json = "{cluster}"\n[target]\ncluster_json = "{cluster}"\n'
        f'[[tables]]\nsource = "{source}"\ntarget = "{target}"\n'
        '[spark]\nmaster = "local[1]"\n', encoding="utf-8")
    spec = load_config(config)
    assert prepare(spec).passed
    before = token_connections(secured_stack)
    assert snapshot(spec).to_json()["cells"] > 0
    assert token_connections(secured_stack) > before  # the tasks' connections, by token
    (token,) = job_tokens((endpoints,))  # the driver's, kept for the process
    assert token.owner == (endpoints.security.principal if endpoints.security else None)
    with connect(endpoints, ClientSettings()) as kerberos:
        copied = [c for piece in kerberos.scan(target) for c in piece]
        assert copied and copied == [c for piece in kerberos.scan(source) for c in piece]
    for where in (caplog.text, ledger.read_bytes()):
        assert not leaks(where, secrets(token, secured_stack))


def token_connections(stack: RealHBase) -> int:
    """Connections HBase's servers took as token-authenticated (its security audit log)."""
    audit = stack.log_path.read_text(encoding="utf-8", errors="replace")
    return len(re.findall(r"Connection from .*\(auth:TOKEN\), service=ClientService", audit))
