"""The ``Client.proto`` / ``HBase.proto`` / ``Cell.proto`` messages every call shares, and
``Get`` (proto2; field numbers from HBase branch-2.6)::

    RegionSpecifier  1 type (REGION_NAME 1, ENCODED_REGION_NAME 2)  2 value
    TimeRange        1 from  2 to                      (uint64, ms; [from, to))
    Column           1 family  2 qualifier (repeated)
    NameBytesPair    1 name (string)  2 value
    Cell             1 row  2 family  3 qualifier  4 timestamp  5 cell_type  6 value  7 tags
    Result           1 cell (repeated Cell)  2 associated_cell_count (int32)  3 exists
                     4 stale  5 partial
    Get              1 row  2 column  3 attribute  4 filter  5 time_range  6 max_versions
                     (default 1)  7 cache_blocks  10 existence_only  11 closest_row_before
    GetRequest       1 region  2 get
    GetResponse      1 result

A Result's cells are inline (``cell``) or, for a client that named a cell block codec, the
next ``associated_cell_count`` cells of the reply's cell block (``codec.decode_cells``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from hbase_migrate.rpc.codec import decode_cells, encode_cell_block
from hbase_migrate.wal.model import Cell
from hbase_migrate.wal.protobuf import (
    LENGTH_DELIMITED,
    VARINT,
    Message,
    ProtobufError,
    as_bytes,
    as_int,
    bytes_field,
    decode_varint,
    decode_varint32,
    iter_fields,
    skip_field,
    string_field,
    to_int64,
    varint_field,
)

REGION_NAME = 1
ENCODED_REGION_NAME = 2
ALL_VERSIONS = 0x7FFFFFFF  # Integer.MAX_VALUE: every version a family keeps
LATEST_TIMESTAMP = 0x7FFFFFFFFFFFFFFF


class Column(NamedTuple):
    """A family, and the qualifiers wanted in it (none: the whole family)."""

    family: bytes
    qualifiers: tuple[bytes, ...] = ()


TimeRange = tuple[int, int]  # [from, to) in ms


def region_specifier(region_name: bytes, kind: int = REGION_NAME) -> bytes:
    return varint_field(1, kind) + bytes_field(2, region_name)


def decode_region_specifier(data: bytes) -> tuple[int, bytes]:
    m = Message(data, "RegionSpecifier")
    return m.req_int(1, "type"), m.req_bytes(2, "value")


def column_message(column: Column) -> bytes:
    return bytes_field(1, column.family) + b"".join(bytes_field(2, q) for q in column.qualifiers)


def decode_column(data: bytes) -> Column:
    m = Message(data, "Column")
    return Column(m.req_bytes(1, "family"), m.repeated(2))


def time_range_message(time_range: TimeRange) -> bytes:
    return varint_field(1, time_range[0]) + varint_field(2, time_range[1])


def decode_time_range(data: bytes) -> TimeRange:
    m = Message(data, "TimeRange")
    low, high = m.opt_int(1), m.opt_int(2)
    return (0 if low is None else low, LATEST_TIMESTAMP if high is None else high)


def name_bytes_pair(name: str, value: bytes) -> bytes:
    return string_field(1, name) + bytes_field(2, value)


def decode_name_bytes_pair(data: bytes) -> tuple[str, bytes]:
    m = Message(data, "NameBytesPair")
    return m.req_str(1, "name"), m.opt_bytes(2) or b""


def split_varints(data: bytes, what: str, numbers: tuple[int, ...]
                  ) -> tuple[dict[int, list[int]], Message]:
    """A message whose repeated varint fields ``numbers`` are many (a ScanResponse of small
    rows holds thousands): their values, read in one pass (packed or not), and the other
    fields as a ``Message``."""
    values: dict[int, list[int]] = {n: [] for n in numbers}
    rest = bytearray()
    pos, end = 0, len(data)
    while pos < end:
        start = pos
        key, pos = decode_varint(data, pos, end)
        number, wire_type = key >> 3, key & 7
        out = values.get(number)
        if out is not None and wire_type == VARINT:
            if key < 0x80 and (run_end := _varint_run(data, start, key, out)) > start:
                pos = run_end
                continue
            value, pos = decode_varint(data, pos, end)
            out.append(value)
        elif out is not None and wire_type == LENGTH_DELIMITED:
            size, pos = decode_varint32(data, pos, end)
            stop = pos + size
            if stop > end:
                raise ProtobufError(f"{what} field {number} at {pos} runs past the end")
            while pos < stop:
                value, pos = decode_varint(data, pos, stop)
                out.append(value)
        elif number == 0:
            raise ProtobufError(f"{what}: field number 0 at {start}")
        else:
            pos = skip_field(data, pos, end, wire_type)
            rest += data[start:pos]
    return values, Message(bytes(rest), what)


def _varint_run(data: bytes, pos: int, key: int, out: list[int]) -> int:
    """Append the values of the run of fields at ``pos`` that are ``key`` (one byte) and a
    value of one byte (how a server writes thousands of counts and flags: unpacked, each
    under 128) to ``out``, read by slicing instead of field by field; returns the position
    after the run. It stops before a value of more bytes, which the caller then reads."""
    keys = data[pos::2]
    run = data[pos + 1:pos + 2 * (len(keys) - len(keys.lstrip(bytes((key,))))):2]
    long = _LONG_BYTE.search(run)
    n = len(run) if long is None else long.start()
    out.extend(run[:n])
    return pos + 2 * n


_LONG_BYTE = re.compile(rb"[\x80-\xff]")


# --- Cell and Result --------------------------------------------------------------------


def cell_message(cell: Cell) -> bytes:
    """A ``Cell`` message (the inline form of a Result's cells)."""
    return (bytes_field(1, cell.row) + bytes_field(2, cell.family) + bytes_field(3, cell.qualifier)
            + varint_field(4, cell.timestamp) + varint_field(5, cell.type)
            + bytes_field(6, cell.value))


def decode_cell_message(data: bytes) -> Cell:
    m = Message(data, "Cell")
    return Cell(m.opt_bytes(1) or b"", m.opt_bytes(2) or b"", m.opt_bytes(3) or b"",
                to_int64(m.opt_int(4) or 0), m.opt_int(5) or 0, m.opt_bytes(6) or b"")


class Result(NamedTuple):
    """A decoded Result: ``cells`` inline, ``cell_count`` more in the cell block."""

    cells: tuple[Cell, ...] = ()
    cell_count: int = 0
    exists: bool | None = None
    stale: bool = False
    partial: bool = False


def result_message(result: Result) -> bytes:
    out = b"".join(bytes_field(1, cell_message(c)) for c in result.cells)
    if result.cell_count:
        out += varint_field(2, result.cell_count)
    if result.exists is not None:
        out += varint_field(3, result.exists)
    if result.partial:
        out += varint_field(5, 1)
    return out


def decode_result(data: bytes) -> Result:
    m = Message(data, "Result")
    exists = m.opt_int(3)
    return Result(m.msgs(1, decode_cell_message), to_int64(m.opt_int(2) or 0),
                  None if exists is None else bool(exists), bool(m.opt_int(4)),
                  bool(m.opt_int(5)))


def result_cells(result: Result, block: bytes, pos: int) -> tuple[tuple[Cell, ...], int]:
    """A Result's cells: inline ones, then its ``cell_count`` cells of ``block`` at ``pos``."""
    if not result.cell_count:
        return result.cells, pos
    cells, pos = decode_cells(block, pos, result.cell_count)
    return result.cells + cells, pos


# --- Get ----------------------------------------------------------------------------------


class Get(NamedTuple):
    row: bytes
    columns: tuple[Column, ...] = ()
    time_range: TimeRange | None = None
    max_versions: int = 1
    closest_row_before: bool = False
    existence_only: bool = False  # the Result says whether the row has cells, holds none


def get_message(get: Get) -> bytes:
    out = bytes_field(1, get.row)
    out += b"".join(bytes_field(2, column_message(c)) for c in get.columns)
    if get.time_range is not None:
        out += bytes_field(5, time_range_message(get.time_range))
    out += varint_field(6, get.max_versions)
    if get.existence_only:
        out += varint_field(10, 1)
    if get.closest_row_before:
        out += varint_field(11, 1)
    return out


def decode_get(data: bytes) -> Get:
    """A Get message, read in one pass (a Multi of Gets holds a thousand): the last value
    of a field counts, its columns in order, the fields a Get does not keep unread."""
    row: bytes | None = None
    columns: list[Column] = []
    tr: bytes | None = None
    versions, closest, existence = 1, 0, 0
    for number, wire_type, value in iter_fields(data):
        if number == 1:
            row = as_bytes(number, wire_type, value)
        elif number == 2:
            columns.append(decode_column(as_bytes(number, wire_type, value)))
        elif number == 5:
            tr = as_bytes(number, wire_type, value)
        elif number == 6:
            versions = as_int(number, wire_type, value)
        elif number == 10:
            existence = as_int(number, wire_type, value)
        elif number == 11:
            closest = as_int(number, wire_type, value)
    if row is None:
        raise ProtobufError("Get lacks required field row")
    return Get(row, tuple(columns), None if tr is None else decode_time_range(tr), versions,
               bool(closest), bool(existence))


def get_request(region_name: bytes, get: Get) -> bytes:
    return bytes_field(1, region_specifier(region_name)) + bytes_field(2, get_message(get))


def decode_get_request(data: bytes) -> tuple[bytes, Get]:
    """``(region name, Get)`` of a GetRequest."""
    m = Message(data, "GetRequest")
    return (decode_region_specifier(m.req_bytes(1, "region"))[1],
            decode_get(m.req_bytes(2, "get")))


def get_response(cells: Sequence[Cell] | None, in_block: bool = True) -> tuple[bytes, bytes]:
    """``(GetResponse, cell block)`` as a server sends them (None: no result)."""
    if cells is None:
        return b"", b""
    if in_block:
        return bytes_field(1, result_message(Result(cell_count=len(cells)))), \
            encode_cell_block(cells)
    return bytes_field(1, result_message(Result(tuple(cells)))), b""


def exists_response(found: bool) -> bytes:
    """The GetResponse to a Get with ``existence_only``: a Result of no cells and ``exists``
    (HBase's ``ProtobufUtil.toResult(existence, stale)``: associated_cell_count 0 set)."""
    return bytes_field(1, varint_field(2, 0) + varint_field(3, found))


def decode_get_response(data: bytes, block: bytes) -> tuple[Cell, ...]:
    """The cells of a GetResponse (none when the row has none)."""
    result = Message(data, "GetResponse").opt_bytes(1)
    if result is None:
        return ()
    return result_cells(decode_result(result), block, 0)[0]
