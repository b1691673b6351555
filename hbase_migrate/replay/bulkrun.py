"""A replay run's edits bulk-loaded into the target instead of pushed through its write path
(issue 78): the choice of the path (``[replay] bulk``), and the run's files replayed into
windows of HFiles that are loaded over HBase's RPC.

The choice (:func:`choose_path`), in order, the first reason deciding: ``never``; with
``auto``, a backlog (the WAL bytes the run plans to read) below ``bulk_backlog``; a target
that cannot take a bulk load (Cloud Bigtable, the Thrift gateways, Kerberos for now, no
WebHDFS, or no real HBase root there: the embedded cluster); else the bulk path. Each answer
is one line saying why, in the step's metrics. The default is ``never`` until the bulk path
is measured again on real HBase with the HFile writer's loop compiled
(``config_parts.DEFAULT_BULK``).

The bulk path keeps the write path's semantics (:mod:`hbase_migrate.replay.bulkfiles`):
the files are read in the run's order (each chain's in order, a moved region's older file
first: :mod:`hbase_migrate.replay.ordering`) and their edits gathered per target table in
a :class:`~hbase_migrate.replay.bulkfiles.BulkWindow`, where a later edit of a key replaces
an earlier one; once a window holds ``bulk_window`` bytes of cells, at the end of a file,
its HFiles are written per region and family (what a window holds past ``bulk_memory``
spilled to local files under ``TMPDIR`` as sorted runs and merged back as they are written)
and loaded (:mod:`hbase_migrate.replay.bulkload`); a later window's load gets higher
sequence ids, so its edits win over an earlier one's. A file's progress is recorded in the
ledger only once the load carrying its edits is acknowledged: until then its offsets, its
end and its failure are held. A load that fails ends the run with :class:`BulkLoadError`
naming the window's files, none of them recorded as replayed (the next run replays them
again, as after a crash); so does a window whose next sorted run its local folder has no room for
(:class:`~hbase_migrate.replay.errors.SpillSpaceError`, one line naming the folder, the
bytes needed and the settings to change; checked before the run is written). The rows
written are recorded for the round's validation as on the write path (every mutation handed
over); the cells' tags are written into the files, where the write path drops them.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.sizing import format_bytes
from hbase_migrate.cluster.storage.hdfs_files import HdfsRoot
from hbase_migrate.config import ClusterSpec
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.hbase import BulkLoadCalls, open_cluster
from hbase_migrate.replay.apply import AppliedCounts, ReplayTarget, WrappingTarget, count_cells
from hbase_migrate.replay.bulkfiles import SPILL_BYTES, BulkWindow, FreeSpace, free_bytes
from hbase_migrate.replay.bulkload import BulkLoad, BulkLoadError, WebHdfsStaging
from hbase_migrate.replay.errors import SpillError, SpillSpaceError
from hbase_migrate.replay.file_replay import FileProgress
from hbase_migrate.replay.job import FileOutcome, FileTask, ReplayJob, Totals
from hbase_migrate.replay.mutations import RowMutation
from hbase_migrate.replay.scratch import Scratch, sweep

log = logging.getLogger(__name__)

BULK, WRITE = "bulk load", "write path"
LAYOUT_FILE = "hbase.version"  # in every real HBase root
NOT_RECORDED = ("none of the window's WAL files is recorded as replayed (the next run replays "
                "them again)")
ProgressHook = Callable[[str, FileProgress, Totals], None]


@dataclass(frozen=True)
class PathChoice:
    """How a run writes the target (:data:`BULK` or :data:`WRITE`) and why, in one line."""

    path: str
    reason: str
    backlog: int  # WAL bytes the run planned to read

    @property
    def bulk(self) -> bool:
        return self.path == BULK

    @property
    def line(self) -> str:
        return f"replay path: {self.path} ({self.reason})"


def planned_bytes(tasks: Sequence[FileTask]) -> int:
    """The WAL bytes a run plans to read: each file's size past its start offset (a live
    file's as the NameNode knows it)."""
    return sum(max(0, (t.size or 0) - t.start_offset) for t in tasks)


class TargetProbe(Protocol):
    """Whether the target's HBase root is a real HBase's (its ``hbase.version``) over
    WebHDFS: an HBaseMigrateError when it cannot say."""

    def real_root(self, endpoints: ClusterEndpoints) -> bool: ...


