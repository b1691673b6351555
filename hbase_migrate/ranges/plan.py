"""Key ranges of a table: the source's region boundaries, split further at row keys so no
range holds more than a budget of cells.

The split keys come from one counting pass over the source (rows and their cell counts,
in key order, within the copy's time range): a range is cut at the first row that would take
it past the budget, so a range exceeds it only when a single row does. The target has the
same split points (``prepare`` copies them), so the ranges fit both sides.
"""

from __future__ import annotations

from dataclasses import dataclass

from hbase_migrate.cluster.thrift2 import Thrift2Client
from hbase_migrate.ranges.keyrange import KeyRange, RangeError

DEFAULT_MAX_CELLS = 200_000


@dataclass(frozen=True)
class PlannedRange:
    range: KeyRange
    cells: int  # cells the counting pass saw


def split_region(table: str, start: bytes, stop: bytes, row_cells: list[tuple[bytes, int]],
                 max_cells: int) -> list[PlannedRange]:
    """Cut ``[start, stop)`` holding ``row_cells`` (row, cell count; in key order)."""
    if max_cells < 1:
        raise RangeError(f"table {table}: the cell budget of a range must be at least 1, got "
                         f"{max_cells}")
    planned: list[PlannedRange] = []
    begin, cells = start, 0
    for row, count in row_cells:
        if cells and cells + count > max_cells and row > begin:
            planned.append(PlannedRange(KeyRange(table, begin, row), cells))
            begin, cells = row, 0
        cells += count
    planned.append(PlannedRange(KeyRange(table, begin, stop), cells))
    return planned


def plan_ranges(client: Thrift2Client, table: str, max_cells: int = DEFAULT_MAX_CELLS,
                time_range: tuple[int, int] | None = None) -> list[PlannedRange]:
    """The ranges of ``table`` on the source ``client``, in key order, covering every key."""
    planned: list[PlannedRange] = []
    for region in client.regions(table):
        counts: list[tuple[bytes, int]] = []
        for piece in client.scan(table, region.start_key, region.end_key,
                                 time_range=time_range):
            if counts and counts[-1][0] == piece[0].row:  # a wide row's next piece
                counts[-1] = (piece[0].row, counts[-1][1] + len(piece))
            else:
                counts.append((piece[0].row, len(piece)))
        planned += split_region(table, region.start_key, region.end_key, counts, max_cells)
    return planned
