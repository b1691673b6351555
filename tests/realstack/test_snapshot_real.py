"""The ``hbase`` copy method between two real Apache HBase 2.6.1 clusters (the session's
source, the shared ``second_hbase`` the target): HBase snapshots taken through the Java admin
helper, their files exported over WebHDFS (in-process, and on Spark ``local[1]``), cloned
on the target, replay from T0. The target must equal the source cell for cell; an export
killed with SIGKILL resumes with the files it lacks, a file corrupted on the target is
found by its checksum and copied again, files the source archived meanwhile are read from
``archive/``, an expired snapshot is refused, and a passing gate deletes the source's
snapshot. A MOB table's MOB files (``mobdir``) are exported too, where the clone reads
them, and the clone serves every value as HBase's Java client reads both sides. On one
table with every case (``every_case``: a split's reference files, two flushes, each delete
type, an expiring TTL, a MOB family), ``validate --from snapshot`` has the live validation's
verdict and range digests, continues after a stop with its kept snapshot, finds a tampered
target cell, and sends the source's regions no read request."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cluster.admin import JavaAdmin
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.storage.hdfs_files import HdfsRoot
from hbase_migrate.config import IN_PROCESS, MigrationSpec, load_config
from hbase_migrate.hbase.admin import connect_admin
from hbase_migrate.hbase.connect import connect
from hbase_migrate.lifecycle import cutover_check, prepare, replay, snapshot, validate
from hbase_migrate.lifecycle.replay import follow, replay_job
from hbase_migrate.rpc.cluster import NativeCluster
from hbase_migrate.runstate import StepInterrupted
from hbase_migrate.snapshot.choose import MethodChoice, choose_method
from hbase_migrate.snapshot.export import ExportJob
from hbase_migrate.snapshot.hbase_method import (
    SnapshotMethodError,
    clone_snapshots,
    export_snapshots,
    hdfs_root,
    take_snapshots,
)
from hbase_migrate.snapshot.manifest import SNAPSHOT_DIR, parse_manifest
from hbase_migrate.snapshot.probes import ClusterProbes
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.validate.compare import compare_tables
from hbase_migrate.validate.gx_process import GxProcess
from hbase_migrate.wal.model import Cell, CellType
from minihbase.workload import Workload, WorkloadSpec
from realstack.hbase import RealHBase
from stackprocs.admin_client import call_admin
from tests.realstack.java_cells import differences, java_dump
from tests.realstack.lifecycle_parts import MOB_THRESHOLD, mob_files, mob_values
from tests.support.wait import wait_for

from . import every_case
from .fixtures import read_requests

pytestmark = [pytest.mark.own_stack, pytest.mark.integration, pytest.mark.realstack]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def target_hbase(second_hbase: RealHBase) -> RealHBase:
    """A second real HBase, the target of this module's migrations (the second plain stack,
    test_registry_real's target too: each module's tables have names of their own)."""
    return second_hbase


def configure(folder: Path, source: RealHBase, target: RealHBase, table: str,
              limits: str = "", method: str = "hbase") -> Path:
    path = folder / "migration.toml"
    path.write_text(
        f'[migration]\nname = "snap"\nledger = "sqlite:///{folder / "ledger.db"}"\n'
        f'[source]\ncluster_json = "{source.cluster_json}"\n'
        f'[target]\ncluster_json = "{target.cluster_json}"\n'
        f'[[tables]]\nsource = "{table}"\n'
        f'[replay]\nroll_period = "1h"\nmargin = "1m"\n[spark]\nmaster = "{IN_PROCESS}"\n'
        f'[snapshot]\nmethod = "{method}"\nttl = "1h"\n{limits}', encoding="utf-8")
    return path


def write(cluster: ClusterEndpoints, table: str, seed: int, ops: int,
          rate: float | None = None) -> None:
    runner = Workload(cluster, WorkloadSpec(table, seed, ops, rate=rate))
    try:
        runner.ensure_table()  # two families, pre-split: several regions
        runner.run()
    finally:
        runner.close()


def endpoints(stack: RealHBase) -> ClusterEndpoints:
    return ClusterEndpoints.from_json(stack.described)


def root(stack: RealHBase, role: str) -> HdfsRoot:
    e = endpoints(stack)
    assert e.webhdfs and e.hbase_root
    return HdfsRoot(e.webhdfs, e.hbase_root, role)


def equal(source: RealHBase, target: RealHBase, table: str) -> Any:
    with Thrift2Client(endpoints(source).thrift2 or "") as a, \
            Thrift2Client(endpoints(target).thrift2 or "") as b:
        return compare_tables(a, b, table)


def files_recorded(spec: MigrationSpec) -> dict[str, Any]:
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        return {} if record is None else {
            r.path: r for r in ledger.snapshot_files(record.id) if r.status != "cloned"}


def expected_files(source: RealHBase, name: str) -> dict[str, tuple[str, ...]]:
    """Every file the export of snapshot ``name`` must write on the target, by target
    path: where it may be read on the source."""
    folder = f"{SNAPSHOT_DIR}/{name}"
    with root(source, "source").read(f"{folder}/data.manifest") as chunks:
        hfiles = parse_manifest(b"".join(chunks), name)
    return {**{f"{SNAPSHOT_DIR}/.tmp/{name}/{f}": (f"{folder}/{f}",)
               for f in (".snapshotinfo", "data.manifest")},
            **{f.target_path(): f.source_paths() for f in hfiles}}


def victim_snapshot(spec: MigrationSpec, path: str) -> str:
    """The snapshot the ledger recorded the file ``path`` for."""
    return str(files_recorded(spec)[path].snapshot)


def content(side: HdfsRoot, *paths: str) -> bytes | None:
    for path in paths:
        if side.status(path) is not None:
            with side.read(path) as chunks:
                return b"".join(chunks)
    return None


def differing(source: RealHBase, target: RealHBase, name: str) -> set[str]:
    """The target paths of the export whose file the target lacks or holds different."""
    src, dst = root(source, "source"), root(target, "target")
    return {path for path, sources in expected_files(source, name).items()
            if content(dst, path) != content(src, *sources)}


def test_snapshot_export_clone_and_replay_equal_the_source(
        real_hbase: RealHBase, target_hbase: RealHBase, tmp_path: Path) -> None:
    table = "snap_live"
    source = endpoints(real_hbase)
    write(source, table, seed=61, ops=400)
    spec = load_config(configure(tmp_path, real_hbase, target_hbase, table))
    prepare(spec)
    live = threading.Thread(target=write, args=(source, table, 62, 200, 100.0))
    live.start()  # puts and deletes of every kind while the snapshot is taken and exported
    copied = snapshot(spec).to_json()
    live.join()

    name, = copied["snapshots"]
    assert copied["method"] == "hbase" and copied["state"] == "copied"
    # The export's files are the manifest's, read here from the source's own HDFS.
    src_root = root(real_hbase, "source")
    with src_root.read(f"{SNAPSHOT_DIR}/{name}/data.manifest") as chunks:
        hfiles = parse_manifest(b"".join(chunks), name)
    families = {f.family for f in hfiles}
    regions = {f.region for f in hfiles}
    assert families == {"d", "m"} and len(regions) > 1
    assert copied["files"] == copied["files_copied"] == len(hfiles) + 2
    recorded = files_recorded(spec)
    assert set(recorded) == {f.target_path() for f in hfiles} | {
        f"{SNAPSHOT_DIR}/.tmp/{name}/.snapshotinfo", f"{SNAPSHOT_DIR}/.tmp/{name}/data.manifest"}
    assert all(r.checksum["source"] == r.checksum["target"] for r in recorded.values())
    assert all(r.checksum["method"].startswith("hdfs MD5-of-") for r in recorded.values())
    dst_root = root(target_hbase, "target")
    assert all(dst_root.status(f.target_path()) is not None for f in hfiles)
    # T0 is the snapshot's creation time, as HBase recorded it in .snapshotinfo.
    admin = JavaAdmin("source", source.zookeeper or "", source.znode_parent)
    listed, = admin.listed(name)
    assert copied["watermark"] == listed.creation_time and listed.ttl == 3600
    # The target's copy of the snapshot went once it was cloned; the source's stays.
    assert dst_root.status(f"{SNAPSHOT_DIR}/{name}") is None
    assert src_root.status(f"{SNAPSHOT_DIR}/{name}") is not None

    call_admin(real_hbase.cluster_json, "roll")
    caught_up = replay(spec).to_json()  # the writes since T0, from the real WALs
    assert caught_up["exit_code"] == 0, caught_up
    comparison = equal(real_hbase, target_hbase, table)
    assert comparison.equal and comparison.source_cells > 0, comparison
    before = read_requests(real_hbase, table)
    assert validate(spec, recompare_wait=0).to_json()["verdict"] == "match"
    scanned = read_requests(real_hbase, table)
    assert scanned > before  # the regions' own counters count a live validation's scans
    # the source side from a fresh snapshot's files: the same digests as the live scan,
    # and not one read request reaches the source's regions
    from_files = validate(spec, recompare_wait=0, from_snapshot=True).to_json()
    assert read_requests(real_hbase, table) == scanned
    assert from_files["verdict"] == "match", from_files
    assert from_files["source_read"].startswith("snapshot files from the DataNodes")
    assert from_files["tables"][0]["source_cells"] == comparison.source_cells
    gate = cutover_check(spec, max_lag=3_600_000).to_json()
    assert gate["verdict"] == "go", gate["reasons"]
    assert gate["snapshots_deleted"] == [name] and admin.snapshots(name) == []
    # one target cell changed: the validation from a snapshot finds its range
    with connect(endpoints(target_hbase)) as dst:
        first = next(c for piece in dst.scan(table) for c in piece)
        dst.put_cells(table, [first._replace(value=first.value + b"-tampered")])
    tampered = validate(spec, recompare_wait=0, from_snapshot=True).to_json()
    assert tampered["verdict"] == "mismatch" and len(tampered["differing"]) == 1, tampered
    assert admin.snapshots(f"hbase_migrate_{spec.name}_validate") == []  # deleted after


def test_auto_chooses_the_file_copy_between_two_real_hbases(
        real_hbase: RealHBase, target_hbase: RealHBase, tmp_path: Path) -> None:
    table = "snap_auto"
    write(endpoints(real_hbase), table, seed=67, ops=20)
    spec = load_config(configure(tmp_path, real_hbase, target_hbase, table, method="auto"))
    assert spec.snapshot.method == "auto"
    prepare(spec)
    choice = choose_method(spec, ClusterProbes())
    both = f"{real_hbase.options.hbase_version} to {target_hbase.options.hbase_version}"
    assert choice == MethodChoice(
        "hbase", f"both clusters are HBase ({both}) with their roots over WebHDFS, the "
                 "target's writable, admin calls possible, codecs NONE readable on the "
                 "target, no encrypted family")
    # the same pair with a watermark given is the scan copy's
    assert choose_method(spec, ClusterProbes(), watermark=1).method == "scan"


def test_a_killed_export_resumes_and_a_corrupted_file_is_copied_again(
        real_hbase: RealHBase, target_hbase: RealHBase, tmp_path: Path) -> None:
    table = "snap_resume"
    source = endpoints(real_hbase)
    for seed in (71, 72, 73):  # three flushes: three HFiles per region and family
        write(source, table, seed=seed, ops=150)
        call_admin(real_hbase.cluster_json, "flush", {"table": table})
    config = configure(tmp_path, real_hbase, target_hbase, table,
                       '[limits]\ncopy_bytes_per_second = "30KB"\n')
    spec = load_config(config)
    prepare(spec)
    command = [sys.executable, "-m", "hbase_migrate", "snapshot", "--config", str(config)]
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        wait_for(lambda: len(files_recorded(spec)) >= 5 or proc.poll() is not None, 180,
                 "the export to record five files", every=0.05)
        assert proc.poll() is None, "the export ended before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    before = files_recorded(spec)
    # One file the killed run exported: corrupted on the target, its length kept.
    dst_root = root(target_hbase, "target")
    victim = next(p for p in sorted(before) if p.startswith("archive/"))
    with dst_root.read(victim) as chunks:
        good = b"".join(chunks)
    dst_root.write(victim, [bytes(b ^ 0xFF for b in good)])
    # What the rerun must copy, found here by reading every file on both sides.
    name = victim_snapshot(spec, victim)
    expected = differing(real_hbase, target_hbase, name)
    every = expected_files(real_hbase, name)
    assert victim in expected and len(expected) < len(every)

    rerun = snapshot(spec).to_json()
    after = files_recorded(spec)
    assert len(before) < len(after) == rerun["files"] == len(every)
    copied_again = {p for p, r in after.items() if r.status == "copied"
                    and r.step_id == rerun["step_id"]}
    assert copied_again == expected, "only what was missing or differs"
    assert rerun["files_copied"] == len(expected) and rerun["files_kept"] == len(
        after) - len(expected)
    assert after[victim].copies == 2
    assert all(after[p].status == "kept" and after[p].copies == 1 for p in before if p != victim)
    with dst_root.read(victim) as chunks:
        assert b"".join(chunks) == good
    comparison = equal(real_hbase, target_hbase, table)
    assert comparison.equal and comparison.source_cells > 0, comparison


def test_files_archived_meanwhile_are_found_and_an_expired_snapshot_is_refused(
        real_hbase: RealHBase, target_hbase: RealHBase, tmp_path: Path) -> None:
    table = "snap_archived"
    source = endpoints(real_hbase)
    write(source, table, seed=81, ops=150)
    spec = load_config(configure(tmp_path, real_hbase, target_hbase, table))
    prepare(spec)
    src_root, dst_root = hdfs_root(spec.source), hdfs_root(spec.target)
    admin = connect_admin(spec.source, spec.snapshot.hbase_version)
    taken = take_snapshots(spec, src_root, admin)
    with Thrift2Client(source.thrift2 or "") as client:
        cells = sorted(c for row in client.scan(table) for c in row)
    admin.drop(table)  # HBase moves every file of a dropped table to archive/
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None
        job = ExportJob(spec.source, spec.target, spec.ledger_url, record.id)
        # one task per file on Spark this time (the other tests run them in-process)
        summary = export_snapshots(spec, taken, src_root, dst_root, job, "local[1]")
        hfiles = [r for r in ledger.snapshot_files(record.id) if r.path.startswith("archive/")]
        assert summary.files == len(hfiles) + 2 and hfiles
        assert all(r.source_path == r.path for r in hfiles)  # each read from archive/ too
        with Thrift2Client(endpoints(target_hbase).thrift2 or "") as client:
            def is_empty(name: str) -> bool | None:
                return next(iter(client.scan(name)), None) is None

            target_admin = connect_admin(spec.target, spec.snapshot.hbase_version)
            clone_snapshots(spec, taken, target_admin, ledger, record.id, None, False, is_empty)
            assert sorted(c for row in client.scan(table) for c in row) == cells

    # A snapshot whose TTL ran out is refused by name, with what to do.
    folder = tmp_path / "short"
    folder.mkdir()
    write(source, "snap_expired", seed=82, ops=20)
    expiring = load_config(configure(folder, real_hbase, target_hbase, "snap_expired"))
    expiring = replace(expiring, snapshot=replace(expiring.snapshot, ttl=2000))
    try:
        first, = take_snapshots(expiring, src_root, admin)
    except SnapshotMethodError:  # expired already while it was read back: fine too
        pass
    else:
        time.sleep(max(0.0, (first.description.expires_at() or 0) / 1000 - time.time()) + 0.2)
    with pytest.raises(SnapshotMethodError, match=r"source snapshot hbase_migrate_snap_snap_"
                                                  r"expired_\d+ of table snap_expired expired "
                                                  r"at \d+ "
                                                  r"ms \(TTL 2s\): delete it"):
        take_snapshots(expiring, src_root, admin)


def test_a_mob_tables_files_are_exported_and_its_clone_serves_every_value(
        real_hbase: RealHBase, target_hbase: RealHBase, tmp_path: Path) -> None:
    table = "snap_mob"
    spec = load_config(configure(tmp_path, real_hbase, target_hbase, table))
    family = FamilyDescriptor(b"m", max_versions=3, mob=True, mob_threshold=MOB_THRESHOLD)
    old = int(time.time() * 1000) - 60_000
    with NativeCluster.of(spec.source.endpoints(), spec.gateway) as source:
        source.create_table(TableDescriptor(table, (family,)), [b"mob-0030"])
        for rows, ts, tag in ((range(60), old, b"first"), (range(40, 80), old + 1, b"second")):
            source.write_cells(table, mob_values(rows, ts, tag))
            call_admin(real_hbase.cluster_json, "flush", {"table": table})
    mobs = mob_files(real_hbase, table)
    assert mobs >= 2, "each flush writes a MOB file of the large values"
    assert prepare(spec).passed
    copied = snapshot(spec).to_json()
    assert copied["method"] == "hbase" and copied["state"] == "copied", copied

    # HBase's Java client reads both sides: every version, MOB values read from MOB files.
    expected = java_dump(real_hbase.described, table)
    found = java_dump(target_hbase.described, table)
    assert differences(expected.visible, found.visible) == ""
    sizes = {len(c.value) for c in found.visible}
    assert min(sizes) < MOB_THRESHOLD < max(sizes) and len(found.visible) == 60 + 40
    # The MOB files were exported where ExportSnapshot puts them (the source's MOB folder
    # listed here over WebHDFS, not through the manifest the export read).
    src_root, dst_root = root(real_hbase, "source"), root(target_hbase, "target")
    mob_folder = f"mobdir/data/default/{table}"
    region, = src_root.listing(mob_folder)
    names = src_root.listing(f"{mob_folder}/{region}/m")
    assert len(names) == mobs
    assert all(dst_root.status(f"archive/data/default/{table}/{region}/m/{n}") is not None
               for n in names)
    # validate --from snapshot follows each MOB reference into the MOB files: a match.
    checked = validate(spec, recompare_wait=0, from_snapshot=True).to_json()
    assert checked["verdict"] == "match", checked
    admin = JavaAdmin("source", spec.source.endpoints().zookeeper or "",
                      spec.source.endpoints().znode_parent)
    assert admin.snapshots(f"hbase_migrate_{spec.name}_validate") == []  # deleted after


def by_range(spec: MigrationSpec, step_id: int | None
             ) -> dict[tuple[bytes, bytes], tuple[Any, ...]]:
    """A validation step's ranges: rows, cells and digest of each side, and the verdict."""
    with Ledger.open(spec.ledger_url) as ledger:
        return {(v.range_start, v.range_end): (
            v.source_rows, v.source_cells, v.source_digest, v.target_rows, v.target_cells,
            v.target_digest, v.verdict.value) for v in ledger.validations(1, step_id)}


