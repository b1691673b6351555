"""The lifecycle with ``client = "native"`` between two real Apache HBase stacks that run no
Thrift gateway (``RealHBaseOptions(gateways=False)``: their ``cluster.json`` names ZooKeeper,
WebHDFS and the HBase root only), so every step goes over HBase's own RPC: check, prepare
(descriptors, create with split keys), the copy by scan while a live writer puts and deletes
(every type) and a source region splits between two ranges' copies, the source's active
master killed (its backup takes over), replay from the real WALs while the writer goes on, a
target region split and a target region server killed during it, validate (a difference
made and repaired), the cutover check and the report; then the copy by HBase snapshot
(taken at the new master) of a second table, replayed and validated. HBase's own Java client
of each stack's version (``tests/realstack/java_cells.py``) checks both targets cell for
cell. The first table has a MOB family (``IS_MOB``, a 100-byte ``MOB_THRESHOLD``) with values
on both sides of the threshold, flushed into MOB files on the source before the copy and on
the target after it.

The target runs ``HBASE_MIGRATE_REAL_HBASE_VERSION`` (default 2.6.1; ``make sweep-2x`` runs
the other 2.x, ``make sweep-3x`` 3.0.0-alpha-4), the source
``HBASE_MIGRATE_REAL_HBASE_SOURCE_VERSION`` (default the target's; ``make sweep-3x`` moves
from 2.6.1 to 3.x and from 3.x to 3.x): one source (2 region servers, a backup master) for
the module and one target (2 region servers; plain, ``native_hbase``, shared with
tests/bigtable/test_faults_real). ``HBASE_MIGRATE_LIFECYCLE_SECURITY`` secures them
(``make sweep-secure`` runs both on 2.6.1, ``make sweep-3x`` ``privacy`` from 2.6.1 onto
3.0.0-alpha-4): ``privacy``, both Kerberos at
``hbase.rpc.protection`` privacy with one KDC (the source's realm, each cluster its own
client principal and keytab); ``realms``, each its own KDC and realm with no trust between
them. The migration is given each cluster's ``cluster.json`` naming neither gateway nor
admin endpoint (the admin endpoint only stages the faults) and logs in as each cluster's own
principal; the Java client logs in from each one's keytab."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.config import IN_PROCESS, MigrationSpec, load_config
from hbase_migrate.hbase.connect import connect
from hbase_migrate.lifecycle import cutover_check, prepare, replay, report, snapshot, validate
from hbase_migrate.lifecycle.check import check
from hbase_migrate.rpc.admin import NativeAdmin
from hbase_migrate.rpc.client import NativeClient
from hbase_migrate.wal.model import CellType
from realstack.hbase import RealHBase, RealHBaseOptions
from stackprocs.admin_client import call_admin
from tests.realstack.fixtures import (
    NOT_FOR_STEPS,
    kerberos_stack,
    native_cluster_json,
    running,
    skip_without_real_stack,
    split_mid_copy,
)
from tests.realstack.fixtures import REAL_HBASE_VERSION as VERSION
from tests.realstack.java_cells import differences, java_dump
from tests.realstack.lifecycle_parts import (
    FAMILIES,
    MOB,
    MOB_THRESHOLD,
    SPLITS,
    LiveWriter,
    history,
    identity,
    kill_a_table_server,
    mob_cells,
    mob_files,
)

pytestmark = [pytest.mark.own_stack, pytest.mark.integration, pytest.mark.realstack]
TABLE, SNAPPED = "native_life", "native_snap"
SOURCE_SPLIT, TARGET_SPLIT = b"row-0250", b"row-0150"  # the copy's and the replay's splits
SOURCE_VERSION = os.environ.get("HBASE_MIGRATE_REAL_HBASE_SOURCE_VERSION", VERSION)
SECURITIES = ("plain", "privacy", "realms")  # the stacks' security (see the docstring)
SECURITY = os.environ.get("HBASE_MIGRATE_LIFECYCLE_SECURITY", "plain")
if SECURITY not in SECURITIES:
    raise ValueError(f"HBASE_MIGRATE_LIFECYCLE_SECURITY must be one of {SECURITIES}, "
                     f"got {SECURITY!r}")


def stack(factory: pytest.TempPathFactory, name: str, version: str, masters: int,
          kdc: RealHBase | None = None) -> Iterator[RealHBase]:
    """A stack of ``version`` and ``SECURITY`` (Kerberos at privacy; with ``kdc``, in that
    stack's realm)."""
    options = RealHBaseOptions(hbase_version=version, region_servers=2, masters=masters,
                               heap="768m", name=name, gateways=False)
    if SECURITY == "plain":
        skip_without_real_stack()
        yield from running(RealHBase(factory.mktemp(name), options),
                           f"HBase {version} ({name}, no gateway)")
        return
    yield from kerberos_stack(factory.mktemp(name), replace(
        options, kerberos=True, rpc_protection="privacy", client_superuser=True,
        kdc=str(kdc.data_dir) if kdc else None))


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealHBase]:
    """Its own stack: a backup master (no other module's), and the first test kills the
    active one, which cannot be undone."""
    yield from stack(tmp_path_factory, "native-source", SOURCE_VERSION, masters=2)


