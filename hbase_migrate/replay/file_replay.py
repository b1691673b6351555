"""Replay one WAL file into a target, from a saved offset, reporting only acknowledged
progress.

Entries are read in file order with :class:`WalReader`, filtered (:class:`ReplayFilter`),
converted (:mod:`convert`, :mod:`mutations`) and buffered per target table; when the
buffer holds ``batch_cells`` cells (an entry without data cells counts as one, so progress
over filtered stretches is reported too) or ``batch_bytes`` bytes of cells (multi-MB
cells) it is applied, and once every table's ``apply`` has returned
(acknowledged) ``on_progress`` receives the offset reached: the end of the last entry
taken, with the index of the next one. Only those offsets may be recorded as replayed.

Pipelining: batches are applied in file order by one worker thread while this thread reads,
filters and converts the next ones; at most ``in_flight`` batches are handed over and not yet
acknowledged (``in_flight=0``: each batch is applied before reading on). Acknowledgements
come back in order and ``on_progress`` runs in the caller's thread, so an offset is reported
only once every batch before it was acknowledged. After a failed batch nothing further is
applied or reported: the error is raised with the last acknowledged offset reported. Calls
to the target (``describe``, ``apply``) never overlap. Memory stays bounded by
``in_flight + 1`` batches and the reader's window, whatever the file size.

The read ends normally at the trailer (a closed file, fully replayed) or at a cut-off tail
(``eof``/``truncated``/``partial_trailer``: a live or crashed writer's file; resume later
from ``end_offset`` with ``start_index=next_index``). A corrupt file, or an entry that cannot
be converted, raises after everything before it was applied and reported.

Ordering: entries of one file are applied in file order; files are otherwise independent
units of work. The one case where order across files matters is a region that moved
between servers (REGION_CLOSE in the old server's WAL, REGION_OPEN in the new one's): the
same cell (row, family, qualifier, timestamp) may have been written on both sides with
different values, and the later sequence id must win. The caller must therefore replay the
files holding a moved region's edits one after the other in order of that region's
sequence ids (old server's files up to the close first), not in parallel. Each result's
``region_events`` lists the open/close markers, with sequence ids and positions, to find
those files.
"""

from __future__ import annotations

import os
import queue
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import cast

from hbase_migrate.errors import WalCorruptError
from hbase_migrate.replay.apply import (
    AppliedCounts,
    PipelinedTarget,
    ReplayTarget,
    require_families,
    takes_cell_blocks,
)
from hbase_migrate.replay.convert import Batch, EntryConverter
from hbase_migrate.replay.errors import ReplayError
from hbase_migrate.replay.filters import ReplayFilter
from hbase_migrate.replay.marker_log import BulkLoadRecord, RegionEvent
from hbase_migrate.replay.touched import TouchedRows
from hbase_migrate.wal.reader import WalReader

Source = str | os.PathLike[str]
COMPLETE = "trailer"
# Cells per acknowledged batch. At 2,000,000 cells on real HBase 2.6.1 a replay of 20,000-cell
# batches took 28 s where 5,000-cell ones took 38 to 52 s: a batch's Multis each cost the
# target a WAL sync per region (docs/figures.md, "The cost curve").
DEFAULT_BATCH_CELLS = 20_000


@dataclass(frozen=True)
class ReplaySpec:
    """One replay job: what to replay, how much to send per acknowledged batch, and how many
    batches may be in flight (handed to the target, not yet acknowledged) per file."""

    filter: ReplayFilter = field(default_factory=ReplayFilter)
    batch_cells: int = DEFAULT_BATCH_CELLS
    in_flight: int = 2
    batch_bytes: int = 16 * 1024 * 1024

    def __post_init__(self) -> None:
        if self.batch_cells < 1:
            raise ValueError(f"batch_cells must be >= 1, got {self.batch_cells}")
        if self.batch_bytes < 1:
            raise ValueError(f"batch_bytes must be >= 1, got {self.batch_bytes}")
        if self.in_flight < 0:
            raise ValueError(f"in_flight must be >= 0, got {self.in_flight}")


@dataclass(frozen=True)
class FileProgress:
    """Acknowledged progress in one file: everything before ``offset`` is on the target.

    Counts cover the entries from the start offset of this run up to ``offset``.
    """

    file: str
    offset: int  # end of the last entry taken (entry boundary)
    next_index: int | None  # index of the entry at ``offset``; None when unknown
    entries: int  # entries read
    entries_applied: int  # entries with at least one data cell sent
    entries_skipped: Mapping[str, int]  # by reason (system table, not mapped, window)
    cells: Mapping[str, int]  # cells written, by type name
    cells_filtered: int  # cells of families not replayed
    markers: Mapping[str, int]  # by kind
    bulk_loads: tuple[BulkLoadRecord, ...]
    region_events: tuple[RegionEvent, ...]
    approximations: Mapping[str, int]  # by kind (Thrift1 policy)
    tags_dropped: int  # tags of written cells (written without them)
    calls: int  # write calls to the target
    last_write_time: int | None  # write_time of the last entry taken


