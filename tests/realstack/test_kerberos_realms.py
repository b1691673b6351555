"""Two secured real clusters with their own Kerberos identities, migrated in one process.

* Two realms, no trust: ``alpha`` and ``beta``, each a ``realstack`` stack with its own KDC
  and its realm named after it (``ALPHA.TEST``, ``BETA.TEST``), each cluster's own client
  principal, keytab and ``krb5.conf``. prepare, the copy, a replay of the writes made after
  it (WebHDFS SPNEGO on alpha, Thrift SASL on beta) and the validation run in this process
  and end in a match, the target equal to the source cell for cell; the client tickets last
  15 s, and the steps after they expired log in again in both realms (the KDCs' logs). Then
  the same between the same two stacks over HBase's own RPC (``client = "native"``, no
  gateway in the migration's view of either: SASL GSSAPI on the master and region servers of
  each, each as its own realm's principal): a read of alpha and a write to beta, and
  prepare, the copy, a replay and the validation of another table, ending in a match.
* One realm: ``gamma`` started in alpha's realm (``--kdc``: alpha's KDC, a client principal
  of its own), the same steps from alpha to gamma in one process.
* No key of either keytab appears in the ledger or the logs.

At most two secured JVMs run at once: beta is stopped before gamma starts.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from hbase_migrate.cluster.auth import kerberos
from hbase_migrate.cluster.sizing import ClientSettings
from hbase_migrate.config import IN_PROCESS, load_config
from hbase_migrate.lifecycle import prepare, replay, snapshot, validate
from hbase_migrate.rpc.cluster import NativeCluster
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.validate.compare import compare_tables
from minihbase.workload import Workload, WorkloadSpec
from realstack.hbase import CLIENT_PRINCIPAL, RealHBase, RealHBaseOptions
from stackprocs.admin_client import call_admin
from tests.realstack.fixtures import (
    SECURED_TICKET,
    borrowed,
    kerberos_environment,
    keytab_keys,
    leaks,
    native_cluster_json,
    stack_endpoints,
)

pytestmark = [pytest.mark.own_stack, pytest.mark.integration, pytest.mark.realstack]
TABLE = "realm_orders"
TICKET = SECURED_TICKET  # seconds a client ticket lasts (beta's and gamma's as alpha's)


def options(name: str, kdc: Path | None = None) -> RealHBaseOptions:
    return RealHBaseOptions(region_servers=1, heap="768m", kerberos=True, name=name,
                            client_ticket_lifetime=f"{TICKET}s",
                            kdc=str(kdc) if kdc else None)


@pytest.fixture(scope="module")
def alpha(secured_stack: RealHBase) -> Iterator[RealHBase]:
    yield from borrowed(secured_stack)  # realm ALPHA.TEST, privacy QOP


def start(stack: RealHBase) -> Iterator[RealHBase]:
    with kerberos_environment():
        kerberos.forget()
        stack.start()
        try:
            yield stack
        finally:
            stack.stop()
            kerberos.forget()


@pytest.fixture
def beta(alpha: RealHBase, tmp_path: Path) -> Iterator[RealHBase]:
    yield from start(RealHBase(tmp_path / "beta", options("beta")))


@pytest.fixture
def gamma(alpha: RealHBase, tmp_path: Path) -> Iterator[RealHBase]:
    yield from start(RealHBase(tmp_path / "gamma", options("gamma", kdc=alpha.data_dir)))


def logins(stack: RealHBase, principal: str) -> int:
    """AS requests the KDC of ``stack`` issued for ``principal``."""
    assert stack.kdc is not None
    text = (stack.kdc.data_dir / "kdc-events.log").read_text(errors="replace")
    return len(re.findall(rf"AS_REQ .*ISSUE: .* {re.escape(principal)} for krbtgt", text))


def migrate(source: RealHBase, target: RealHBase, folder: Path, seed: int, *,
            table: str = TABLE, native: bool = False) -> None:
    """prepare, copy, replay and validate from ``source`` to ``target`` in this process,
    through the expiry of the first tickets (over HBase's own RPC when ``native``, through
    ``cluster.json`` files naming no gateway); the target ends equal to the source."""
    found = stack_endpoints(source)
    runner = Workload(found, WorkloadSpec(table, seed, 150, rate=50))
    try:
        runner.ensure_table()
        runner.run()
    finally:
        runner.close()
    clusters = [source.cluster_json, target.cluster_json]
    if native:
        for stack in (source, target):
            (folder / stack.options.name).mkdir()
        clusters = [native_cluster_json(stack, folder / stack.options.name)
                    for stack in (source, target)]
        for path in clusters:
            path.chmod(0o600)  # it names a keytab
    config = folder / "migration.toml"
    config.write_text(
        f'[migration]\nname = "realms"\nledger = "sqlite:///{folder / "ledger.db"}"\n'
        f'[source]\ncluster_json = "{clusters[0]}"\n'
        f'[target]\ncluster_json = "{clusters[1]}"\n'
        f'[[tables]]\nsource = "{table}"\n'
        f'[replay]\nroll_period = "1h"\nmargin = "1m"\n[spark]\nmaster = "{IN_PROCESS}"\n',
        encoding="utf-8")
    spec = load_config(config)
    for side in (spec.source, spec.target):
        assert side.endpoints().native is native and side.endpoints().kerberos
    began = time.monotonic()
    assert prepare(spec).passed
    copied = snapshot(spec).to_json()
    assert copied["cells"] > 0, copied
    runner = Workload(found, WorkloadSpec(table, seed + 1, 80, rate=50))  # after T0
    try:
        runner.run()
    finally:
        runner.close()
    call_admin(source.cluster_json, "roll")
    while time.monotonic() - began < TICKET + 2:  # the first tickets have expired
        time.sleep(0.5)
    caught_up = replay(spec).to_json()
    assert caught_up["cells"].get("Put", 0) > 0, caught_up
    matched = validate(spec, recompare_wait=0).to_json()
    assert matched["verdict"] == "match", matched
    target_found = stack_endpoints(target)
    with Thrift2Client(found.thrift2 or "", **found.client_auth) as src, \
            Thrift2Client(target_found.thrift2 or "", **target_found.client_auth) as dst:
        compared = compare_tables(src, dst, table, table)
    assert compared.equal and compared.source_cells > copied["cells"], compared


def principal_of(stack: RealHBase) -> str:
    found = stack_endpoints(stack)
    assert found.security is not None and found.security.principal
    return found.security.principal


def test_two_realms_without_trust_in_one_process(
        alpha: RealHBase, beta: RealHBase, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    assert alpha.kdc is not None and beta.kdc is not None
    assert (alpha.kdc.realm, beta.kdc.realm) == ("ALPHA.TEST", "BETA.TEST")
    assert alpha.kdc.port != beta.kdc.port
    source, target = principal_of(alpha), principal_of(beta)
    assert (source, target) == (f"{CLIENT_PRINCIPAL}@ALPHA.TEST", f"{CLIENT_PRINCIPAL}@BETA.TEST")
    before = logins(alpha, source), logins(beta, target)
    migrate(alpha, beta, tmp_path, seed=41)
    # Each realm's KDC logged its own principal in, again after the first ticket expired.
    assert logins(alpha, source) >= before[0] + 2 and logins(beta, target) >= before[1] + 2
    keys = keytab_keys(alpha.kdc, alpha.data_dir / "client.keytab") + \
        keytab_keys(beta.kdc, beta.data_dir / "client.keytab")
    assert not leaks((tmp_path / "ledger.db").read_bytes(), keys), "a keytab key in the ledger"
    assert not leaks(caplog.text, keys), "a keytab key in the logs"
    # Over HBase's own RPC, each cluster as its own realm's principal.
    source_found, target_found = stack_endpoints(alpha), stack_endpoints(beta)
    with NativeCluster.of(source_found, ClientSettings()) as src, \
            NativeCluster.of(target_found, ClientSettings()) as dst, \
            Thrift2Client(target_found.thrift2 or "", **target_found.client_auth) as check:
        read = [c for piece in src.scan(TABLE) for c in piece]
        assert read
        dst.create_table(replace(src.table_descriptor(TABLE), name="realm_read"))
        dst.write_cells("realm_read", read)
        assert [c for piece in check.scan("realm_read") for c in piece] == read
    native = tmp_path / "native"
    native.mkdir()
    migrate(alpha, beta, native, seed=43, table="realm_native", native=True)
    assert not leaks((native / "ledger.db").read_bytes(), keys), "a keytab key in the ledger"
    assert not leaks(caplog.text, keys), "a keytab key in the logs"


def test_one_realm_two_principals_in_one_process(
        alpha: RealHBase, gamma: RealHBase, tmp_path: Path) -> None:
    assert alpha.kdc is not None and gamma.kdc is not None
    assert gamma.kdc.realm == alpha.kdc.realm == "ALPHA.TEST"
    assert gamma.kdc.port == alpha.kdc.port  # alpha's KDC
    target = principal_of(gamma)
    assert target == f"{CLIENT_PRINCIPAL}/gamma@ALPHA.TEST"
    before = logins(alpha, target)
    migrate(alpha, gamma, tmp_path, seed=51)
    assert logins(alpha, target) >= before + 2