class WebHdfsProbe:
    """:class:`TargetProbe` over the target's WebHDFS."""

    def real_root(self, endpoints: ClusterEndpoints) -> bool:
        assert endpoints.webhdfs and endpoints.hbase_root
        root = HdfsRoot(endpoints.webhdfs, endpoints.hbase_root, "target",
                        security=endpoints.security, cluster=endpoints.name)
        return root.status(LAYOUT_FILE) is not None


def choose_path(job: ReplayJob, tasks: Sequence[FileTask],
                probe: TargetProbe | None = None) -> PathChoice:
    """The path of a run replaying ``tasks`` into the migration's target (module)."""
    settings = job.spec.replay
    backlog = planned_bytes(tasks)
    sized = f"the backlog, {format_bytes(backlog)} of WAL in {len(tasks)} file(s),"
    if settings.bulk == "never":
        return PathChoice(WRITE, '[replay] bulk = "never"', backlog)
    if settings.bulk == "auto" and backlog < settings.bulk_backlog:
        return PathChoice(WRITE, f"{sized} is below [replay] bulk_backlog "
                          f"({format_bytes(settings.bulk_backlog)})", backlog)
    why_not = _refusal(job, probe or WebHdfsProbe())
    if why_not is not None:
        return PathChoice(WRITE, why_not, backlog)
    asked = ('[replay] bulk = "always"' if settings.bulk == "always" else
             f"{sized} reaches [replay] bulk_backlog ({format_bytes(settings.bulk_backlog)})")
    return PathChoice(BULK, f"{asked}, and the target is HBase over its RPC with its HDFS "
                      "over WebHDFS", backlog)


def _refusal(job: ReplayJob, probe: TargetProbe) -> str | None:
    """Why the target cannot take the run's edits as a bulk load, or None."""
    if job.target.bigtable is None and job.force_thrift1:
        return "--thrift1 writes through the target's Thrift1 gateway, which has no bulk load"
    return bulk_refusal(job.target, probe)


def bulk_refusal(target: ClusterSpec, probe: TargetProbe | None = None) -> str | None:
    """Why ``target`` cannot take a bulk load from here, or None: Cloud Bigtable, a Thrift
    gateway, Kerberos (for now), no WebHDFS and HBase root, or no real HBase root there
    (``probe``: :class:`WebHdfsProbe` unless told)."""
    if target.bigtable is not None:
        return "the target is Cloud Bigtable, which takes no bulk load"
    endpoints = open_cluster(target).endpoints
    name = f"the target cluster {endpoints.name!r}"
    checks = (
        (not endpoints.native, f"{name} is reached through its Thrift gateway, which has no "
         'bulk load (a bulk load goes over HBase\'s RPC: client = "native")'),
        (endpoints.kerberos, f"{name} is Kerberos-secured, and its region servers take a "
         "bulk load only with a delegation token of its filesystem, which is not sent yet"),
        (not (endpoints.webhdfs and endpoints.hbase_root), f"{name} names no webhdfs URL and "
         "hbase_root, and a bulk load stages its files on the target's HDFS over WebHDFS"),
    )
    return next((why for failed, why in checks if failed), None) or _root_refusal(
        name, endpoints, probe or WebHdfsProbe())


def _root_refusal(name: str, endpoints: ClusterEndpoints, probe: TargetProbe) -> str | None:
    """Why the target's HBase root over WebHDFS is no real HBase's, or None."""
    try:
        real = probe.real_root(endpoints)
    except (HBaseMigrateError, OSError) as exc:
        return f"{name}'s HBase root over WebHDFS could not be checked: {exc}"
    if real:
        return None
    return (f"{name} has no {LAYOUT_FILE} under its HBase root over WebHDFS: it is no HBase "
            "that keeps its tables in HFiles (the embedded cluster takes no bulk load)")


class Books(Protocol):
    """What a run's ledger bookkeeping does for each file (``run_books.RunBooks``)."""

    def handled(self, task: FileTask) -> bool: ...
    def begin(self, task: FileTask) -> None: ...
    def progress_hook(self, task: FileTask) -> ProgressHook: ...
    def settle(self) -> None: ...
    def finish(self, task: FileTask, outcome: FileOutcome) -> FileOutcome: ...


@dataclass
class _Held:
    """A file of the window: its newest progress and its outcome, not yet recorded."""

    task: FileTask
    hook: ProgressHook
    progress: tuple[str, FileProgress, Totals] | None = None
    outcome: FileOutcome | None = None


