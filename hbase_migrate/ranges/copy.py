"""Copy every retained version of every cell of a key range from one cluster to another.

Cells keep their original timestamps, so copying twice gives the same target (idempotent),
and WAL edits replayed later with their own timestamps order correctly against the copy.

Memory stays bounded by bytes, whatever the cell sizes: the source is scanned in calls of
about its ``max_result_bytes`` (a row wider than that comes in pieces), and the cells read
are handed to the writer in batches of at most ``batch_cells`` cells and the target's
``max_put_bytes`` (two batches queued, one being written).

A :class:`~hbase_migrate.limits.Throttle` (the ``[limits]`` of the copy) paces the reading
half, row by row, in cells and bytes; its adaptive mode times the scan and put calls.

A copy in this process runs under :func:`~hbase_migrate.heavy_imports.fewer_collections`
(the step's core function sets it): its cells form no reference cycles.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from itertools import chain

from hbase_migrate.cluster.client import Client
from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.cluster.sizing import cell_bytes, cells_bytes
from hbase_migrate.limits import Throttle, metered_batches
from hbase_migrate.runstate import watched_batches
from hbase_migrate.wal.model import Cell

# a region server applies each region of a Multi with a WAL sync of its own: larger batches
# mean fewer syncs for the same cells (the target's max_put_bytes still bounds a batch)
DEFAULT_BATCH_CELLS = 20_000


@dataclass
class CopyStats:
    rows: int = 0
    cells: int = 0

    def add(self, other: CopyStats) -> None:
        self.rows += other.rows
        self.cells += other.cells


def _batches(pieces: Iterable[list[Cell]], batch_cells: int, batch_bytes: int,
             counts: list[int]) -> Iterator[list[Cell]]:
    """``pieces`` in batches of at most ``batch_cells`` cells and, but for a single larger
    cell, ``batch_bytes`` (the last one maybe empty); ``counts``: rows, cells."""
    pending: list[Cell] = []
    size, last_row = 0, None
    for piece in pieces:
        if piece[0].row != last_row:  # a wide row comes in several pieces
            counts[0] += 1
            last_row = piece[0].row
        counts[1] += len(piece)
        if len(pending) + len(piece) <= batch_cells:  # the usual piece: it fits whole
            weight = cells_bytes(piece)
            if size + weight <= batch_bytes:
                pending += piece
                size += weight
                continue
        for cell in piece:
            weight = cell_bytes(cell)
            if pending and (len(pending) >= batch_cells or size + weight > batch_bytes):
                yield pending
                pending, size = [], 0
            pending.append(cell)
            size += weight
    yield pending


def _read_batches(pieces: Iterable[list[Cell]], batch_cells: int, batch_bytes: int,
                  out: queue.Queue[list[Cell] | BaseException | None],
                  halt: threading.Event, counts: list[int]) -> None:
    """The reading half of a copy: :func:`_batches` into ``out``, then None."""
    def put(item: list[Cell] | BaseException | None) -> bool:
        while not halt.is_set():
            try:
                out.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    try:
        for batch in _batches(pieces, batch_cells, batch_bytes, counts):
            if not put(batch):
                return
        put(None)
    except BaseException as exc:
        put(exc)


def copy_range(source: Client, target: Client, table: str, target_table: str,
               start: bytes = b"", stop: bytes = b"", time_range: tuple[int, int] | None = None,
               batch_cells: int = DEFAULT_BATCH_CELLS, throttle: Throttle | None = None
               ) -> CopyStats:
    """Copy the cells of ``[start, stop)`` (every version the source returns), paced by
    ``throttle`` (see :func:`copy_pieces`)."""
    batches = watched_batches(source.scan_batches(table, start, stop, time_range=time_range),
                              f"copy of {table}")
    return copy_pieces(chain.from_iterable(metered_batches(batches, throttle)), target,
                       target_table, batch_cells, throttle)


def copy_pieces(pieces: Iterable[list[Cell]], target: Client, target_table: str,
                batch_cells: int = DEFAULT_BATCH_CELLS, throttle: Throttle | None = None
                ) -> CopyStats:
    """Write ``pieces`` (a scan's: the cells of a row, or of part of a wide row, in key
    order) to ``target_table``. They are read in a second thread while the target writes
    the previous batch; batches hold at most ``batch_cells`` cells and the target's
    ``max_put_bytes``; ``throttle`` times the writes."""
    batches: queue.Queue[list[Cell] | BaseException | None] = queue.Queue(maxsize=2)
    halt, counts = threading.Event(), [0, 0]
    reader = threading.Thread(target=_read_batches, name=f"read for {target_table}",
                              daemon=True, args=(pieces, batch_cells, target.max_put_bytes,
                                                 batches, halt, counts))
    reader.start()
    try:
        while (item := batches.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            with throttle.call() if throttle is not None else nullcontext():
                target.put_cells(target_table, item)
    finally:
        halt.set()
        reader.join()
    return CopyStats(counts[0], counts[1])


def copy_table(source: Client, target: Client, table: str, target_table: str,
               time_range: tuple[int, int] | None = None,
               on_region: Callable[[RegionDescriptor, CopyStats], None] | None = None,
               ) -> CopyStats:
    """Copy a whole table region by region (the unit a parallel copy distributes)."""
    total = CopyStats()
    for region in source.regions(table):
        stats = copy_range(source, target, table, target_table, region.start_key,
                           region.end_key, time_range)
        total.add(stats)
        if on_region is not None:
            on_region(region, stats)
    return total
