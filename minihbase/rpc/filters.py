"""The filters of a Get or Scan (``Filter.proto``, branch-2.6) the embedded region servers
serve, each answering as its Java class in HBase 2.6 does (``minihbase.rpc.filterbase``);
``decode_filter`` reads a ``Filter`` message (the class name and its serialized form) and
refuses any other filter by name with DoNotRetryIOException."""

from __future__ import annotations

import struct
from bisect import bisect_left, bisect_right
from collections.abc import Callable

from hbase_migrate.wal.model import Cell
from hbase_migrate.wal.protobuf import Message, decode_varint, to_int64
from minihbase.rpc.comparators import Comparator, by_name, decode_comparator, refuse
from minihbase.rpc.filterbase import (
    Code,
    Filter,
    Key,
    first_on_column,
    first_on_column_ts,
    first_on_row,
    last_on_column,
)
from minihbase.rpc.filterlist import FilterListAnd, FilterListOr

# HBase.proto's CompareType -> whether a compareTo result filters the cell out
# (CompareFilter.compare)
_OPS: dict[int, Callable[[int], bool]] = {
    0: lambda r: r <= 0, 1: lambda r: r < 0, 2: lambda r: r != 0, 3: lambda r: r == 0,
    4: lambda r: r > 0, 5: lambda r: r >= 0, 6: lambda r: False}


class _Compare(Filter):
    """A CompareFilter: an operator and a comparator."""

    def __init__(self, data: bytes) -> None:
        m = Message(Message(data, "filter").req_bytes(1, "compare_filter"), "CompareFilter")
        self.op = m.req_int(1, "compare_op")
        if self.op not in _OPS:
            raise refuse(f"compare op {self.op}")
        comparator = m.opt_bytes(2)
        if comparator is None and self.op != 6:
            raise refuse(f"{type(self).__name__} without a comparator")
        self.comparator: Comparator = (decode_comparator(comparator) if comparator is not None
                                       else lambda _: 0)

    def out(self, data: bytes) -> bool:
        """Whether the bytes are filtered out (NO_OP: always, as CompareFilter's compare*)."""
        return self.op == 6 or _OPS[self.op](self.comparator(data))

    def filter_row_key(self, cell: Cell) -> bool:
        return False


class RowFilter(_Compare):
    filter_out = False

    def filter_row_key(self, cell: Cell) -> bool:
        if self.out(cell.row):
            self.filter_out = True
        return self.filter_out

    def filter_cell(self, cell: Cell) -> Code:
        return Code.NEXT_ROW if self.filter_out else Code.INCLUDE

    def filter_row(self) -> bool:
        return self.filter_out

    def reset(self) -> None:
        self.filter_out = False


class QualifierFilter(_Compare):
    def filter_cell(self, cell: Cell) -> Code:
        return Code.SKIP if self.out(cell.qualifier) else Code.INCLUDE


class ValueFilter(_Compare):
    def filter_cell(self, cell: Cell) -> Code:
        return Code.SKIP if self.out(cell.value) else Code.INCLUDE


class FamilyFilter(_Compare):
    def filter_cell(self, cell: Cell) -> Code:
        return Code.NEXT_ROW if cell.family and self.out(cell.family) else Code.INCLUDE


class PrefixFilter(Filter):
    hinting = True

    def __init__(self, data: bytes) -> None:
        self.prefix = Message(data, "PrefixFilter").opt_bytes(1)
        self.passed = False
        self.row_out = True
        self.hint = False

    def filter_row_key(self, cell: Cell) -> bool:
        if self.prefix is None:
            return True
        if self.passed:
            return True
        head = cell.row[:len(self.prefix)]
        cmp = (head > self.prefix) - (head < self.prefix)
        if (not self.reversed and cmp > 0) or (self.reversed and cmp < 0):
            self.passed = True
        self.row_out = cmp != 0
        self.hint = (not self.reversed and cmp < 0) or (self.reversed and cmp > 0)
        return self.passed

    def filter_cell(self, cell: Cell) -> Code:
        if self.hint:
            return Code.SEEK_NEXT_USING_HINT
        return Code.NEXT_ROW if self.row_out else Code.INCLUDE

    def filter_row(self) -> bool:
        return self.row_out

    def reset(self) -> None:
        self.row_out = True

    def filter_all_remaining(self) -> bool:
        return self.passed

    def next_hint(self, cell: Cell) -> Key | None:
        assert self.prefix is not None
        if not self.reversed:
            return first_on_row(self.prefix)
        stripped = self.prefix.rstrip(b"\xff")  # increaseLastNonMaxByte
        return first_on_row(stripped[:-1] + bytes([stripped[-1] + 1]) if stripped
                            else self.prefix)