class HeldBooks:
    """``books`` whose files' progress and outcomes are held until :meth:`release` (their
    window's load acknowledged) or dropped with it (a failed load)."""

    def __init__(self, books: Books) -> None:
        self.books = books
        self.held: list[_Held] = []

    def handled(self, task: FileTask) -> bool:
        return self.books.handled(task)

    def begin(self, task: FileTask) -> None:
        self.books.begin(task)
        self.held.append(_Held(task, self.books.progress_hook(task)))

    def progress_hook(self, task: FileTask) -> ProgressHook:
        held = self.held[-1]
        assert held.task is task, "a file's progress comes after it began"

        def hook(path: str, progress: FileProgress, totals: Totals) -> None:
            held.progress = (path, progress, totals)
        return hook

    def settle(self) -> None:
        """What was released and not recorded yet (nothing held)."""
        self.books.settle()

    def finish(self, task: FileTask, outcome: FileOutcome) -> FileOutcome:
        """``outcome`` held; its tags count as written (the files keep them)."""
        held = self.held[-1]
        assert held.task is task
        held.outcome = replace(outcome, tags_dropped=0)
        return held.outcome

    def release(self) -> None:
        """The held files recorded, in their order: each one's newest progress, then its
        end (replayed, failed, vanished)."""
        held, self.held = self.held, []
        for h in held:
            if h.progress is not None:
                h.hook(*h.progress)
            if h.outcome is not None:
                self.books.finish(h.task, h.outcome)
        self.books.settle()

    def paths(self) -> list[str]:
        return [h.task.path for h in self.held]


class WindowSink(WrappingTarget):
    """A :class:`ReplayTarget` gathering the mutations handed to it into one
    :class:`BulkWindow` per target table (``target`` describes the tables; the regions
    come from ``calls``); acknowledged at once: the caller records nothing before
    :meth:`BulkReplay.load`. Each window holds ``memory`` bytes of cells in memory and
    spills the rest under ``spill_dir`` (``TMPDIR`` unless told), the room there read with
    ``free``; ``migration`` (its name) begins the line of a run it has no room for."""

    def __init__(self, target: ReplayTarget, calls: BulkLoadCalls, *,
                 memory: int | None = SPILL_BYTES, spill_dir: Path | None = None,
                 free: FreeSpace = free_bytes, migration: str = "") -> None:
        super().__init__(target)
        self.calls = calls
        self.windows: dict[str, BulkWindow] = {}
        self.memory, self.spill_dir, self.free = memory, spill_dir, free
        self.migration = migration

    def apply(self, table: str, mutations: Sequence[RowMutation]) -> AppliedCounts:
        window = self.windows.get(table)
        if window is None:
            window = self.windows[table] = BulkWindow(
                self.target.describe(table), self.calls.regions(table), memory=self.memory,
                spill_dir=self.spill_dir, free=self.free)
        try:
            window.add(mutations)
        except SpillSpaceError as exc:
            raise SpillSpaceError(
                f"migration {self.migration}: {exc}; free space there, point TMPDIR to a larger "
                f"folder, or lower [replay] bulk_window (a window spills what it holds past "
                f"[replay] bulk_memory); {NOT_RECORDED}", folder=exc.folder,
                needed=exc.needed, free=exc.free) from exc
        except SpillError as exc:
            raise SpillError(f"migration {self.migration}: {exc}; {NOT_RECORDED}",
                             folder=exc.folder) from exc
        return AppliedCounts(count_cells(mutations))

    @property
    def bytes(self) -> int:
        return sum(w.bytes for w in self.windows.values())

    def drop(self) -> None:
        """The windows dropped, their spilled runs removed."""
        for window in self.windows.values():
            window.discard()
        self.windows.clear()

    def close(self) -> None:
        try:
            self.drop()
        finally:
            super().close()


@dataclass
class BulkTotals:
    """What a run's loads did, for the step's metrics."""

    loads: int = 0  # windows loaded
    files: int = 0  # HFiles written (before any split at new boundaries)
    size: int = 0  # their bytes
    regions: set[tuple[str, bytes]] = field(default_factory=set)  # (table, region start)
    cells: int = 0  # cells written into them (a key written twice in a window, once)
    split: int = 0  # files split at a region boundary met at load time
    seconds: float = 0.0  # writing and loading


