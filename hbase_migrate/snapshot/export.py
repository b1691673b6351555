"""Export an HBase snapshot's files from the source's HDFS to the target's over WebHDFS, one
task per file on the range engine, laid out as HBase's ExportSnapshot lays them out:

1. the snapshot folder (``.snapshotinfo``, ``data.manifest``) into the target's working
   folder ``.hbase-snapshot/.tmp/<name>/``;
2. every HFile the manifest references (:mod:`hbase_migrate.snapshot.manifest`), read where it
   is now (``data/...``, else ``archive/data/...``: a file the source archives meanwhile is
   found there, also in the middle of a copy), written to ``archive/data/<ns>/<table>/
   <region>/<family>/<hfile>`` with the source's block size, streamed (flat memory) and paced
   by the ``[limits] copy_bytes_per_second`` of the step;
3. once every file is there, the working folder renamed to ``.hbase-snapshot/<name>``.

Each file is compared on both sides: HDFS's own checksums (``GETFILECHECKSUM``) when both
files have the same block size and checksum algorithm, else a SHA-256 digest streamed from
both sides. A file the target already holds equal is kept (a rerun copies only what is
missing or differs); every file is a ledger row (``snapshot_files``).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from hbase_migrate.cluster.storage.hdfs_files import HdfsRoot
from hbase_migrate.config import ClusterSpec
from hbase_migrate.errors import ConfigError, HBaseMigrateError
from hbase_migrate.hbase import open_cluster
from hbase_migrate.limits import Throttle, ThrottlePlan
from hbase_migrate.snapshot.manifest import (
    INFO_FILE,
    MANIFEST_FILE,
    SNAPSHOT_DIR,
    WORKING_DIR,
    SnapshotFile,
)

COPY_ATTEMPTS = 3  # a file that moved to archive/ (or changed) meanwhile is read again


class SnapshotExportError(HBaseMigrateError):
    """A snapshot's file could not be exported, or differs after its copy."""


@dataclass(frozen=True)
class ExportFile:
    """One file of ``snapshot`` to export: where it may be on the source (in order) and
    where it goes on the target, both relative to the HBase roots."""

    snapshot: str
    target: str
    sources: tuple[str, ...]

    @classmethod
    def of(cls, snapshot: str, hfile: SnapshotFile) -> ExportFile:
        return cls(snapshot, hfile.target_path(), hfile.source_paths())


def snapshot_folder_files(name: str) -> list[ExportFile]:
    """The snapshot folder's two files, into the target's working folder."""
    return [ExportFile(name, f"{WORKING_DIR}/{name}/{f}", (f"{SNAPSHOT_DIR}/{name}/{f}",))
            for f in (INFO_FILE, MANIFEST_FILE)]


def open_root(cluster: ClusterSpec) -> HdfsRoot:
    """The cluster's HBase root over WebHDFS (with its security:
    :meth:`~hbase_migrate.hbase.Cluster.file_root`)."""
    handle = open_cluster(cluster)
    root = handle.file_root()
    if root is None:
        raise ConfigError(f"{cluster.role} cluster {handle.name!r} names no webhdfs URL "
                          "and hbase_root: [snapshot] method = \"hbase\" copies files over "
                          "WebHDFS")
    return root


@dataclass(frozen=True)
class ExportJob:
    """What every file task of one export shares (picklable, for Spark)."""

    source: ClusterSpec
    target: ClusterSpec
    ledger_url: str | None = None
    migration_id: int | None = None
    step_id: int | None = None
    throttle: ThrottlePlan | None = None

    def roots(self) -> tuple[HdfsRoot, HdfsRoot]:
        return open_root(self.source), open_root(self.target)


@dataclass(frozen=True)
class FileExport:
    """One file done: ``copied`` now, or kept (equal already); how both sides compared."""

    snapshot: str
    path: str
    source_path: str
    size: int
    copied: bool
    checksum: dict[str, str]
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {"snapshot": self.snapshot, "path": self.path, "source_path": self.source_path,
                "size": self.size, "copied": self.copied, "method": self.checksum["method"],
                "seconds": round(self.seconds, 3)}


def export_file_task(job: ExportJob, file: ExportFile) -> FileExport:
    """Export one file (a Spark task or an in-process call) and record it in the ledger."""
    from hbase_migrate.ranges.tasks import task_throttle

    source, target = job.roots()
    with task_throttle(job.throttle) as throttle:
        done = export_file(source, target, file, throttle)
    if job.ledger_url is not None:
        record_exports(job, job.ledger_url, [done])
    return done


