"""Plain values of the WAL format: header, key, cell, tag, entry.

They are NamedTuples: immutable, cheap to build in the reader's hot loop, and readable by
attribute. Byte strings stay ``bytes``; times are milliseconds since the epoch.
"""

from __future__ import annotations

import uuid
from enum import IntEnum
from typing import NamedTuple

DEFAULT_CELL_CODEC = "org.apache.hadoop.hbase.regionserver.wal.WALCellCodec"
SECURE_CELL_CODEC = "org.apache.hadoop.hbase.regionserver.wal.SecureWALCellCodec"
# Apache Phoenix's (``phoenix.py``): KeyValues and Phoenix's index updates
PHOENIX_CELL_CODEC = "org.apache.hadoop.hbase.regionserver.wal.IndexedWALEditCodec"
METAFAMILY = b"METAFAMILY"


class CellType(IntEnum):
    """KeyValue.Type codes that can appear in a WAL."""

    PUT = 4
    DELETE = 8
    DELETE_FAMILY_VERSION = 10
    DELETE_COLUMN = 12
    DELETE_FAMILY = 14

    @property
    def hbase_name(self) -> str:
        """The name HBase prints (``Put``, ``DeleteColumn``, ...)."""
        return _HBASE_NAMES[self]


_HBASE_NAMES = {
    CellType.PUT: "Put",
    CellType.DELETE: "Delete",
    CellType.DELETE_FAMILY_VERSION: "DeleteFamilyVersion",
    CellType.DELETE_COLUMN: "DeleteColumn",
    CellType.DELETE_FAMILY: "DeleteFamily",
}


def type_name(code: int) -> str:
    """HBase's name of a cell type code (``Put``, ``DeleteColumn``, ...); a code no WAL
    cell carries is ``Unknown(<code>)``, wherever it is printed or counted."""
    try:
        return _HBASE_NAMES[CellType(code)]
    except ValueError:
        return f"Unknown({code})"


class ScopeType(IntEnum):
    LOCAL = 0
    GLOBAL = 1
    SERIAL = 2


class Tag(NamedTuple):
    type: int
    value: bytes


class Cell(NamedTuple):
    row: bytes
    family: bytes
    qualifier: bytes
    timestamp: int
    type: int  # a CellType code; kept as int so unknown codes can be reported, not lost
    value: bytes = b""
    tags: tuple[Tag, ...] = ()


def cell_order(cell: Cell) -> tuple[bytes, bytes, bytes, int, int]:
    """HBase's cell order (a sort key): row, family, qualifier ascending; timestamp and
    type descending."""
    return (cell.row, cell.family, cell.qualifier, -cell.timestamp, -cell.type)


class WalHeader(NamedTuple):
    has_compression: bool = False
    encryption_key: bytes | None = None
    has_tag_compression: bool = False
    writer_cls_name: str | None = "ProtobufLogWriter"
    cell_codec_cls_name: str | None = DEFAULT_CELL_CODEC
    has_value_compression: bool = False
    value_compression_algorithm: int | None = None  # Compression.Algorithm ordinal


class WalKey(NamedTuple):
    encoded_region_name: bytes
    table_name: bytes  # "ns:qualifier", default namespace omitted
    sequence: int  # log_sequence_number
    write_time: int
    scopes: tuple[tuple[bytes, int], ...] = ()  # (family, ScopeType)
    cluster_ids: tuple[uuid.UUID, ...] = ()
    nonce_group: int | None = None
    nonce: int | None = None
    orig_sequence: int | None = None
    extended_attributes: tuple[tuple[str, bytes], ...] = ()
    cluster_id: uuid.UUID | None = None  # deprecated field 5 (0.95-era writers)


class Entry(NamedTuple):
    """One WAL entry: a key and exactly its ``following_kv_count`` cells.

    ``offset`` is the byte offset of the entry's first byte (its key-length varint),
    ``size`` the number of bytes it spans, ``index`` its zero-based position in the file.
    A reader opened with ``cell_blocks`` may give ``cells`` as a compiled ``CellBlock``, a
    sequence of the same Cells.
    """

    key: WalKey
    cells: tuple[Cell, ...]
    offset: int
    size: int
    index: int  # type: ignore[assignment]  # shadows tuple.index on purpose: the entry number