if SECURITY == "plain":
    @pytest.fixture(scope="module")
    def target(native_hbase: RealHBase) -> RealHBase:
        """The shared stack of HBase's RPC alone (tests/bigtable/test_faults_real's source
        too): the first test kills one of its region servers, which the fixture replaces
        after the module. The source, whose active master is killed, is the module's own."""
        return native_hbase
else:
    @pytest.fixture(scope="module")
    def target(tmp_path_factory: pytest.TempPathFactory, source: RealHBase
               ) -> Iterator[RealHBase]:
        yield from stack(tmp_path_factory, "native-target", VERSION, masters=1,
                         kdc=source if SECURITY == "privacy" else None)


SCAN = '[snapshot]\nmethod = "scan"\n'  # the scan copy, unless a test names another


def configure(folder: Path, source: RealHBase, target: RealHBase, table: str,
              more: str = "") -> MigrationSpec:
    """The migration of ``table``, each cluster named by a ``cluster.json`` with no gateway
    and no admin endpoint (and, secured, its own principal and keytab)."""
    clusters = []
    for side, real in (("source", source), ("target", target)):
        (folder / side).mkdir()
        clusters.append(native_cluster_json(real, folder / side))
    path = folder / "migration.toml"
    path.write_text(
        f'[migration]\nname = "native-{table}"\nledger = "sqlite:///{folder / "ledger.db"}"\n'
        f'[source]\ncluster_json = "{clusters[0]}"\n'
        f'[target]\ncluster_json = "{clusters[1]}"\n'
        f'[[tables]]\nsource = "{table}"\ntarget = "{table}"\n'
        f'[replay]\nroll_period = "1h"\nmargin = "1m"\n'
        f'[spark]\nmaster = "{IN_PROCESS}"\n'
        f'[ranges]\nmax_cells = 400\nplan_copy_cells = 1\n'  # ranges copied one by one
        f'{more}{"" if "[snapshot]" in more else SCAN}', encoding="utf-8")
    spec = load_config(path)
    principals = []
    for cluster in (spec.source, spec.target):
        assert cluster.cluster_json and cluster.admin_shell is None
        named = json.loads(cluster.cluster_json.read_text(encoding="utf-8"))
        assert not set(NOT_FOR_STEPS) & set(named), named
        found = cluster.endpoints()
        assert (found.client, found.thrift, found.thrift2) == ("native", "", None)
        assert found.kerberos is (SECURITY != "plain")
        if found.security is not None:
            assert found.security.rpc_protection == "privacy"
            principals.append(found.security.principal or "")
    if principals:  # each cluster its own principal; one realm, or two
        realms = {p.partition("@")[2] for p in principals}
        assert len(set(principals)) == 2 and len(realms) == (2 if SECURITY == "realms" else 1)
    return spec