def record_exports(job: ExportJob, ledger_url: str, exports: Sequence[FileExport]) -> None:
    """Record files exported by ``job``'s tasks in the ledger."""
    from hbase_migrate.audit.ledger import Ledger

    if job.migration_id is None or not exports:
        return
    with Ledger.open(ledger_url) as ledger:
        for done in exports:
            ledger.record_snapshot_file(job.migration_id, done.snapshot, done.path,
                                        source_path=done.source_path, size=done.size,
                                        status="copied" if done.copied else "kept",
                                        checksum=done.checksum, step_id=job.step_id)


def locate(source: HdfsRoot, file: ExportFile) -> tuple[str, dict[str, Any]]:
    """Where ``file`` is on the source now, and its status."""
    for path in file.sources:
        status = source.status(path)
        if status is not None:
            return path, status
    raise SnapshotExportError(
        f"snapshot {file.snapshot}: file {file.sources[0]} is on the source neither there nor "
        f"in {' or '.join(file.sources[1:]) or 'archive/'} ({source.where('')}): the "
        "snapshot was deleted or expired meanwhile; take a new one")


def export_file(source: HdfsRoot, target: HdfsRoot, file: ExportFile,
                throttle: Throttle | None = None) -> FileExport:
    """Copy ``file`` unless the target holds it equal already; compare both sides after."""
    began = time.monotonic()
    compared: dict[str, str] = {}
    for _ in range(COPY_ATTEMPTS):
        where, status = locate(source, file)
        have = target.status(file.target)
        if have is not None and have["length"] == status["length"]:
            equal, compared = compare(source, where, status, target, file.target, have)
            if equal:
                return FileExport(file.snapshot, file.target, where, int(status["length"]), False,
                                  compared, time.monotonic() - began)
        try:
            digest = _copy(source, where, target, file.target, int(status["blockSize"]),
                           throttle)
        except FileNotFoundError:
            continue  # archived in the middle of the copy: read it again where it is now
        have = target.status(file.target)
        if have is not None:
            equal, compared = compare(source, where, status, target, file.target, have, digest)
            if equal:
                return FileExport(file.snapshot, file.target, where, int(status["length"]), True,
                                  compared, time.monotonic() - began)
    raise SnapshotExportError(
        f"snapshot {file.snapshot}: {target.where(file.target)} still differs from the source's "
        f"{file.sources[0]} after {COPY_ATTEMPTS} copies ({compared or 'missing'})")


def _copy(source: HdfsRoot, path: str, target: HdfsRoot, to: str, blocksize: int,
          throttle: Throttle | None) -> str:
    """Stream ``path`` to ``to`` (overwritten); the SHA-256 of the bytes sent."""
    digest = hashlib.sha256()

    def chunks(stream: Iterator[bytes]) -> Iterator[bytes]:
        for chunk in stream:
            digest.update(chunk)
            if throttle is not None:
                throttle.take(0, len(chunk))
            yield chunk

    with source.read(path) as stream:
        target.write(to, chunks(stream), blocksize=blocksize)
    return digest.hexdigest()


def sha256_of(root: HdfsRoot, path: str) -> str:
    """The SHA-256 of a file, streamed."""
    digest = hashlib.sha256()
    with root.read(path) as stream:
        for chunk in stream:
            digest.update(chunk)
    return digest.hexdigest()


def compare(source: HdfsRoot, path: str, status: dict[str, Any], target: HdfsRoot, to: str,
            have: dict[str, Any], source_digest: str | None = None
            ) -> tuple[bool, dict[str, str]]:
    """Whether the two files are equal, and how it was found: HDFS checksums when both
    sides' block sizes and algorithms agree, else SHA-256 streamed from both sides
    (``source_digest``: the source's, already computed while copying)."""
    if status["length"] != have["length"]:
        return False, {"method": "length", "source": str(status["length"]),
                       "target": str(have["length"])}
    if status["blockSize"] == have["blockSize"]:
        ours, theirs = source.checksum(path), target.checksum(to)
        if ours["algorithm"] == theirs["algorithm"]:
            return ours["bytes"] == theirs["bytes"], {
                "method": f"hdfs {ours['algorithm']}", "source": ours["bytes"],
                "target": theirs["bytes"]}
    ours_hex = source_digest or sha256_of(source, path)
    theirs_hex = sha256_of(target, to)
    return ours_hex == theirs_hex, {"method": "sha256", "source": ours_hex,
                                    "target": theirs_hex}