class BulkReplay:
    """A run's bulk path: its sink (:attr:`sink`), its held books (:attr:`books`), and the
    loads (:meth:`after_file`, :meth:`load`), over the bulk-load calls of ``job``'s target,
    which :meth:`close` closes."""

    def __init__(self, job: ReplayJob, target: ReplayTarget, books: Books,
                 choice: PathChoice) -> None:
        self.job, self.choice = job, choice
        self.totals = BulkTotals()
        # What a killed bulk replay left under TMPDIR goes as the next one starts (what an
        # operator runs after a kill), whether or not this run spills, and before it reads
        # the room there for its own runs.
        sweep(Path(tempfile.gettempdir()))
        self._stack = ExitStack()
        cluster = open_cluster(job.target)
        endpoints = cluster.endpoints
        try:
            calls = self._stack.enter_context(cluster.bulk_load())
        except BaseException:
            target.close()
            raise
        self.staging = WebHdfsStaging(endpoints.webhdfs or "", security=endpoints.security,
                                      cluster=endpoints.name)
        self.sink = WindowSink(target, calls, memory=job.spec.replay.bulk_memory,
                               free=free_bytes, migration=job.name)  # under TMPDIR
        self.books = HeldBooks(books)
        self.task = f"hbase-migrate replay {job.name}"

    def after_file(self) -> None:
        """A file ended: its window loaded once it holds ``[replay] bulk_window`` bytes."""
        if self.sink.bytes >= self.job.spec.replay.bulk_window:
            self.load()

    def load(self) -> None:
        """The window's files written, loaded table by table, and only then its files'
        progress recorded; a failure raises :class:`BulkLoadError`, nothing recorded."""
        windows = [(t, w) for t, w in self.sink.windows.items() if w.count]
        if windows:
            began = time.monotonic()
            try:
                with Scratch("bulk", Path(tempfile.gettempdir())) as folder:
                    for n, (table, window) in enumerate(windows):
                        self._load(table, window, folder / str(n))
            except OSError as exc:  # the window's runs or files, on this host's disk
                raise SpillError(
                    f"migration {self.job.name}: the bulk window's files could not be written "
                    f"under {tempfile.gettempdir()}: {exc.strerror or exc} "
                    f"({getattr(exc, 'filename', None) or 'a run or file'}); {NOT_RECORDED}",
                    folder=tempfile.gettempdir()) from exc
            except BulkLoadError as exc:
                raise BulkLoadError(
                    f"migration {self.job.name}: the bulk load of {len(self.books.held)} WAL "
                    f"file(s) failed, none of them recorded as replayed (the next run "
                    f"replays them again): {', '.join(self.books.paths())}: {exc}") from exc
            finally:
                self.sink.drop()
                self.totals.seconds += time.monotonic() - began
            self.totals.loads += 1
        self.books.release()

    def _load(self, table: str, window: BulkWindow, folder: Path) -> None:
        cells = window.count
        written = window.write(folder, self.task)
        report = BulkLoad(self.sink.calls, window.table, self.staging,
                          task=self.task).run([(f.family, f.path) for f in written])
        t = self.totals
        t.files += len(written)
        t.size += sum(f.path.stat().st_size for f in written)
        t.regions.update((table, f.region.start_key) for f in written)
        t.cells += sum(f.cells for f in written)
        t.split += len(report.split)
        log.info("migration %s: table %s: %d cells of the window (%d written) bulk-loaded as "
                 "%d file(s) in %d round(s)", self.job.name, table, cells,
                 sum(f.cells for f in written), len(written), report.rounds)

    def to_metrics(self) -> dict[str, Any]:
        t = self.totals
        return {"loads": t.loads, "files": t.files, "bytes": t.size,
                "regions": len(t.regions), "cells": t.cells, "split": t.split,
                "seconds": round(t.seconds, 3)}

    def close(self) -> None:
        """The sink's target and the bulk-load calls closed."""
        try:
            self.sink.close()
        finally:
            self._stack.close()


def path_line(metrics: dict[str, Any]) -> str:
    """A step's ``replay_path`` (:func:`path_metrics`) as one line."""
    line = f"replay path: {metrics['path']} ({metrics['reason']})"
    loads = metrics.get("bulk")
    if loads:
        line += (f"; {loads['loads']} load(s) of {loads['files']} file(s), "
                 f"{format_bytes(loads['bytes'])}, into {loads['regions']} region(s) in "
                 f"{loads['seconds']:.1f} s")
    return line


def path_metrics(choice: PathChoice, bulk: BulkReplay | None) -> dict[str, Any]:
    """The step's ``replay_path``: the path, why, the backlog, and what the loads did."""
    return {"path": choice.path, "reason": choice.reason, "backlog_bytes": choice.backlog,
            **({"bulk": bulk.to_metrics()} if bulk is not None else {})}
