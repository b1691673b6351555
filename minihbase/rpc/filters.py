"""The filters of a Get or Scan (``Filter.proto``, branch-2.6) the embedded region servers
serve, each answering as its Java class in HBase 2.6 does (``minihbase.rpc.filterbase``;
those choosing columns and versions in ``minihbase.rpc.column_filters``);
``decode_filter`` reads a ``Filter`` message (the class name and its serialized form) and
refuses any other filter by name with DoNotRetryIOException."""

from __future__ import annotations

import struct
from collections.abc import Callable

from hbase_migrate.wal.model import Cell
from hbase_migrate.wal.protobuf import Message
from minihbase.rpc.column_filters import (
    ColumnCountGetFilter,
    ColumnPrefixFilter,
    ColumnRangeFilter,
    MultipleColumnPrefixFilter,
    TimestampsFilter,
)
from minihbase.rpc.comparators import Comparator, by_name, decode_comparator, refuse
from minihbase.rpc.filterbase import (
    Code,
    Filter,
    Key,
    first_on_row,
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