class PageFilter(Filter):
    def __init__(self, data: bytes) -> None:
        self.size = Message(data, "PageFilter").req_int(1, "page_size")
        self.accepted = 0

    def filter_all_remaining(self) -> bool:
        return self.accepted >= self.size

    def filter_row(self) -> bool:
        self.accepted += 1
        return self.accepted > self.size

    def has_filter_row(self) -> bool:
        return True


class SingleColumnValueFilter(Filter):
    def __init__(self, data: bytes) -> None:
        m = Message(data, "SingleColumnValueFilter")
        self.column = (m.opt_bytes(1) or b"", m.opt_bytes(2) or b"")
        self.op = m.req_int(3, "compare_op")
        if self.op not in _OPS or self.op == 6:
            raise refuse(f"SingleColumnValueFilter compare op {self.op}")
        self.comparator = decode_comparator(m.req_bytes(4, "comparator"))
        self.if_missing = bool(m.opt_int(5))
        latest = m.opt_int(6)
        self.latest_only = latest is None or bool(latest)
        self.found = self.matched = False

    def filter_row_key(self, cell: Cell) -> bool:
        return False

    def filter_cell(self, cell: Cell) -> Code:
        if self.matched:
            return Code.INCLUDE
        if self.latest_only and self.found:
            return Code.NEXT_ROW
        if (cell.family, cell.qualifier) != self.column:
            return Code.INCLUDE
        self.found = True
        if _OPS[self.op](self.comparator(cell.value)):
            return Code.NEXT_ROW if self.latest_only else Code.INCLUDE
        self.matched = True
        return Code.INCLUDE

    def filter_row(self) -> bool:
        return not self.matched if self.found else self.if_missing

    def has_filter_row(self) -> bool:
        return True

    def reset(self) -> None:
        self.found = self.matched = False


class FirstKeyOnlyFilter(Filter):
    found = False

    def filter_row_key(self, cell: Cell) -> bool:
        return False

    def filter_cell(self, cell: Cell) -> Code:
        if self.found:
            return Code.NEXT_ROW
        self.found = True
        return Code.INCLUDE

    def reset(self) -> None:
        self.found = False


class KeyOnlyFilter(Filter):
    def __init__(self, data: bytes) -> None:
        self.length = bool(Message(data, "KeyOnlyFilter").opt_int(1))

    def filter_row_key(self, cell: Cell) -> bool:
        return False

    def transform_cell(self, cell: Cell) -> Cell:
        return cell._replace(value=struct.pack(">i", len(cell.value)) if self.length else b"",
                             tags=())


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


class InclusiveStopFilter(Filter):
    def __init__(self, data: bytes) -> None:
        self.stop = Message(data, "InclusiveStopFilter").opt_bytes(1) or b""
        self.done = False

    def filter_cell(self, cell: Cell) -> Code:
        return Code.NEXT_ROW if self.done else Code.INCLUDE

    def filter_row_key(self, cell: Cell) -> bool:
        if self.done:
            return True
        cmp = (cell.row > self.stop) - (cell.row < self.stop)
        self.done = cmp < 0 if self.reversed else cmp > 0
        return self.done

    def filter_all_remaining(self) -> bool:
        return self.done


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


def _list(data: bytes) -> Filter:
    m = Message(data, "FilterList")
    operator = m.req_int(1, "operator")
    filters = [decode_filter(f) for f in m.repeated(2)]
    if operator == 1:
        return FilterListAnd(filters)
    if operator == 2:
        return FilterListOr(filters)
    raise refuse(f"FilterList operator {operator}")


_FILTERS: dict[str, Callable[[bytes], Filter]] = {
    "RowFilter": RowFilter, "QualifierFilter": QualifierFilter, "ValueFilter": ValueFilter,
    "FamilyFilter": FamilyFilter, "PrefixFilter": PrefixFilter, "PageFilter": PageFilter,
    "SingleColumnValueFilter": SingleColumnValueFilter,
    "FirstKeyOnlyFilter": lambda _: FirstKeyOnlyFilter(), "KeyOnlyFilter": KeyOnlyFilter,
    "ColumnCountGetFilter": ColumnCountGetFilter, "InclusiveStopFilter": InclusiveStopFilter,
    "TimestampsFilter": TimestampsFilter, "ColumnPrefixFilter": ColumnPrefixFilter,
    "MultipleColumnPrefixFilter": MultipleColumnPrefixFilter,
    "ColumnRangeFilter": ColumnRangeFilter, "FilterList": _list,
}


def decode_filter(data: bytes) -> Filter:
    """A ``Filter`` message as the filter it names; any other is refused by name."""
    return by_name(data, "Filter", _FILTERS)
