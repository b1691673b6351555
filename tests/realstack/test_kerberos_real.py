"""Kerberos end to end against a real KDC and a secured real HBase: the session's ``realstack
start --kerberos`` stack (``secured_stack``, shared with the realms module; MIT KDC
with a temporary realm; ZooKeeper with SASL, HDFS
with SPNEGO WebHDFS, HBase and both Thrift gateways with SASL at QOP auth-conf), whose client
principal's tickets last 15 s.

* The servers refuse clients without credentials (raw clients: the proof the stack is
  secured), and the project's clients say so in one line.
* Each bad credential gives its one-line error, exit 2, from the real command line.
* The lifecycle runs with a secured source and a secured target: two tables of the one
  secured stack (a second secured JVM is more than this machine's tests should start), a
  replay ``--follow`` under a workload that lasts longer than a ticket (the KDC's log shows
  the re-logins), and the target equals the source cell for cell.
* No key of the keytab appears in the ledger, the report, ``status``, the logs or ``ps``.
* Spark tasks (``local[2]``) log in from the keytab themselves.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import SessionClosedRequireSaslError

from hbase_migrate.cluster.auth.kerberos import KerberosError
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.storage.walstore import WebHdfsWalStore
from hbase_migrate.cluster.zk.zookeeper import HBaseZooKeeper
from hbase_migrate.config import IN_PROCESS, load_config
from hbase_migrate.lifecycle import cutover_check, prepare, report, snapshot, validate
from hbase_migrate.thrift.thrift1 import Thrift1Client
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.validate.compare import compare_tables
from minihbase.workload import Workload, WorkloadSpec
from realstack.hbase import CLIENT_PRINCIPAL, RealHBase
from stackprocs.admin_client import call_admin
from tests.realstack.fixtures import SECURED_TICKET, borrowed, leaks, stack_endpoints
from tests.realstack.fixtures import keytab_keys as fixture_keytab_keys

pytestmark = [pytest.mark.integration, pytest.mark.realstack]
REPO = Path(__file__).resolve().parents[2]
SOURCE, TARGET = "krb_orders", "krb_orders_copy"
TICKET = SECURED_TICKET  # seconds a client ticket lasts


@pytest.fixture(scope="module")
def secured(secured_stack: RealHBase) -> Iterator[RealHBase]:
    yield from borrowed(secured_stack)


def keytab_keys(stack: RealHBase) -> list[str]:
    """The keys the client keytab holds, as hex (what must never leak)."""
    assert stack.kdc is not None
    return fixture_keytab_keys(stack.kdc, stack.data_dir / "client.keytab")


# --- the servers refuse clients without credentials ---------------------------------------


def test_secured_servers_refuse_clients_without_credentials(secured: RealHBase) -> None:
    found = stack_endpoints(secured)
    assert found.kerberos and found.security is not None
    assert found.security.qop == "auth-conf"
    assert found.thrift2 and found.zookeeper and found.webhdfs
    # Raw clients, not the project's: ZooKeeper closes the session, WebHDFS answers 401.
    plain = KazooClient(hosts=found.zookeeper, timeout=5)
    plain.start(timeout=10)
    try:
        with pytest.raises(SessionClosedRequireSaslError):
            plain.get_children("/hbase")
    finally:
        plain.stop()
        plain.close()
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{found.webhdfs}/webhdfs/v1/?op=LISTSTATUS", timeout=10)
    assert refused.value.code == 401
    # The project's clients without credentials: one line each, naming what to do.
    with Thrift2Client(found.thrift2, timeout=3, retries=0, cluster="secured") as t2, \
            pytest.raises(KerberosError, match=r"requires SASL .* no credentials"):
        t2.table_exists("hbase:meta")
    with Thrift1Client(found.thrift, timeout=3, retries=0, cluster="secured") as t1, \
            pytest.raises(KerberosError, match=r"requires SASL .* no credentials"):
        t1.tables()
    with pytest.raises(KerberosError, match=r"WebHDFS .* requires SPNEGO"):
        WebHdfsWalStore(found.webhdfs, found.hbase_root or "/hbase").list_wal_files()
    with HBaseZooKeeper(found.zookeeper, cluster="secured") as zk, \
            pytest.raises(KerberosError, match=r"ZooKeeper .* requires SASL"):
        zk.master()
    # With the cluster's security every one of them answers.
    with Thrift2Client(found.thrift2, **found.client_auth) as t2:
        assert t2.table_exists("hbase:meta")
    with Thrift1Client(found.thrift, **found.client_auth) as t1:
        assert isinstance(t1.tables(), list)
    with HBaseZooKeeper(found.zookeeper, **found.client_auth) as zk:
        assert zk.master() is not None
    store = WebHdfsWalStore(found.webhdfs, found.hbase_root or "/hbase", **found.client_auth)
    assert store.list_wal_files()  # the region server's WAL, read as the client principal


# --- each bad credential: one line, exit 2 ------------------------------------------------


def variant(stack: RealHBase, folder: Path, name: str, **security: str | None) -> Path:
    """A migration config whose clusters are ``stack`` with ``security`` changed."""
    data = json.loads(stack.cluster_json.read_text())
    data["security"] = {k: v for k, v in {**data["security"], **security}.items()
                        if v is not None}
    if security.get("auth") == "none":
        del data["security"]
    cluster = folder / f"{name}.cluster.json"
    cluster.write_text(json.dumps(data), encoding="utf-8")
    cluster.chmod(0o600)  # it names a keytab (else a warning line)
    config = folder / f"{name}.toml"
    config.write_text(
        f'[migration]\nname = "{name}"\nledger = "sqlite:///{folder / name}.db"\n'
        f'[source]\ncluster_json = "{cluster}"\n[target]\ncluster_json = "{cluster}"\n'
        f'[[tables]]\nsource = "{SOURCE}"\n[gateway]\ncall_timeout = "3s"\n',
        encoding="utf-8")
    return config


def test_each_bad_credential_is_one_line_naming_cluster_endpoint_and_principal(
        secured: RealHBase, tmp_path: Path) -> None:
    assert secured.kdc is not None
    kdc, realm = secured.kdc, secured.kdc.realm
    principal = f"{CLIENT_PRINCIPAL}@{realm}"
    expired_cache = tmp_path / "expired.ccache"
    subprocess.run(["kinit", "-l", "2s", "-c", f"FILE:{expired_cache}", "-k", "-t",
                    str(secured.data_dir / "client.keytab"), principal], env=kdc.environment(),
                   check=True)
    stale = kdc.add_principals(tmp_path / "stale.keytab", "stale")
    kdc.kadmin("cpw -randkey stale")  # the keytab's keys are now old ones
    skewed = tmp_path / "krb5-skewed.conf"  # a client that does not correct its clock
    skewed.write_text(kdc.krb5_conf.read_text().replace(
        "[libdefaults]\n", "[libdefaults]\n kdc_timesync = 0\n"), encoding="utf-8")
    no_cache = {"KRB5CCNAME": f"FILE:{tmp_path / 'none.ccache'}"}
    cases: dict[str, tuple[Path, str, dict[str, str], list[str]]] = {
        "no_ticket": (variant(secured, tmp_path, "no_ticket", keytab=None), "no ticket for "
                      f"{principal}: run kinit", no_cache, []),
        "expired": (variant(secured, tmp_path, "expired", keytab=None), "has expired",
                    {"KRB5CCNAME": f"FILE:{expired_cache}"}, []),
        "wrong_principal": (variant(secured, tmp_path, "wrong_principal",
                                    principal=f"nobody@{realm}"),
                            f"principal nobody@{realm}: wrong principal", {}, []),
        "unreadable_keytab": (variant(secured, tmp_path, "unreadable_keytab",
                                      keytab=str(tmp_path / "missing.keytab")),
                              "missing.keytab is unreadable", {}, []),
        "wrong_keytab": (variant(secured, tmp_path, "wrong_keytab", principal=f"stale@{realm}",
                                 keytab=str(stale)), "wrong keytab", {}, []),
        "qop_mismatch": (variant(secured, tmp_path, "qop_mismatch", qop="auth"),
                         "QOP mismatch: qop = 'auth' but the gateway offers auth-conf", {}, []),
        "clock_skew": (variant(secured, tmp_path, "clock_skew", krb5_conf=str(skewed)),
                       "clock skew", {}, ["faketime", "-f", "+2h"]),
        "no_credentials": (variant(secured, tmp_path, "no_credentials", auth="none"),
                           "requires SASL (Kerberos) authentication and this client has no "
                           "credentials", {}, []),
    }
    if not shutil.which("faketime"):
        del cases["clock_skew"]  # scripts/system-deps.sh test installs it
    # the two-second ticket must have run out before its case runs (klist -s: 1 once expired)
    deadline = time.monotonic() + 30
    while subprocess.run(["klist", "-s", "-c", f"FILE:{expired_cache}"],
                         env=kdc.environment(), check=False).returncode == 0:
        assert time.monotonic() < deadline, "a ticket of two seconds still valid after 30 s"
        time.sleep(0.5)
    # Each case in its own process (one Kerberos identity a process), without the Kerberos
    # environment this process took when it logged in.
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KRB5")}
    running = {name: subprocess.Popen(
        [*prefix, sys.executable, "-m", "hbase_migrate", "prepare", "--config", str(config)],
        cwd=REPO, env={**clean, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True) for name, (config, _, env, prefix) in cases.items()}
    for name, proc in running.items():
        _, err = proc.communicate(timeout=120)
        lines = err.strip().splitlines()
        assert proc.returncode == 2, (name, err)
        assert len(lines) == 1 and lines[0].startswith("hbase-migrate: error: "), (name, err)
        assert cases[name][1] in lines[0], (name, lines[0])
        assert f"cluster '{secured.options.name}'" in lines[0], lines[0]
        if name not in ("unreadable_keytab",):  # an endpoint or principal in the line
            assert "127.0.0.1:" in lines[0] or "@" in lines[0], lines[0]


# --- the lifecycle, secured on both sides, through ticket expiry --------------------------


def configure(stack: RealHBase, folder: Path) -> Path:
    path = folder / "migration.toml"
    path.write_text(
        f'[migration]\nname = "krb"\nledger = "sqlite:///{folder / "ledger.db"}"\n'
        f'[source]\ncluster_json = "{stack.cluster_json}"\n'
        f'[target]\ncluster_json = "{stack.cluster_json}"\n'
        f'[[tables]]\nsource = "{SOURCE}"\ntarget = "{TARGET}"\n'
        f'[replay]\nroll_period = "1h"\nmargin = "1m"\n[spark]\nmaster = "{IN_PROCESS}"\n',
        encoding="utf-8")
    return path


def workload(found: ClusterEndpoints, seed: int, ops: int | None = None,
             duration: float | None = None) -> None:
    runner = Workload(found, WorkloadSpec(SOURCE, seed, ops, duration=duration, rate=20))
    try:
        runner.ensure_table()
        runner.run()
    finally:
        runner.close()


def logins(stack: RealHBase, since: int) -> int:
    """AS requests of the client principal in the KDC's log after byte ``since``."""
    text = (stack.data_dir / "kdc-events.log").read_bytes()[since:].decode(errors="replace")
    return len(re.findall(rf"AS_REQ .*ISSUE: .* {CLIENT_PRINCIPAL}@", text))


