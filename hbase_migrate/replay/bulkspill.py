"""A bulk window's cells past its memory budget: sorted runs spilled to local files, merged
back streaming into each region's HFile (issue 78; :mod:`hbase_migrate.replay.bulkfiles`).

A run is what the window held in memory when it reached its budget: per region and family
(a *slot*), the cells of distinct keys (row, family, qualifier, timestamp, type), the last in
WAL order of a key written more than once, sorted in HBase's cell order
(:func:`~hbase_migrate.wal.model.cell_order`). One file a run, its slots one after the other
in slot order, each slot's cells in chunks of :data:`CHUNK` (pickled tuples: the files are
the process's own, written and read by it in a folder only its user can open, and removed
when the window is written or dropped).

:func:`merged` takes a slot's runs oldest first (the cells still in memory the newest) and
yields their cells in cell order; of cells of the same key in several runs it keeps the
newest run's, so the result is the one a window that never spilled gives: the last in WAL
order of every key, each key once. It holds one chunk a run in memory.
"""

from __future__ import annotations

import heapq
import pickle
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from hbase_migrate.wal.model import Cell, cell_order

Key = tuple[bytes, bytes, bytes, int, int]  # row, family, qualifier, timestamp, type
Slot = tuple[int, bytes]  # region index, family
CHUNK = 2048  # cells a pickled chunk holds


@dataclass
class SpillRun:
    """One spilled run: its file, and where each slot's cells are in it (offset, cells)."""

    path: Path
    segments: dict[Slot, tuple[int, int]] = field(default_factory=dict)
    cells: int = 0

    def cells_of(self, slot: Slot, stream: BinaryIO) -> Iterator[Cell]:
        """The slot's cells, in cell order, read from ``stream`` (this run's file, open)."""
        offset, count = self.segments[slot]
        stream.seek(offset)
        make = Cell._make
        while count > 0:
            chunk = pickle.load(stream)
            count -= len(chunk)
            yield from map(make, chunk)


def spill(path: Path, slots: Mapping[Slot, Mapping[Key, Cell]]) -> SpillRun:
    """``slots``' cells written to ``path`` as one sorted run."""
    run = SpillRun(path)
    with path.open("wb") as out:
        for slot in sorted(slots):
            cells = sorted(slots[slot].values(), key=cell_order)
            run.segments[slot] = (out.tell(), len(cells))
            run.cells += len(cells)
            for start in range(0, len(cells), CHUNK):
                pickle.dump([tuple(c) for c in cells[start:start + CHUNK]], out,
                            pickle.HIGHEST_PROTOCOL)
    return run


def merged(runs: list[Iterable[Cell]]) -> Iterator[Cell]:
    """The cells of ``runs`` (each in cell order, each key once; oldest run first) in cell
    order, of a key in several runs the newest run's cell only."""
    if len(runs) == 1:
        yield from runs[0]
        return
    last: Key | None = None
    for (key, _newer), cell in heapq.merge(*(_keyed(run, -n) for n, run in enumerate(runs))):
        if key != last:
            last = key
            yield cell


def _keyed(run: Iterable[Cell], rank: int) -> Iterator[tuple[tuple[Key, int], Cell]]:
    """``run``'s cells with their sort key; ``rank`` puts a newer run's cell of a key first
    (keys are unique across runs with it: the cells themselves are never compared)."""
    for cell in run:
        yield ((cell.row, cell.family, cell.qualifier, -cell.timestamp, -cell.type), rank), cell