def load(source: RealHBase, table: str, rows: int, mob: bool = False) -> int:
    """``table`` made on the source (split at ``SPLITS``) holding ``history`` (and, with
    ``mob``, a MOB family's values, flushed); its time."""
    d = source.described
    families = (*FAMILIES, MOB) if mob else FAMILIES
    with NativeAdmin(d["zookeeper"], d["znode_parent"], **identity(source)) as admin:
        admin.create_table(TableDescriptor(table, families), SPLITS)
    old = int(time.time() * 1000) - 60_000
    with NativeClient(d["zookeeper"], d["znode_parent"], **identity(source)) as client:
        client.write(table, history(range(rows), old) + (
            mob_cells(range(rows), old, b"old") if mob else []))
    if mob:
        call_admin(source.cluster_json, "flush", {"table": table})
        assert mob_files(source, table) > 0, "the large values went to no MOB file"
    return old


def agree_in_java(source: RealHBase, target: RealHBase, table: str, until: int,
                  since: int | None = None) -> int:
    """HBase's Java client reads both: every version of the source's cells written before
    ``until`` is the target's, and with ``since`` the target holds every delete marker the
    source does from then on (flushes on either side drop what markers hide, not the
    markers); the number of cells."""
    expected = java_dump(source.described, table, before=until)
    found = java_dump(target.described, table)
    assert differences(expected.visible, found.visible) == ""
    if since is not None:
        markers = [c for c in expected.raw if c.timestamp >= since and c.type != CellType.PUT]
        assert {c.type for c in markers} >= {CellType.DELETE_COLUMN, CellType.DELETE_FAMILY}
        assert not set(markers) - set(found.raw), differences(markers, found.raw)
    return len(expected.visible)


def mob_on_target(spec: MigrationSpec, target: RealHBase) -> None:
    """The target's family is MOB with the source's threshold and, flushed, keeps its large
    values in MOB files of its own."""
    with connect(spec.target.endpoints()) as native:
        family = native.table_descriptor(TABLE).family(MOB.name)
    assert family is not None and (family.mob, family.mob_threshold) == (True, MOB_THRESHOLD)
    call_admin(target.cluster_json, "flush", {"table": TABLE})
    assert mob_files(target, TABLE) > 0