def test_lifecycle_secured_source_and_target_rides_out_ticket_expiry_and_leaks_nothing(
        secured: RealHBase, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    found = stack_endpoints(secured)
    keys = keytab_keys(secured)
    workload(found, seed=23, ops=120)
    config = configure(secured, tmp_path)
    spec = load_config(config)
    assert prepare(spec).passed
    copied = snapshot(spec).to_json()
    assert copied["cells"] > 0

    kdc_log = (secured.data_dir / "kdc-events.log").stat().st_size
    began = time.monotonic()
    follow = subprocess.Popen(
        [sys.executable, "-m", "hbase_migrate", "replay", "--config", str(config),
         "--follow", "--interval", "2s"], cwd=REPO, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert follow.stdout is not None
    runs: list[float] = []  # when the follow printed each run's result
    lines: list[str] = []

    def read(stream: IO[str]) -> None:
        for line in stream:
            lines.append(line)
            if line.startswith("result: ok"):
                runs.append(time.monotonic() - began)

    reader = threading.Thread(target=read, args=(follow.stdout,), daemon=True)
    reader.start()
    try:
        live = threading.Thread(target=workload, args=(found, 24),
                                kwargs={"duration": TICKET * 1.5})
        live.start()  # writes for longer than a ticket lasts
        time.sleep(5)
        ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True,
                            check=True).stdout
        live.join()
        call_admin(secured.cluster_json, "roll")
        time.sleep(8)  # some more runs of the follow after the roll
    finally:
        follow.send_signal(signal.SIGINT)
        _, err = follow.communicate(timeout=120)
        reader.join(10)
    out = "".join(lines)
    assert follow.returncode == 0, err[-3000:]
    assert "error" not in err.lower(), err[-3000:]
    # Runs kept succeeding after the follow's first tickets expired (each run asks WebHDFS
    # with SPNEGO: a new service ticket, from a TGT logged in again from the keytab) ...
    assert [t for t in runs if t > TICKET + 5], (runs, out[-2000:])
    # ... and the KDC saw the client principal log in again during the follow.
    assert logins(secured, kdc_log) >= 2, "no re-login during the follow"

    matched = validate(spec, recompare_wait=0).to_json()
    assert matched["verdict"] == "match", matched
    with Thrift2Client(found.thrift2 or "", **found.client_auth) as src, \
            Thrift2Client(found.thrift2 or "", **found.client_auth) as tgt:
        compared = compare_tables(src, tgt, SOURCE, TARGET)
    assert compared.equal and compared.source_cells > 0
    gate = cutover_check(spec).to_json()
    assert gate["verdict"] in ("go", "no-go"), gate
    page = tmp_path / "report.html"
    report(spec, out=page)

    status = subprocess.run([sys.executable, "-m", "hbase_migrate", "status", "--config",
                             str(config), "--json"], cwd=REPO, capture_output=True, text=True,
                            check=True, timeout=120).stdout
    for where, data in {"ledger": (tmp_path / "ledger.db").read_bytes(), "status": status,
                        "report": page.read_bytes(), "follow stdout": out,
                        "follow stderr": err, "logs": caplog.text, "ps": ps}.items():
        assert not leaks(data, keys), f"a keytab key in the {where}"


def test_spark_tasks_authenticate_from_the_keytab(secured: RealHBase, tmp_path: Path) -> None:
    """The copy and the comparison as Spark ``local[2]`` tasks: each task's process logs in
    from the cluster's keytab itself (the same path on every worker of this machine)."""
    pytest.importorskip("pyspark")
    found = stack_endpoints(secured)
    table, copy = "krb_spark", "krb_spark_copy"
    runner = Workload(found, WorkloadSpec(table, 31, 80))
    try:
        runner.ensure_table()
        runner.run()
    finally:
        runner.close()
    config = tmp_path / "spark.toml"
    config.write_text(
        f'[migration]\nname = "krb_spark"\nledger = "sqlite:///{tmp_path / "ledger.db"}"\n'
        f'[source]\ncluster_json = "{secured.cluster_json}"\n'
        f'[target]\ncluster_json = "{secured.cluster_json}"\n'
        f'[[tables]]\nsource = "{table}"\ntarget = "{copy}"\n', encoding="utf-8")
    spec = load_config(config)
    assert prepare(spec).passed
    copied = snapshot(spec, master="local[2]").to_json()
    assert copied["engine"] == "local[2]" and copied["cells"] > 0, copied
    matched = validate(spec, master="local[2]", recompare_wait=0).to_json()
    assert matched["verdict"] == "match", matched
    with Thrift2Client(found.thrift2 or "", **found.client_auth) as src, \
            Thrift2Client(found.thrift2 or "", **found.client_auth) as tgt:
        compared = compare_tables(src, tgt, table, copy)
    assert compared.equal and compared.source_cells == copied["cells"]