@dataclass(frozen=True)
class FileResult:
    """How a replay of one file ended."""

    progress: FileProgress
    end_reason: str  # "trailer", "eof", "truncated" or "partial_trailer"
    has_trailer: bool

    @property
    def end_offset(self) -> int:
        return self.progress.offset

    @property
    def complete(self) -> bool:
        """The file is closed and fully replayed (nothing can be appended to it)."""
        return self.end_reason == COMPLETE


def _frozen(counter: Counter[str]) -> Mapping[str, int]:
    return MappingProxyType(dict(counter))


class _Applier:
    """Applies batches in order, on a worker thread when ``in_flight`` > 0, and hands back
    (progress to report, counts) per acknowledged batch, in order. After a failure it
    applies nothing more; the failure comes back in its batch's place.

    A target that sends without waiting (:class:`PipelinedTarget`) needs no thread: each
    batch is sent from the calling thread once the one before it is acknowledged, so the
    reading and preparing of the next batch overlap the wait for the last one's
    acknowledgements."""

    def __init__(self, target: ReplayTarget, lock: threading.Lock, in_flight: int,
                 name: str) -> None:
        self.target, self.lock, self.limit = target, lock, in_flight
        self.handed = 0  # batches handed over and not yet taken back
        self._todo: queue.SimpleQueue[tuple[Batch, FileProgress | None] | None] = (
            queue.SimpleQueue())
        self._done: queue.SimpleQueue[
            tuple[FileProgress | None, AppliedCounts | None, BaseException | None]
        ] = queue.SimpleQueue()
        self._stop = False
        self._thread: threading.Thread | None = None
        self._sent: tuple[FileProgress | None, list[Callable[[], AppliedCounts]]] | None = None
        self._pipelined = in_flight > 0 and callable(getattr(target, "send", None))
        if in_flight and not self._pipelined:
            self._thread = threading.Thread(target=self._work, name=f"replay {name}",
                                            daemon=True)
            self._thread.start()

    def _apply(self, batch: Batch) -> AppliedCounts:
        counts = AppliedCounts()
        for table, mutations in batch.items():
            with self.lock:
                counts.add(self.target.apply(table, mutations))
        return counts

    def _work(self) -> None:
        while (item := self._todo.get()) is not None and not self._stop:
            batch, report = item
            try:
                self._done.put((report, self._apply(batch), None))
            except BaseException as exc:  # handed back to the reading thread, which raises
                self._done.put((report, None, exc))
                return

    def _finish_sent(self) -> None:
        """Wait for the batch sent last (pipelined) to be acknowledged."""
        if self._sent is None:
            return
        report, waits = self._sent
        self._sent = None
        try:
            counts = AppliedCounts()
            for wait in waits:
                with self.lock:
                    counts.add(wait())
            self._done.put((report, counts, None))
        except BaseException as exc:
            self._done.put((report, None, exc))
            self._stop = True

    def _send(self, batch: Batch, report: FileProgress | None) -> None:
        """Prepare this batch, wait for the one before to be acknowledged, send this one
        (pipelined)."""
        target = cast(PipelinedTarget, self.target)
        try:
            with self.lock:
                sends = [target.prepare(table, m) for table, m in batch.items()]
            batch.clear()  # handed over: freed now, while in cache (``sends`` keep their part)
            failure = None
        except BaseException as exc:
            failure = exc
        self._finish_sent()  # (its outcome comes back before this batch's)
        if self._stop:
            return
        try:
            if failure is not None:
                raise failure
            with self.lock:
                waits = [send() for send in sends]
        except BaseException as exc:
            self._done.put((report, None, exc))
            self._stop = True
            return
        self._sent = (report, waits)

    def hand(self, batch: Batch, report: FileProgress | None) -> None:
        """Hand a batch over; with ``in_flight`` batches out, first wait for the oldest."""
        self.handed += 1
        if self._pipelined:
            self._send(batch, report)
        elif self._thread is None:
            try:
                self._done.put((report, self._apply(batch), None))
            except BaseException as exc:
                self._done.put((report, None, exc))
        else:
            self._todo.put((batch, report))

    def acknowledged(self, *, wait: bool
                     ) -> tuple[FileProgress | None, AppliedCounts] | None:
        """The oldest acknowledged batch's (report, counts); None when none is back (and
        ``wait`` is false, or nothing is handed over). Raises the batch's failure."""
        if not self.handed:
            return None
        if wait and self._done.empty():
            self._finish_sent()
        try:
            report, counts, exc = self._done.get(block=wait)
        except queue.Empty:
            return None
        self.handed -= 1
        if exc is not None:
            self.handed = 0
            raise exc
        assert counts is not None
        return report, counts

    def close(self) -> None:
        """Stop the worker: batches not yet started (or sent and not yet acknowledged)
        are dropped (never reported)."""
        self._sent = None
        if self._thread is not None:
            self._stop = True
            self._todo.put(None)
            self._thread.join()
            self._thread = None