def stop_after_first_range(done: int, total: int) -> None:
    """A progress callback that stops the validation (as Ctrl-C does) once a range is
    done."""
    if done and done < total:
        raise KeyboardInterrupt


def test_a_validation_from_snapshot_of_every_case_agrees_with_the_live_one(
        real_hbase: RealHBase, target_hbase: RealHBase, tmp_path: Path) -> None:
    """Splits (with reference files), two flushes, each delete type, a TTL that expires
    cells between write and validation, and a MOB family, in one table: the validation from
    a snapshot's files has the live validation's verdict and range digests; stopped after
    its first range, it continues with the snapshot it kept and finds a target cell changed
    behind the migration's back, in its range alone; the source's regions serve no read
    request meanwhile."""
    table = "snap_every_case"
    source = endpoints(real_hbase)
    written = every_case.build(real_hbase, source, table)
    # copied by scan (quicker than the hbase method here); a range validated at a time
    spec = load_config(configure(tmp_path, real_hbase, target_hbase, table,
                                 "[ranges]\nthreads = 1\n", method="scan"))
    prepare(spec)
    assert snapshot(spec).to_json()["state"] == "copied"
    time.sleep(max(0.0, written.expires_at / 1000 - time.time() + 1))
    # what the source's region servers return now (HBase's own rules): the oracle
    with connect(source) as client:
        seen = [c for piece in client.scan(table) for c in piece]
        raw = [c for piece in client.scan(table, raw=True) for c in piece]
    assert {c.type for c in raw} > {CellType.DELETE, CellType.DELETE_COLUMN,
                                    CellType.DELETE_FAMILY, CellType.DELETE_FAMILY_VERSION}
    assert not set(written.expiring) & set(seen)  # expired since they were written
    assert any(c.family == b"m" and len(c.value) > every_case.MOB_THRESHOLD for c in seen)
    files = root(real_hbase, "source")
    regions = [r for r in files.listing(f"data/default/{table}") if not r.startswith(".")]
    assert any("." in name for region in regions
               for name in files.listing(f"data/default/{table}/{region}/d")), \
        "the split's reference files"

    with GxProcess() as gx:
        live = validate(spec, recompare_wait=0, gx=gx)
        assert live.verdict == "match" and live.metrics["source_requests"] > 0
        expected = by_range(spec, live.step_id)
        assert len(expected) >= 3  # the regions: two daughters and the other
        before = read_requests(real_hbase, table)
        from_files = validate(spec, recompare_wait=0, from_snapshot=True, gx=gx)
        assert read_requests(real_hbase, table) == before  # not one read on the source
        assert from_files.verdict == "match", from_files.to_json()
        assert from_files.metrics["source_requests"] == 0
        assert from_files.metrics["source_read"].startswith("snapshot files from the DataNodes")
        assert by_range(spec, from_files.step_id) == expected
        assert from_files.metrics["tables"][0]["source_cells"] == len(seen)

        # a target cell changed by a plain put; the next validation, stopped after its
        # first range, continues with the snapshot it kept and finds that cell's range
        victim = next(c for c in seen if c.row == every_case.row(44) and c.family == b"d")
        with connect(endpoints(target_hbase)) as dst:
            dst.put_cells(table, [victim._replace(value=b"tampered")])
        with pytest.raises(StepInterrupted):
            validate(spec, recompare_wait=0, from_snapshot=True, gx=gx,
                     progress=stop_after_first_range)
        with Ledger.open(spec.ledger_url) as ledger:
            stopped, (_, judged) = next(iter(ledger.checksum_steps(1).items()))
            read = ledger.checksums(1, stopped)
        name, = {r.source_read.removeprefix("snapshot ") for r in read}
        admin = JavaAdmin("source", source.zookeeper or "", source.znode_parent)
        assert not judged and admin.snapshots(name) != []
        resumed = validate(spec, recompare_wait=0, from_snapshot=True, gx=gx)
    assert read_requests(real_hbase, table) == before
    assert resumed.metrics["source_requests"] == 0
    assert resumed.metrics["source_snapshots"] == {table: name}
    assert (resumed.metrics["resumed"]["from_step"],
            resumed.metrics["resumed"]["ranges"]) == (stopped, len(read))
    found = by_range(spec, resumed.step_id)
    bad, = [r for r, v in found.items() if v[-1] == "mismatch"]
    assert bad[0] <= victim.row and (not bad[1] or victim.row < bad[1])
    assert resumed.verdict == "mismatch" and len(resumed.metrics["differing"]) == 1
    assert {r: v for r, v in found.items() if r != bad} == {
        r: v for r, v in expected.items() if r != bad}
    assert found[bad][:3] == expected[bad][:3]  # the source side: unchanged
    assert admin.snapshots(name) == []  # deleted once the validation ended


