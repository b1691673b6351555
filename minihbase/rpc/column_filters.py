"""The filters of a Get or Scan that choose columns and versions within a row
(``Filter.proto``, branch-2.6), each answering as its Java class in HBase 2.6 does:
ColumnCountGetFilter, TimestampsFilter, ColumnPrefixFilter, MultipleColumnPrefixFilter and
ColumnRangeFilter."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from hbase_migrate.wal.model import Cell
from hbase_migrate.wal.protobuf import Message, decode_varint, to_int64
from minihbase.rpc.comparators import refuse
from minihbase.rpc.filterbase import (
    Code,
    Filter,
    Key,
    first_on_column,
    first_on_column_ts,
    last_on_column,
)


class ColumnCountGetFilter(Filter):
    def __init__(self, data: bytes) -> None:
        self.limit = Message(data, "ColumnCountGetFilter").req_int(1, "limit")
        self.count = 0

    def filter_all_remaining(self) -> bool:
        return self.count > self.limit

    def filter_cell(self, cell: Cell) -> Code:
        self.count += 1
        return Code.NEXT_COL if self.filter_all_remaining() else Code.INCLUDE_AND_NEXT_COL

    def reset(self) -> None:
        self.count = 0


class TimestampsFilter(Filter):
    hinting = True

    def __init__(self, data: bytes) -> None:
        m = Message(data, "TimestampsFilter")
        self.stamps = sorted(set(_int64s(m)))
        self.can_hint = bool(m.opt_int(2))

    def filter_row_key(self, cell: Cell) -> bool:
        return False

    def filter_cell(self, cell: Cell) -> Code:
        if cell.timestamp in self.stamps:
            return Code.INCLUDE
        if self.stamps and cell.timestamp < self.stamps[0]:
            return Code.NEXT_COL
        return Code.SEEK_NEXT_USING_HINT if self.can_hint else Code.SKIP

    def next_hint(self, cell: Cell) -> Key | None:
        if not self.can_hint:
            return None
        i = bisect_left(self.stamps, cell.timestamp)  # [i - 1]: the greatest below it
        return (last_on_column(cell) if i == 0
                else first_on_column_ts(cell, self.stamps[i - 1]))


class ColumnPrefixFilter(Filter):
    hinting = True

    def __init__(self, data: bytes) -> None:
        self.prefix = Message(data, "ColumnPrefixFilter").req_bytes(1, "prefix")

    def filter_row_key(self, cell: Cell) -> bool:
        return False

    def filter_cell(self, cell: Cell) -> Code:
        q, p = cell.qualifier, self.prefix
        if len(q) < len(p):
            return Code.SEEK_NEXT_USING_HINT if q <= p[:len(q)] else Code.NEXT_ROW
        head = q[:len(p)]
        if head < p:
            return Code.SEEK_NEXT_USING_HINT
        return Code.NEXT_ROW if head > p else Code.INCLUDE

    def next_hint(self, cell: Cell) -> Key | None:
        return first_on_column(cell, self.prefix)


class MultipleColumnPrefixFilter(Filter):
    hinting = True

    def __init__(self, data: bytes) -> None:
        prefixes = Message(data, "MultipleColumnPrefixFilter").repeated(1)
        if len(set(prefixes)) != len(prefixes):
            raise refuse("MultipleColumnPrefixFilter with repeated prefixes")
        self.prefixes = sorted(prefixes)
        self.hint = b""

    def filter_row_key(self, cell: Cell) -> bool:
        return False

    def filter_cell(self, cell: Cell) -> Code:
        if not self.prefixes:
            return Code.INCLUDE
        i = bisect_right(self.prefixes, cell.qualifier)  # prefixes <= the qualifier
        if i:
            if cell.qualifier.startswith(self.prefixes[i - 1]):
                return Code.INCLUDE
            if i == len(self.prefixes):
                return Code.NEXT_ROW
        self.hint = self.prefixes[i]
        return Code.SEEK_NEXT_USING_HINT

    def next_hint(self, cell: Cell) -> Key | None:
        return first_on_column(cell, self.hint)


class ColumnRangeFilter(Filter):
    hinting = True

    def __init__(self, data: bytes) -> None:
        m = Message(data, "ColumnRangeFilter")
        self.low, self.high = m.opt_bytes(1), m.opt_bytes(3)
        low_in, high_in = m.opt_int(2), m.opt_int(4)
        self.low_in = low_in is None or bool(low_in)
        self.high_in = bool(high_in)

    def filter_row_key(self, cell: Cell) -> bool:
        return False

    def filter_cell(self, cell: Cell) -> Code:
        q = cell.qualifier
        if self.low is not None and q < self.low:
            return Code.SEEK_NEXT_USING_HINT
        if not self.low_in and q == self.low:
            return Code.NEXT_COL
        if self.high is None or q < self.high or (self.high_in and q == self.high):
            return Code.INCLUDE
        return Code.NEXT_ROW

    def next_hint(self, cell: Cell) -> Key | None:
        return first_on_column(cell, self.low or b"")


def _int64s(m: Message) -> list[int]:
    """The values of repeated int64 field 1, packed (as HBase sends it) or not."""
    out = []
    for _, value in m.fields.get(1, ()):
        if isinstance(value, int):
            out.append(to_int64(value))
            continue
        pos = 0
        while pos < len(value):
            number, pos = decode_varint(value, pos)
            out.append(to_int64(number))
    return out
