"""The ``hbase`` copy method: HBase snapshots of the source tables, their files exported to
the target's HDFS (:mod:`hbase_migrate.snapshot.export`), cloned into the target tables.

1. :func:`take_snapshots`: a flushed, online snapshot of each table with a TTL, named
   ``hbase_migrate_<migration>_<table>_<time asked>``; one taken by an earlier attempt is
   used again. T0 is the earliest creation time HBase recorded in them.
2. :func:`export_snapshots`: every file, one task each on the range engine (in this process:
   ``EXPORT_THREADS`` at once, each file being mostly WebHDFS round trips); then every
   exported HFile is looked for again, since the target's HFile cleaner deletes files under
   ``archive/`` older than ``hbase.master.hfilecleaner.ttl`` that no snapshot references
   (HBASE-23202): those are copied again, and the output says the export outlived the TTL.
3. :func:`clone_snapshots`: each exported snapshot cloned into its target table (restored
   when that table exists and is empty, as ``prepare`` left it), then deleted on the target.

The source snapshots are deleted after a passing cutover check (:func:`delete_snapshots`),
unless kept. The embedded cluster writes no HFiles: the method is refused there.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from hbase_migrate.audit.ledger import Ledger, now_ms
from hbase_migrate.cluster.admin import Admin, snapshot_name
from hbase_migrate.cluster.storage.hdfs_files import HdfsRoot
from hbase_migrate.config import IN_PROCESS, ClusterSpec, MigrationSpec, TableSpec
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.hbase import open_cluster
from hbase_migrate.limits import ThrottlePlan, step_limits
from hbase_migrate.ranges.engine import Progress, bind, in_threads, range_engine
from hbase_migrate.snapshot.export import (
    ExportFile,
    ExportJob,
    FileExport,
    SnapshotExportError,
    export_file_task,
    open_root,
    record_exports,
    snapshot_folder_files,
)
from hbase_migrate.snapshot.manifest import (
    INFO_FILE,
    MANIFEST_FILE,
    SNAPSHOT_DIR,
    WORKING_DIR,
    SnapshotDescription,
    parse_description,
    parse_manifest,
)

EXPORT_THREADS = 4  # file tasks at once when the export runs in this process
LAYOUT_FILE = "hbase.version"  # in every real HBase root (HBase's file layout version)
CLONED = "cloned"


class SnapshotMethodError(HBaseMigrateError):
    """The ``hbase`` method cannot go on (refused cluster, expired snapshot, busy table)."""


def hdfs_root(cluster: ClusterSpec) -> HdfsRoot:
    """The cluster's HBase root over WebHDFS; refused when it is not a real HBase's."""
    root = open_root(cluster)
    if root.status(LAYOUT_FILE) is None:
        name = open_cluster(cluster).name
        raise SnapshotMethodError(
            f"{cluster.role} cluster {name!r}: no {LAYOUT_FILE} under its HBase root "
            f"({root.where('')}), so no HBase that writes HFiles (the embedded cluster writes "
            "none): [snapshot] method = \"hbase\" cannot copy it; use method = \"scan\"")
    return root


@dataclass(frozen=True)
class TableSnapshot:
    """The snapshot of one table of the migration."""

    table: TableSpec
    description: SnapshotDescription

    @property
    def name(self) -> str:
        return self.description.name


def read_description(root: HdfsRoot, folder: str) -> SnapshotDescription:
    """The ``.snapshotinfo`` in ``folder`` (under the root)."""
    path = f"{folder}/{INFO_FILE}"
    with root.read(path) as chunks:
        return parse_description(b"".join(chunks), root.where(path))


def take_snapshots(spec: MigrationSpec, source: HdfsRoot, admin: Admin
                   ) -> list[TableSnapshot]:
    """A snapshot of every table (an earlier attempt's, when there is one), checked not to
    have expired."""
    taken = []
    for table in spec.tables:
        prefix = snapshot_name(spec.name, table.source, 0)[:-1]
        ours = [n for n in admin.snapshots(prefix) if re.fullmatch(r"\d+", n[len(prefix):])]
        name = ours[-1] if ours else snapshot_name(spec.name, table.source, now_ms())
        if not ours:
            admin.snapshot(table.source, name, spec.snapshot.ttl // 1000)
        description = read_description(source, f"{SNAPSHOT_DIR}/{name}")
        expires = description.expires_at()
        if expires is not None and expires <= now_ms():
            raise SnapshotMethodError(
                f"source snapshot {name} of table {table.source} expired at {expires} ms "
                f"(TTL {description.ttl}s): delete it (delete_snapshot '{name}') and run the "
                "snapshot step again with a longer [snapshot] ttl")
        taken.append(TableSnapshot(table, description))
    return taken


@dataclass
class ExportSummary:
    """What an export did, for the step's metrics."""

    files: int = 0
    copied: int = 0
    kept: int = 0
    bytes: int = 0
    bytes_copied: int = 0
    seconds: float = 0.0
    recopied_after_cleaner: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    snapshots: list[str] = field(default_factory=list)

    def add(self, done: list[FileExport]) -> None:
        for f in done:
            self.files += 1
            self.copied += f.copied
            self.kept += not f.copied
            self.bytes += f.size
            self.bytes_copied += f.size if f.copied else 0

    def to_metrics(self) -> dict[str, Any]:
        rate = self.bytes_copied / self.seconds if self.seconds > 0 else 0.0
        return {"files": self.files, "files_copied": self.copied, "files_kept": self.kept,
                "bytes": self.bytes, "bytes_copied": self.bytes_copied,
                "export_seconds": round(self.seconds, 2), "bytes_per_second": round(rate),
                "recopied_after_cleaner": self.recopied_after_cleaner, "notes": self.notes,
                "snapshots": self.snapshots}


def export_snapshots(spec: MigrationSpec, snapshots: list[TableSnapshot], source: HdfsRoot,
                     target: HdfsRoot, job: ExportJob, master: str,
                     progress: Progress | None = None) -> ExportSummary:
    """Export every snapshot not yet complete on the target (see the module)."""
    summary = ExportSummary(snapshots=[s.name for s in snapshots])
    began = time.monotonic()
    files: list[ExportFile] = []
    hfiles: list[ExportFile] = []
    for snap in snapshots:
        if target.status(f"{SNAPSHOT_DIR}/{snap.name}/{MANIFEST_FILE}") is not None:
            summary.notes.append(f"{snap.name}: exported already")
            continue
        target.makedirs(f"{WORKING_DIR}/{snap.name}")
        folder = snapshot_folder_files(snap.name)
        summary.add([export_file_task(job, f) for f in folder])  # the manifest first
        path = f"{SNAPSHOT_DIR}/{snap.name}/{MANIFEST_FILE}"
        with source.read(path) as chunks:
            listed = parse_manifest(b"".join(chunks), source.where(path))
        hfiles += [ExportFile.of(snap.name, f) for f in listed]
        files += folder
    if hfiles:
        with range_engine(master, f"hbase-migrate export {spec.name}", spec) as engine:
            threads = EXPORT_THREADS if engine.name == IN_PROCESS else 0
            shipped = engine.shipped(spec)  # Spark: endpoints resolved here, no ledger
            plan = ThrottlePlan.of(shipped, "copy", engine.shares(len(hfiles)))
            task = bind(export_file_task, replace(
                job, source=shipped.source, target=shipped.target, throttle=plan,
                ledger_url=job.ledger_url if shipped.ledger_url else None))

            def run(files: list[ExportFile], what: str,
                    progress: Progress | None = None) -> list[FileExport]:
                if threads:
                    return in_threads(threads, task, files, progress, what)
                done = engine.map(task, files, progress=progress, what=what)
                if job.ledger_url and not shipped.ledger_url:  # what the tasks exported
                    record_exports(job, job.ledger_url, done)
                return done

            with step_limits(plan):
                summary.add(run(hfiles, f"export {len(hfiles)} files of migration {spec.name}",
                                progress))
                gone = [f for f in hfiles if target.status(f.target) is None]
                if gone:  # deleted by the target's HFile cleaner meanwhile: once more
                    summary.recopied_after_cleaner = [f.target for f in gone]
                    summary.notes.append(_cleaner_note(spec, len(gone), time.monotonic() - began))
                    run(gone, f"export {len(gone)} files again")
    lost = [f.target for f in hfiles if target.status(f.target) is None]
    if lost:
        raise SnapshotExportError(
            f"{len(lost)} exported file(s) vanished from {target.where('archive/')} again, "
            f"e.g. {lost[0]}: {_cleaner_note(spec, len(lost), time.monotonic() - began)}")
    for snap in snapshots:
        if target.status(f"{WORKING_DIR}/{snap.name}") is not None:
            target.rename(f"{WORKING_DIR}/{snap.name}", f"{SNAPSHOT_DIR}/{snap.name}")
    summary.seconds = time.monotonic() - began
    return summary


def _cleaner_note(spec: MigrationSpec, files: int, seconds: float) -> str:
    ttl = spec.snapshot.target_hfile_ttl / 1000
    longer = (f"the export took {seconds:.0f}s, longer than the target's HFile cleaner TTL "
              f"([snapshot] target_hfile_ttl = {ttl:g}s)" if seconds >= ttl else
              f"the export took {seconds:.0f}s")
    return (f"{files} exported file(s) were deleted on the target by its HFile cleaner "
            f"(HBASE-23202): {longer}; raise hbase.master.hfilecleaner.ttl on the target "
            "above the export's duration")


def clone_snapshots(spec: MigrationSpec, snapshots: list[TableSnapshot], admin: Admin,
                    ledger: Ledger, migration_id: int, step_id: int | None, keep: bool,
                    is_empty: Callable[[str], bool | None]) -> list[str]:
    """Clone each snapshot into its target table (restore it into an existing empty table
    of the same name; an empty table of another name is dropped and cloned), then delete it
    on the target unless ``keep``. ``is_empty(table)``: None when the table does not exist.
    A table cloned by an earlier attempt (the ledger says so) is left alone."""
    done = {r.path for r in ledger.snapshot_files(migration_id) if r.status == CLONED}
    lines = []
    for snap in snapshots:
        table = snap.table.target
        if f"clone:{table}" in done:
            lines.append(f"{table}: cloned from {snap.name} already")
            continue
        empty = is_empty(table)
        if empty is False:
            raise SnapshotMethodError(
                f"target table {table} holds data already: the hbase method clones "
                f"{snap.name} into an empty or missing table; truncate it or use "
                "[snapshot] method = \"scan\"")
        if empty is None:
            admin.clone(snap.name, table)
            lines.append(f"{table}: cloned from {snap.name}")
        elif table == snap.description.table:
            admin.restore(snap.name, table)
            lines.append(f"{table}: restored from {snap.name} (it was empty)")
        else:
            admin.drop(table)
            admin.clone(snap.name, table)
            lines.append(f"{table}: empty table replaced by a clone of {snap.name}")
        ledger.record_snapshot_file(migration_id, snap.name, f"clone:{table}",
                                    source_path=f"{SNAPSHOT_DIR}/{snap.name}", size=0,
                                    status=CLONED, checksum={"method": "clone"},
                                    step_id=step_id)
        if not keep:
            admin.delete(snap.name)
            lines.append(f"{snap.name}: deleted on the target")
    return lines


def delete_snapshots(spec: MigrationSpec, admin: Admin) -> list[str]:
    """Delete the migration's snapshots on ``admin``'s cluster; the names deleted."""
    gone = []
    for table in spec.tables:
        prefix = snapshot_name(spec.name, table.source, 0)[:-1]
        for name in admin.snapshots(prefix):
            if re.fullmatch(r"\d+", name[len(prefix):]):
                admin.delete(name)
                gone.append(name)
    return gone