def keep_writing(cluster: ClusterEndpoints, table: str, stop: threading.Event,
                 written: list[int]) -> None:
    """Puts and delete markers of every kind, each with its timestamp (no write that makes
    a region server read), about 40 a second until ``stop``."""
    n = 0
    with connect(cluster) as client:
        while not stop.is_set():
            n += 1
            row, ts = b"row-%05d" % (n * 37 % 300), int(time.time() * 1000) - n % 7
            family, qualifier = (b"d", b"q%d" % (n % 3)) if n % 2 else (b"m", b"x")
            kind = (CellType.DELETE_COLUMN, CellType.DELETE, CellType.DELETE_FAMILY)[n % 3] \
                if n % 5 == 0 else CellType.PUT
            client.write_cells(table, [Cell(row, family, b"" if kind == CellType.DELETE_FAMILY
                                            else qualifier, ts, kind, b"v%d" % n)])
            written.append(n)
            stop.wait(0.025)


def validate_unplanned(spec: MigrationSpec, ledger: Path, gx: GxProcess) -> None:
    """The validation from both snapshots on a ledger whose file copy recorded no plan (one
    from before it did) plans from a snapshot of its own and still finds the one changed
    cell."""
    with sqlite3.connect(ledger) as db:
        db.execute("DELETE FROM key_ranges")
    unplanned = validate(spec, recompare_wait=120, from_snapshot=True, gx=gx)
    assert unplanned.metrics["ranges_planned"] > 1, unplanned.metrics
    assert unplanned.verdict == "mismatch" and len(unplanned.metrics["differing"]) == 1, \
        unplanned.metrics


