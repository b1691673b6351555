"""Key ranges of a table: the source's region boundaries, split further at row keys so no
range holds more than a budget of cells.

The split keys come from one counting pass over the source (rows and their cell counts,
in key order, within the copy's time range): a range is cut at the first row that would take
it past the budget, so a range exceeds it only when a single row does. The cuts are made as
the rows pass (:class:`RangeCutter`): a region of millions of rows is planned in flat memory.
The target has the same split points (``prepare`` copies them), so the ranges fit both sides.

The pass can copy what it counts (:class:`CopyWhilePlanning`): the snapshot copy of a small
table, or the start of a large one, then costs one scan of the source instead of two. It
copies up to a number of cells (a :class:`CopyBudget`, which regions copied at once share),
then ends the range it is in at the next row and only counts from there; the ranges it copied
are marked ``copied``. Each region is planned on its own (:func:`plan_region`), so the regions
of a table can be planned, and copied, side by side.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from hbase_migrate import runstate
from hbase_migrate.cluster.client import Client
from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.limits import Throttle, metered
from hbase_migrate.ranges.copy import DEFAULT_BATCH_CELLS, copy_pieces
from hbase_migrate.ranges.keyrange import KeyRange, RangeError
from hbase_migrate.wal.model import Cell

DEFAULT_MAX_CELLS = 200_000

RowCells = list[tuple[bytes, int]]  # (row, cells) in key order


@dataclass(frozen=True)
class PlannedRange:
    range: KeyRange
    cells: int  # cells the counting pass saw
    rows: int = 0  # rows it saw
    copied: bool = False  # copied to the target by the pass (CopyWhilePlanning)


@dataclass(frozen=True)
class CopyWhilePlanning:
    """Copy about the first ``cells`` cells of the table to ``target_table`` on ``target``
    in the pass that plans it (``throttle`` paces it as it paces a copy)."""

    target: Client
    target_table: str
    cells: int
    batch_cells: int = DEFAULT_BATCH_CELLS
    throttle: Throttle | None = None


SPEND_CHUNK = 2_000  # the most cells a pass lets pass before spending them


class CopyBudget:
    """The cells a planning pass may still copy, spent by every region it copies (from any
    thread): a row starts being copied only while some are left."""

    def __init__(self, cells: int) -> None:
        self._left = cells
        self._lock = threading.Lock()
        # cells a pass may let pass before it spends them: a thousandth of the budget, so
        # a large budget takes no lock per row and is overshot by a thousandth per pass
        self.chunk = max(1, min(SPEND_CHUNK, cells // 1000))

    def spent(self) -> bool:
        return self._left <= 0

    def spend(self, cells: int) -> bool:
        """Spend ``cells``; whether some are left."""
        with self._lock:
            self._left -= cells
            return self._left > 0


class RangeCutter:
    """Cuts ``[start, ...)`` of ``table`` into ranges of at most ``max_cells`` cells as its
    rows pass (:meth:`add`, in key order; a wide row may come in pieces): a range is cut at
    the first row that would take it past the budget, so it exceeds it only when a single
    row does. Only the ranges cut so far and the row passing are kept, so memory does not
    grow with a region's rows."""

    def __init__(self, table: str, start: bytes, max_cells: int) -> None:
        if max_cells < 1:
            raise RangeError(f"table {table}: the cell budget of a range must be at least 1, "
                             f"got {max_cells}")
        self.table, self.max_cells = table, max_cells
        self.planned: list[PlannedRange] = []
        self.begin, self.cells, self.rows = start, 0, 0  # the range being filled
        self.row: bytes | None = None  # the row passing, and its cells so far
        self.count = 0

    def add(self, row: bytes, cells: int) -> None:
        if row == self.row:  # a wide row's next piece
            self.count += cells
            return
        self._settle()
        self.row, self.count = row, cells

    def _settle(self) -> None:
        """The row passing joins the range being filled, or starts the next one."""
        if self.row is None:
            return
        if self.cells and self.cells + self.count > self.max_cells and self.row > self.begin:
            self.planned.append(PlannedRange(KeyRange(self.table, self.begin, self.row),
                                             self.cells, self.rows))
            self.begin, self.cells, self.rows = self.row, 0, 0
        self.cells += self.count
        self.rows += 1
        self.row = None

    @property
    def seen(self) -> bool:
        """Whether any row passed."""
        return self.row is not None or self.rows > 0 or bool(self.planned)

    def end(self, stop: bytes) -> list[PlannedRange]:
        """The ranges, the last one ending at ``stop``."""
        self._settle()
        return [*self.planned,
                PlannedRange(KeyRange(self.table, self.begin, stop), self.cells, self.rows)]