class _Run:
    """The state of one replay of one file."""

    def __init__(self, name: str, spec: ReplaySpec, target: ReplayTarget,
                 on_progress: Callable[[FileProgress], None] | None,
                 touched: TouchedRows | None = None) -> None:
        self.name, self.spec, self.target, self.on_progress = name, spec, target, on_progress
        self.touched = touched
        self.lock = threading.Lock()  # one call at a time to the target
        self.applier = _Applier(target, self.lock, spec.in_flight, name)
        self.conv = EntryConverter(name, spec.filter, target, self.lock)
        self.reported: tuple[int, int] | None = None
        self.applied = AppliedCounts()

    def check_mapping(self) -> None:
        """Every mapped target table, and the families a filter names, exist."""
        flt = self.spec.filter
        for source, dst in flt.tables:
            self.target.describe(dst)
            families = flt.families_of(source)
            if families:
                require_families(self.target, dst, families, f"mapped from {source}")

    def flush(self) -> None:
        """Hand the buffer over (with the progress to report once it is acknowledged, if
        the offset moved), then report whatever was acknowledged meanwhile."""
        conv = self.conv
        here = (conv.offset, conv.entries)
        moved = here != self.reported
        if conv.pending or moved:
            report = self.progress() if moved and self.on_progress is not None else None
            while self.applier.handed >= max(self.spec.in_flight, 1):
                self._acknowledged(wait=True)
            if self.touched is not None:
                for table, mutations in conv.pending.items():
                    self.touched.add(table, mutations)
            self.applier.hand(conv.pending, report)
            conv.pending = {}
            self.reported = here
        conv.weight = conv.bytes = 0
        while self._acknowledged(wait=False):
            pass

    def drain(self) -> None:
        """Hand the buffer over and wait for every batch to be acknowledged and reported."""
        self.flush()
        while self._acknowledged(wait=True):
            pass

    def _acknowledged(self, *, wait: bool) -> bool:
        back = self.applier.acknowledged(wait=wait)
        if back is None:
            return False
        report, counts = back
        self.applied.add(counts)
        if report is not None and self.on_progress is not None:
            # the counters read with the batch, the target's counts as acknowledged so far
            self.on_progress(replace(
                report, cells=_frozen(self.applied.cells), calls=self.applied.calls,
                approximations=_frozen(self.applied.approximations)))
        return True

    def progress(self) -> FileProgress:
        conv = self.conv
        return FileProgress(
            self.name, conv.offset, conv.next_index, conv.entries, conv.entries_applied,
            _frozen(conv.skipped), _frozen(self.applied.cells), conv.cells_filtered,
            _frozen(conv.markers.counts), tuple(conv.markers.bulk_loads),
            tuple(conv.markers.region_events), _frozen(self.applied.approximations),
            conv.tags, self.applied.calls, conv.last_write_time)


def replay_file(source: Source, spec: ReplaySpec, target: ReplayTarget, *,
                start_offset: int = 0, start_index: int | None = None,
                on_progress: Callable[[FileProgress], None] | None = None,
                touched: TouchedRows | None = None) -> FileResult:
    """Replay the WAL at ``source`` (path or ``webhdfs://`` URL) from ``start_offset``;
    ``touched`` gathers the rows handed to the target (:mod:`.touched`).

    ``start_index`` is the index of the entry at ``start_offset`` (a progress report's
    ``next_index``): it lets the reader seek there directly. Raises the reader's
    ``WalCorruptError``, a :class:`ReplayError` for entries that cannot be replayed, or
    :class:`ReplayWriteError`; in the first two cases after applying and reporting every
    entry before the bad one. ``target.apply`` runs on a worker thread when
    ``spec.in_flight`` > 0 (never two calls at once); ``on_progress`` in this one.
    """
    name = os.fspath(source)
    run = _Run(name, spec, target, on_progress, touched)
    try:
        run.check_mapping()
        with WalReader(source, start_offset=start_offset, start_index=start_index,
                       cell_blocks=takes_cell_blocks(target)) as reader:
            conv = run.conv
            conv.offset = reader.end_offset
            conv.next_index = start_index if start_offset else 0
            entries = iter(reader)
            while True:
                try:
                    full = conv.take_batch(entries, spec.batch_cells, spec.batch_bytes)
                except (ReplayError, WalCorruptError):  # a bad entry: what came before counts
                    run.drain()
                    raise
                if not full:
                    break
                run.flush()
            conv.offset = reader.end_offset
            run.drain()
            return FileResult(run.progress(), reader.end_reason, reader.has_trailer)
    finally:
        run.applier.close()
