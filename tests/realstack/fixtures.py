"""The real HBase stack as a pytest fixture: one JVM for the whole session (HBase 2.6.1, or
``HBASE_MIGRATE_REAL_HBASE_VERSION``; two region servers, plain WALs), shared by every
suite that runs on both stacks. Tests skip with the reason when Java 17 or Maven is
missing, or when the stack cannot be built."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.cluster.auth import kerberos
from hbase_migrate.cluster.endpoints import ClusterEndpoints, load_cluster_json
from hbase_migrate.rpc.admin import NativeAdmin
from minihbase.regionserver import WalSettings
from realstack.hbase import DEFAULT_VERSION, RealHBase, RealHBaseOptions, has_gateways
from realstack.kdc import Kdc
from realstack.maven import RealStackError
from stackprocs.admin_client import call_admin
from tests.realstack.stacks import Stacks, restore_region_servers
from tests.support.minicluster import EmbeddedClusters

STACKS = ["minihbase", pytest.param("real", marks=pytest.mark.realstack)]
# The HBase 2.x version of the session's stack and of the no-gateway lifecycle's stacks
# (``make sweep-2x`` sets it; the rest of the suite expects the default).
REAL_HBASE_VERSION = os.environ.get("HBASE_MIGRATE_REAL_HBASE_VERSION", DEFAULT_VERSION)


def real_stack_missing() -> str | None:
    """Why the real stack cannot run here, or None."""
    java_home = os.environ.get("JAVA_HOME")
    if not shutil.which("java") and not (java_home and os.path.exists(f"{java_home}/bin/java")):
        return "no Java on PATH (scripts/system-deps.sh test installs a JDK 17)"
    if not shutil.which("mvn"):
        return "no Maven on PATH (scripts/system-deps.sh test installs maven)"
    if not shutil.which("javac") and not (java_home and os.path.exists(f"{java_home}/bin/javac")):
        return "no javac (a JDK, not only a JRE) on PATH"
    return None


def skip_without_real_stack() -> None:
    reason = real_stack_missing()
    if reason:
        pytest.skip(f"real HBase stack: {reason}")


@pytest.fixture(scope="session")
def real_hbase(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealHBase]:
    """Real Apache HBase on loopback ports for the session (stopped at its end), with a
    replication peer ``1`` that nobody answers for (its queues hold the WALs), and its
    Thrift gateways where hbase-thrift of the version can be had (else none: ``client =
    native``). The heap holds the memstores and flushes of multi-MB cells
    (``test_large_cells_real``: 768 MB ran out flushing them while 10 MB puts and scans were
    served; 1536 MB stalled once under the whole suite)."""
    skip_without_real_stack()
    try:
        gateways = has_gateways(REAL_HBASE_VERSION)
    except RealStackError as exc:
        pytest.fail(f"real HBase {REAL_HBASE_VERSION} cannot be built: {exc}")
    yield from running(RealHBase(tmp_path_factory.mktemp("realhbase"), RealHBaseOptions(
        hbase_version=REAL_HBASE_VERSION, region_servers=2, heap="2g", replication_peer="1",
        gateways=gateways)), f"real HBase {REAL_HBASE_VERSION}")


def running(stack: RealHBase, what: str) -> Iterator[RealHBase]:
    """``stack`` started (a test failure naming ``what`` when it cannot), then stopped."""
    try:
        stack.start()
    except RealStackError as exc:
        pytest.fail(f"{what} did not start: {exc}")
    try:
        yield stack
    finally:
        stack.stop()


@pytest.fixture(scope="session")
def real_stacks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stacks]:
    """The session's real stacks by configuration (:mod:`tests.realstack.stacks`): a module
    fixture borrows one with ``real_stacks.lend(options)``; all stop at the session's end."""
    skip_without_real_stack()
    stacks = Stacks(tmp_path_factory)
    try:
        yield stacks
    finally:
        stacks.close()


# The configurations more than one module runs on, each a module fixture borrowing it from
# real_stacks (tests/conftest.py puts the modules of one next to each other, SHARED_STACKS).
# A second plain HBase beside the session's: one region server, its gateways; the target
# of test_snapshot_real and test_registry_real (whose migration, given hbase+rpc:// URIs
# alone, reaches no gateway of either side).
SECOND_HBASE = RealHBaseOptions(region_servers=1, heap="768m", name="target")


@pytest.fixture(scope="module")
def second_hbase(real_stacks: Stacks) -> Iterator[RealHBase]:
    """A second plain real HBase (:data:`SECOND_HBASE`), shared by the modules asking for
    it; a module leaves it as it found it but for tables of its own names."""
    with real_stacks.lend(SECOND_HBASE) as stack:
        yield stack


# HBase of the session's version with no Thrift gateway (HBase's RPC alone), two region
# servers: test_lifecycle_native_real's target and tests/bigtable/test_faults_real's source,
# each of which kills one of its region servers (the fixture starts a new one after).
NATIVE_HBASE = RealHBaseOptions(hbase_version=REAL_HBASE_VERSION, region_servers=2,
                                heap="768m", name="native", gateways=False)


@pytest.fixture(scope="module")
def native_hbase(real_stacks: Stacks) -> Iterator[RealHBase]:
    """A real HBase reached over its RPC alone (:data:`NATIVE_HBASE`), shared by the modules
    asking for it; after each, a region server it killed is replaced by a new one."""
    with real_stacks.lend(NATIVE_HBASE) as stack:
        yield stack
        restore_region_servers(stack)


