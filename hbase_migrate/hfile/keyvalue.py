"""Cells of an unencoded HFile data block (``HFileReaderImpl.HFileScannerImpl`` in branch-2.6:
``readKeyValueLen``, ``readMvccVersion``).

Each cell, big-endian, one after the other to the end of the block::

    int32 keyLen | int32 valueLen | key | value
    | [uint16 tagsLen | tags]    when the file holds tags (file info MAX_TAGS_LEN present)
    | [vlong mvcc]               when KEY_VALUE_VERSION is 1 (``KEY_VALUE_VER_WITH_MEMSTORE``)

    key = int16 rowLen | row | int8 famLen | family | qualifier | int64 timestamp | uint8 type

``vlong`` is Hadoop's ``WritableUtils.writeVLong``: a first byte from -112 to 127 is the value;
otherwise it gives the sign and the count of big-endian bytes that follow. Tags are laid out as
in the WAL (``wal/cells.py``).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import NamedTuple

from hbase_migrate.wal.cells import CellCorruptError, parse_tags
from hbase_migrate.wal.model import Cell, Tag

_LENS = struct.Struct(">ii")
_KEY_END = struct.Struct(">qB")  # timestamp, type
KEY_INFRASTRUCTURE = 2 + 1 + 8 + 1  # rowLen, famLen, timestamp, type


class StoreCell(NamedTuple):
    cell: Cell
    mvcc: int


def read_vlong(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """Hadoop ``WritableUtils.readVLong`` at ``pos``: (value, next position)."""
    if pos >= end:
        raise CellCorruptError("mvcc vlong cut off")
    first = buf[pos] - 256 if buf[pos] > 127 else buf[pos]
    if first >= -112:
        return first, pos + 1
    negative = first < -120
    size = (-119 - first) if negative else (-111 - first)  # bytes including the first
    if pos + size > end:
        raise CellCorruptError("mvcc vlong cut off")
    value = int.from_bytes(buf[pos + 1 : pos + size], "big")
    return (~value if negative else value), pos + size


def parse_key(key: bytes) -> tuple[bytes, bytes, bytes, int, int]:
    """A KeyValue key: row, family, qualifier, timestamp, type."""
    if len(key) < KEY_INFRASTRUCTURE:
        raise CellCorruptError(f"key of {len(key)} bytes is shorter than {KEY_INFRASTRUCTURE}")
    row_len = int.from_bytes(key[:2], "big")
    fam_at = 2 + row_len
    if fam_at + 1 + 9 > len(key):
        raise CellCorruptError(f"row length {row_len} does not fit a key of {len(key)} bytes")
    fam_len = key[fam_at]
    qual_at = fam_at + 1 + fam_len
    ts_at = len(key) - 9
    if qual_at > ts_at:
        raise CellCorruptError(f"family length {fam_len} does not fit a key of {len(key)} bytes")
    timestamp, kind = _KEY_END.unpack_from(key, ts_at)
    return key[2:fam_at], key[fam_at + 1 : qual_at], key[qual_at:ts_at], timestamp, kind


def block_cells(data: bytes, *, tags: bool, mvcc: bool) -> Iterator[tuple[int, StoreCell]]:
    """(position in the block, cell) for each cell of an unencoded data block."""
    pos, end = 0, len(data)
    while pos < end:
        start = pos
        if pos + 8 > end:
            raise CellCorruptError(f"cell lengths cut off at block byte {pos}")
        key_len, value_len = _LENS.unpack_from(data, pos)
        pos += 8
        if key_len < KEY_INFRASTRUCTURE or value_len < 0 or pos + key_len + value_len > end:
            raise CellCorruptError(f"cell at block byte {start}: key length {key_len}, value "
                                   f"length {value_len} do not fit the block")
        row, family, qualifier, timestamp, kind = parse_key(data[pos : pos + key_len])
        pos += key_len
        value = data[pos : pos + value_len]
        pos += value_len
        cell_tags: tuple[Tag, ...] = ()
        if tags:
            if pos + 2 > end:
                raise CellCorruptError(f"tags length of the cell at block byte {start} cut off")
            tags_len = int.from_bytes(data[pos : pos + 2], "big")
            if pos + 2 + tags_len > end:
                raise CellCorruptError(f"tags of the cell at block byte {start} run past the block")
            cell_tags = parse_tags(data, pos + 2, pos + 2 + tags_len)
            pos += 2 + tags_len
        version = 0
        if mvcc:
            version, pos = read_vlong(data, pos, end)
        cell = Cell(row, family, qualifier, timestamp, kind, value, cell_tags)
        yield start, StoreCell(cell, version)