def test_lifecycle_under_faults_with_no_gateway(source: RealHBase, target: RealHBase,
                                                tmp_path: Path) -> None:
    began = time.monotonic()
    old = load(source, TABLE, 300, mob=True)
    spec = configure(tmp_path, source, target, TABLE,
                     '[limits]\nreplay_cells_per_second = 400\n')  # faults land mid-replay
    assert check(spec).to_json()["tables"] == [TABLE]
    assert prepare(spec).passed
    dst = target.described
    target_client = NativeClient(dst["zookeeper"], dst["znode_parent"], max_backoff=1.0,
                                 **identity(target))
    with target_client, NativeAdmin(source.described["zookeeper"],
                                    source.described["znode_parent"],
                                    **identity(source)) as admin:
        assert [r.start for r in target_client.regions(TABLE)] == [b"", *SPLITS]
        writer = LiveWriter(source, TABLE, old, mob=True)
        writer.start()
        progress, split = split_mid_copy(source, TABLE, SOURCE_SPLIT)  # a source region
        try:
            copied = snapshot(spec, progress=progress).to_json()
            assert split == [len(SPLITS) + 2] and copied["cells"] > 0
            first = admin.master_server or admin.active_master()
            assert call_admin(source.cluster_json, "kill-master") == str(first)
            call_admin(source.cluster_json, "roll")
            # Replay under the live writer; meanwhile a target region splits and a target
            # region server holding part of the table dies.
            faults: dict[str, Any] = {}

            def strike() -> None:
                time.sleep(0.5)
                faults["split"] = call_admin(target.cluster_json, "split", {
                    "table": TABLE, "at": TARGET_SPLIT.decode()})["regions"]
                faults["killed"] = kill_a_table_server(target, target_client, TABLE)
                faults["at"] = time.monotonic()

            striker = threading.Thread(target=strike)
            striker.start()
            first_replay = replay(spec).to_json()
            replay_ended = time.monotonic()
            striker.join()
        finally:
            stopped = writer.stop()
        assert first_replay["exit_code"] == 0, first_replay
        assert faults["split"] == len(SPLITS) + 2 and faults["at"] < replay_ended, faults
        assert [r.start for r in target_client.regions(TABLE)] == sorted(
            [b"", *SPLITS, TARGET_SPLIT])
        assert admin.active_master() != first  # the backup master took over

    call_admin(source.cluster_json, "roll")
    caught_up = replay(spec).to_json()  # the writer's last rounds
    assert caught_up["exit_code"] == 0, caught_up
    kinds = set(first_replay["cells"]) | set(caught_up["cells"])
    assert {"Put", "Delete", "DeleteColumn", "DeleteFamily",
            "DeleteFamilyVersion"} <= kinds, kinds
    assert validate(spec, recompare_wait=0).to_json()["verdict"] == "match"
    cells = agree_in_java(source, target, TABLE, until=stopped, since=copied["watermark"])
    assert cells > 1000
    mob_on_target(spec, target)
    with connect(spec.target.endpoints()) as native:  # made to differ, then repaired
        cell = next(iter(native.scan(TABLE)))[0]
        native.write_cells(TABLE, [cell._replace(value=b"changed"),
                                   cell._replace(qualifier=b"extra", value=b"x")])
    assert validate(spec, recompare_wait=0).to_json()["verdict"] == "mismatch"
    fixed = validate(spec, repair=True, recompare_wait=0).to_json()
    assert fixed["verdict"] == "match", fixed
    gate = cutover_check(spec, max_lag=3_600_000).to_json()
    assert gate["verdict"] == "go", gate["reasons"]
    reported = report(spec, out=tmp_path / "report.html").to_json()
    assert reported["verdict"] == "go" and (tmp_path / "report.html").stat().st_size > 0

    assert agree_in_java(source, target, TABLE, until=stopped) == cells
    print(f"\nHBase {SOURCE_VERSION} -> {VERSION}, {SECURITY} (started in "
          f"{source.described['started_in_ms']} and "
          f"{target.described['started_in_ms']} ms): {writer.rounds} live rounds; "
          f"copy {copied['cells']} cells; "
          f"replay {sum(first_replay['cells'].values())} + "
          f"{sum(caught_up['cells'].values())} cells; faults {faults}; {cells} cells "
          f"checked in Java; test {time.monotonic() - began:.0f} s")


def test_copy_by_hbase_snapshot_with_no_gateway(source: RealHBase, target: RealHBase,
                                                tmp_path: Path) -> None:
    """The ``hbase`` method: the snapshot taken by the source's new master (the first test
    killed the old one), its files exported over WebHDFS, cloned on the target, then the
    writes since replayed; the source's snapshot deleted by the passing gate."""
    old = load(source, SNAPPED, 120)
    spec = configure(tmp_path, source, target, SNAPPED,
                     '[snapshot]\nmethod = "hbase"\nttl = "1h"\n')
    assert prepare(spec).passed
    writer = LiveWriter(source, SNAPPED, old)
    writer.start()
    try:
        copied = snapshot(spec).to_json()
    finally:
        stopped = writer.stop()
    assert copied["method"] == "hbase" and copied["state"] == "copied", copied
    name, = copied["snapshots"]
    call_admin(source.cluster_json, "roll")
    assert replay(spec).to_json()["exit_code"] == 0
    assert validate(spec, recompare_wait=0).to_json()["verdict"] == "match"
    gate = cutover_check(spec, max_lag=3_600_000).to_json()
    assert gate["verdict"] == "go" and gate["snapshots_deleted"] == [name], gate
    agree_in_java(source, target, SNAPPED, until=stopped, since=copied["watermark"])