# HBase 3.0.0-alpha-4, one region server, no gateway: lent to test_hfile_writer_real3 and
# test_bulk_load_rpc_real3 (make test-stacks), started once for both.
HBASE_3 = RealHBaseOptions(hbase_version="3.0.0-alpha-4", region_servers=1, heap="1g",
                           gateways=False)


SHARED_STACKS = ("second_hbase", "native_hbase")  # the fixtures above, in the order their
#                                                    modules run


@pytest.fixture(params=STACKS)
def source_cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A source cluster on either stack, as its ``cluster.json`` describes it (plus the key
    ``cluster_json``, its path): an embedded cluster of two region servers rolling hourly,
    or the session's real HBase."""
    if request.param == "real":
        real = request.getfixturevalue("real_hbase")
        yield {**real.described, "cluster_json": real.cluster_json}
        return
    with EmbeddedClusters(tmp_path) as embedded:
        mini = embedded("source", folder=tmp_path / "src",
                        wal=WalSettings(region_servers=2, roll_period=3600))
        path = mini.write_cluster_json()
        yield {**json.loads(path.read_text()), "cluster_json": path}


def skip_without_kdc() -> None:
    if not (shutil.which("krb5kdc") or os.path.exists("/usr/sbin/krb5kdc")):
        pytest.skip("no MIT Kerberos KDC (scripts/system-deps.sh test installs krb5-kdc)")


@contextmanager
def kerberos_environment() -> Iterator[None]:
    """This process's Kerberos environment (what ``login()`` set, the identity it holds) put
    back as it was afterwards."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
        kerberos.forget()


def kerberos_stack(folder: Path, options: RealHBaseOptions) -> Iterator[RealHBase]:
    """A secured real stack (its own KDC) for a module fixture, stopped afterwards; this
    process's Kerberos environment is put back as it was."""
    skip_without_real_stack()
    skip_without_kdc()
    with kerberos_environment():
        stack = RealHBase(folder, options)
        stack.start()
        try:
            yield stack
        finally:
            stack.stop()


SECURED_TICKET = 15  # seconds a client ticket of the shared secured stack lasts
SECURED_PROTECTION = "privacy,integrity,authentication"  # its hbase.rpc.protection


@pytest.fixture(scope="session")
def secured_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealHBase]:
    """One Kerberos-secured real stack for the session (realm ALPHA.TEST of its own KDC,
    the gateways' privacy QOP, HBase's RPC offering every protection, its clients taking
    privacy first; client tickets of SECURED_TICKET s), started once for every module that
    needs one; each borrows it (:func:`borrowed`) and stops nothing."""
    yield from kerberos_stack(tmp_path_factory.mktemp("alpha"), RealHBaseOptions(
        region_servers=1, heap="1g", kerberos=True, qop="auth-conf",
        rpc_protection=SECURED_PROTECTION, client_ticket_lifetime=f"{SECURED_TICKET}s",
        name="alpha"))


def borrowed(stack: RealHBase) -> Iterator[RealHBase]:
    """``stack`` for a module fixture, this process's Kerberos environment put back as it
    was after the module."""
    with kerberos_environment():
        yield stack


def keytab_keys(kdc: Kdc, keytab: Path) -> list[str]:
    """The keys ``keytab`` holds, as hex (what must never leak)."""
    listed = subprocess.run(["klist", "-k", "-K", str(keytab)], env=kdc.environment(),
                            capture_output=True, text=True, check=True).stdout
    keys = re.findall(r"\(0x([0-9a-f]{32,})\)", listed)
    assert keys, listed
    return keys


def leaks(text: bytes | str, secrets: list[str]) -> list[str]:
    """Which of ``secrets`` (hex keys, or any text) ``text`` holds, as text or as bytes."""
    data = text.encode() if isinstance(text, str) else text
    found = []
    for secret in secrets:
        raw = bytes.fromhex(secret) if re.fullmatch(r"(?:[0-9a-f]{2})+", secret) else None
        if secret.encode() in data.lower() or secret.encode() in data or (raw and raw in data):
            found.append(secret)
    return found


def stack_endpoints(stack: RealHBase) -> ClusterEndpoints:
    """What a stack's ``cluster.json`` says."""
    return load_cluster_json(stack.cluster_json)


# What a real stack's cluster.json names that a migration over HBase's RPC is not given.
NOT_FOR_STEPS = ("thrift", "thrift2", "admin")


def native_cluster_json(real: RealHBase, folder: Path) -> Path:
    """The real cluster's ``cluster.json`` with its gateways and its admin endpoint (the
    tests' own, to stage faults) left out: what a migration over HBase's RPC is given.
    Readable by its owner only (it may name a keytab)."""
    data = json.loads(real.cluster_json.read_text(encoding="utf-8"))
    for key in (*NOT_FOR_STEPS, "client"):
        data.pop(key, None)
    path = folder / "native.cluster.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    path.chmod(0o600)
    return path


def read_requests(stack: RealHBase, table: str) -> int:
    """The read requests ``table``'s regions served, as their region servers count them
    (``GetRegionLoad``: each region's ``readRequestCount`` metric)."""
    described = stack.described
    with NativeAdmin(described["zookeeper"], described["znode_parent"]) as admin:
        return admin.read_requests(table)


def split_mid_copy(stack: RealHBase, table: str, at: bytes
                   ) -> tuple[Callable[[int, int], None], list[int]]:
    """A copy's ``progress`` callback that splits ``table`` of ``stack`` at ``at`` once,
    while ranges are left to copy, and the list that gets the table's region count after."""
    split: list[int] = []

    def progress(done: int, total: int) -> None:
        if not split and done < total:
            split.append(call_admin(stack.cluster_json, "split", {
                "table": table, "at": at.decode()})["regions"])

    return progress, split