def split_region(table: str, start: bytes, stop: bytes, row_cells: RowCells,
                 max_cells: int) -> list[PlannedRange]:
    """Cut ``[start, stop)`` holding ``row_cells`` (row, cell count; in key order)."""
    cutter = RangeCutter(table, start, max_cells)
    for row, count in row_cells:
        cutter.add(row, count)
    return cutter.end(stop)


def _count(pieces: Iterable[list[Cell]], cutter: RangeCutter,
           budget: CopyBudget | None = None, stopped: list[bytes] | None = None
           ) -> Iterator[list[Cell]]:
    """``pieces`` as they pass, their rows given to ``cutter``. With a ``budget``: the cells
    passed are spent from it (as the first row starts, then as a row starts once
    ``budget.chunk`` are unspent, and when the pass ends), and the first row to start once
    it is spent is not passed on but put in ``stopped``; the same when a stop is asked
    (:mod:`hbase_migrate.runstate`), with or without a budget."""
    scan = iter(pieces)
    unspent = 0  # the cells passed, not yet spent (nor shown on the meter)
    chunk = budget.chunk if budget is not None else 0
    last: bytes | None = None
    try:
        for piece in scan:
            row = piece[0].row
            if row != last:  # a row starts (else a wide row's next piece)
                if runstate.stop_requested():
                    if stopped is not None:
                        stopped.append(row)
                    return
                if budget is not None and (unspent >= chunk or last is None):
                    left = budget.spend(unspent)
                    runstate.meter.add_cells(unspent)  # cells copied
                    unspent = 0
                    if not left:
                        assert stopped is not None
                        stopped.append(row)
                        return
                last = row
            cutter.add(row, len(piece))
            unspent += len(piece)
            yield piece
    finally:
        if budget is not None:
            budget.spend(unspent)
            runstate.meter.add_cells(unspent)
        close = getattr(scan, "close", None)
        if close is not None:  # the scanner is closed when the pass stops early
            close()


def plan_region(client: Client, table: str, region: RegionDescriptor,
                max_cells: int = DEFAULT_MAX_CELLS, time_range: tuple[int, int] | None = None,
                copy: CopyWhilePlanning | None = None, budget: CopyBudget | None = None
                ) -> list[PlannedRange]:
    """The ranges of one ``region`` of ``table``, in key order; with ``copy``, its first rows
    are copied while ``budget`` (default: ``copy.cells``) lasts, and those ranges are
    ``copied``. A stop asked (:mod:`hbase_migrate.runstate`) ends the pass at the next row:
    only the ranges copied are returned, and the rest of the region is left unplanned."""
    planned: list[PlannedRange] = []
    start = region.start_key
    budget = CopyBudget(copy.cells) if copy is not None and budget is None else budget
    if copy is not None and budget is not None and not budget.spent():
        cutter = RangeCutter(table, start, max_cells)
        stopped: list[bytes] = []
        pieces = _count(client.scan(table, start, region.end_key, time_range=time_range),
                        cutter, budget, stopped)
        copy_pieces(metered(pieces, copy.throttle), copy.target, copy.target_table,
                    copy.batch_cells, copy.throttle)
        end = stopped[0] if stopped else region.end_key
        if cutter.seen or not stopped:  # else the budget went (to other regions) before any row
            planned += [replace(p, copied=True) for p in cutter.end(end)]
            start = end
        if not stopped or runstate.stop_requested():
            return planned
    cutter = RangeCutter(table, start, max_cells)
    for _ in _count(client.scan(table, start, region.end_key, time_range=time_range), cutter):
        pass
    if runstate.stop_requested():
        return planned
    return planned + cutter.end(region.end_key)


def plan_ranges(client: Client, table: str, max_cells: int = DEFAULT_MAX_CELLS,
                time_range: tuple[int, int] | None = None,
                copy: CopyWhilePlanning | None = None) -> list[PlannedRange]:
    """The ranges of ``table`` on the source ``client``, in key order, covering every key;
    with ``copy``, those the pass copied are ``copied`` (region after region: a prefix of
    the table)."""
    budget = CopyBudget(copy.cells) if copy is not None else None
    return [p for region in client.regions(table)
            for p in plan_region(client, table, region, max_cells, time_range, copy, budget)]