@pytest.mark.parametrize("method", ["scan", "hbase"])
def test_a_validation_from_both_snapshots_matches_while_the_source_is_written(
        real_hbase: RealHBase, target_hbase: RealHBase, tmp_path: Path, method: str) -> None:
    """A writer and the replay's follow run throughout: the validation from both clusters'
    snapshots says ``match`` while the writer still writes, then finds a target cell changed
    by hand in its range alone, and neither cluster's regions serve one read request; after
    the file copy too, whose ranges were planned from its snapshot's block indexes (a plan
    by a counting scan would read the source's regions), and on a ledger whose file copy
    recorded no plan (one from before it did: the validation plans from a snapshot)."""
    table = f"snap_both_{method}"
    source = endpoints(real_hbase)
    write(source, table, seed=91, ops=150)
    kept = Cell(b"a-kept", b"d", b"q", 1_000, CellType.PUT, b"kept")  # no writer touches it
    with connect(source) as client:
        client.put_cells(table, [kept])
    spec = load_config(configure(tmp_path, real_hbase, target_hbase, table, method=method))
    prepare(spec)
    copied = snapshot(spec).to_json()
    assert copied["state"] == "copied"
    if method != "scan":
        assert copied["ranges_planned"] > 1, copied
    stop, written = threading.Event(), list[int]()
    follows: list[Any] = []
    writer = threading.Thread(target=keep_writing, args=(source, table, stop, written))
    follower = threading.Thread(target=lambda: follows.append(
        follow(replay_job(spec), 0.5, stop)), daemon=True)
    writer.start()
    follower.start()
    with GxProcess() as gx:
        try:
            wait_for(lambda: len(written) > 40, 60, "the writer to write")
            counters = read_requests(real_hbase, table), read_requests(target_hbase, table)
            during = len(written)
            checked = validate(spec, recompare_wait=120, from_snapshot=True, gx=gx)
            assert len(written) > during and writer.is_alive()  # written all along
            assert (read_requests(real_hbase, table), read_requests(target_hbase, table)) \
                == counters
            m = checked.metrics
            assert checked.verdict == "match", m
            assert m.get("ranges_planned", 0) == 0  # the copy's plan
            assert (m["source_requests"], m["target_requests"]) == (0, 0)
            assert m["source_read"].startswith("snapshot files from the DataNodes")
            assert m["target_read"].startswith("snapshot files from the DataNodes")
            assert m["catch_up"]["caught_up"] is True, m["catch_up"]
            assert m["point"]["wal_tail_cells"] > 0  # the writes past the source's snapshot
            assert m["tables"][0]["source_cells"] == m["tables"][0]["target_cells"] > 150
            with Ledger.open(spec.ledger_url) as ledger:  # each range's row says so too
                reads = {(r.source_read.split(" ", 1)[0], r.target_read.split(" ", 1)[0])
                         for r in ledger.checksums(1, checked.step_id)}
            assert reads == {("snapshot", "snapshot")}

            with connect(endpoints(target_hbase)) as dst:  # one cell changed behind its back
                dst.put_cells(table, [kept._replace(value=b"tampered")])
            counters = read_requests(real_hbase, table), read_requests(target_hbase, table)
            found = validate(spec, recompare_wait=120, from_snapshot=True, gx=gx)
            assert (read_requests(real_hbase, table), read_requests(target_hbase, table)) \
                == counters
            assert writer.is_alive()
            assert found.verdict == "mismatch" and len(found.metrics["differing"]) == 1, \
                found.metrics
            verdicts = by_range(spec, found.step_id)
            bad, = [r for r, v in verdicts.items() if v[-1] == "mismatch"]
            assert bad[0] <= kept.row and (not bad[1] or kept.row < bad[1])
            assert len(verdicts) > 1  # the other ranges: all match

            if method == "hbase":
                validate_unplanned(spec, tmp_path / "ledger.db", gx)
                assert (read_requests(real_hbase, table),
                        read_requests(target_hbase, table)) == counters
        finally:
            stop.set()
            writer.join(30)
            follower.join(60)
    assert follows and follows[0].exit_code == 0
