"""What every filter of the embedded region servers answers, as HBase's ``Filter`` and
``FilterBase`` (branch-2.6): per row ``filter_row_key`` (on the row's first cell), per cell
``filter_cell`` (a return code) and ``transform_cell``, ``filter_row`` at the end of a row,
``filter_all_remaining`` to end the scan in this region, ``reset`` between rows, and a seek
hint for ``SEEK_NEXT_USING_HINT``. Hints and cells compare as keys in HBase's cell order."""

from __future__ import annotations

from enum import IntEnum

from hbase_migrate.wal.model import Cell

# a cell's position in HBase's cell order: row, family, qualifier, then newer timestamps
# first; a hint (tie 0) sorts before a cell of the same timestamp (tie 1)
Key = tuple[bytes, bytes, bytes, int, int]
_FAR = 1 << 64


class Code(IntEnum):
    """``Filter.ReturnCode``."""

    INCLUDE = 0
    INCLUDE_AND_NEXT_COL = 1
    SKIP = 2
    NEXT_COL = 3
    NEXT_ROW = 4
    SEEK_NEXT_USING_HINT = 5
    INCLUDE_AND_SEEK_NEXT_ROW = 6


INCLUDES = (Code.INCLUDE, Code.INCLUDE_AND_NEXT_COL, Code.INCLUDE_AND_SEEK_NEXT_ROW)


def key(cell: Cell) -> Key:
    return (cell.row, cell.family, cell.qualifier, -cell.timestamp, 1)


def first_on_row(row: bytes) -> Key:
    return (row, b"", b"", -_FAR, 0)


def first_on_column(cell: Cell, qualifier: bytes) -> Key:
    return (cell.row, cell.family, qualifier, -_FAR, 0)


def first_on_column_ts(cell: Cell, timestamp: int) -> Key:
    return (cell.row, cell.family, cell.qualifier, -timestamp, 0)


def last_on_column(cell: Cell) -> Key:
    return (cell.row, cell.family, cell.qualifier, _FAR, 0)


class Filter:
    """``FilterBase``: includes everything, remembers nothing."""

    hinting = False  # a HintingFilter
    reversed = False

    def filter_row_key(self, cell: Cell) -> bool:
        return self.filter_all_remaining()

    def filter_all_remaining(self) -> bool:
        return False

    def filter_cell(self, cell: Cell) -> Code:
        return Code.INCLUDE

    def transform_cell(self, cell: Cell) -> Cell:
        return cell

    def has_filter_row(self) -> bool:
        return False

    def filter_row(self) -> bool:
        return False

    def next_hint(self, cell: Cell) -> Key | None:
        return None

    def reset(self) -> None:
        pass

    def set_reversed(self, reversed_: bool) -> None:
        self.reversed = reversed_
