"""Apache Phoenix's WAL cell codec, ``IndexedWALEditCodec`` (phoenix-core 4.x for HBase 1.x,
5.x for HBase 2.x; the same bytes in every release since 4.x), read byte for byte.

Clusters with Phoenix's mutable global indexes set ``hbase.regionserver.wal.codec`` to it, and
it names itself in each WAL's header. An entry's cells are KeyValues, among which Phoenix's
``Indexer`` coprocessor puts one *index update* (an ``IndexedKeyValue``) per index row it
derives from the entry's mutations. All big-endian::

    uncompressed WAL, each cell:
        int32 L, then L bytes of KeyValue (as WALCellCodec's plain cell, tags included)
        | int32 -1, then an index update
    dictionary-compressed WAL, each cell:
        byte 0x00, then a cell as WALCellCodec's compressed cell (same dictionaries)
        | byte 0xFF, int32 -1, then an index update
    index update:
        vint T, T bytes: the index table's name
        vint M, M bytes: the index row's mutation, a MutationProto (Client.proto)

``vint`` is Hadoop's ``WritableUtils`` VInt (``Bytes.writeByteArray``), not a protobuf
varint. (Sources: phoenix ``IndexedWALEditCodec``, ``hbase.index.wal.KeyValueCodec`` and
``IndexedKeyValue``.)

An index update is no data of the entry's table: the index table's own region writes the same
cells in an entry of its own (seen on real HBase 1.4.13 with Phoenix 4.14.3), and HBase's WAL
splitting and WALPlayer skip it as a METAFAMILY cell. The reader gives it as a METAFAMILY
cell: the index row, qualifier ``INDEXEDKEYVALUE_FAKED_COLUMN`` (Phoenix's own), the timestamp
of the mutation's first cell, type Put, and as value the index update's bytes as written
(``decode_index_update`` splits them). Replay counts it among the markers and never applies it.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from hbase_migrate.wal.cells import CellCorruptError, CellsDecoder, Ensure, decode_plain_cells
from hbase_migrate.wal.model import METAFAMILY, PHOENIX_CELL_CODEC, Cell, CellType
from hbase_migrate.wal.protobuf import Message, ProtobufError, to_int64

__all__ = ["PHOENIX_CELL_CODEC", "IndexUpdate", "decode_index_update", "is_index_update",
           "phoenix_cells_decoder"]

INDEX_QUALIFIER = b"INDEXEDKEYVALUE_FAKED_COLUMN"
INDEX_LENGTH_MARKER = -1  # KeyValueCodec.INDEX_TYPE_LENGTH_MARKER
REGULAR_MARKER = 0  # IndexedWALEditCodec.REGULAR_KEY_VALUE_MARKER (compressed WALs)
INDEX_MARKER = 0xFF  # the low byte of INDEX_TYPE_LENGTH_MARKER, as OutputStream.write writes it
LATEST_TIMESTAMP = 0x7FFFFFFFFFFFFFFF

_INT32 = struct.Struct(">i").unpack_from


class IndexUpdate(NamedTuple):
    """An index update: the index table and the MutationProto of its row."""

    table: bytes
    mutation: bytes


def is_index_update(cell: Cell) -> bool:
    """Whether the cell is a Phoenix index update as the reader gives it."""
    return cell.family == METAFAMILY and cell.qualifier == INDEX_QUALIFIER


def read_vint(buf: bytes, pos: int) -> tuple[int, int]:
    """Hadoop's ``WritableUtils.readVInt`` at ``pos``: the value and the position after it
    (IndexError when the data ends inside it)."""
    first = buf[pos]
    if first < 0x80 or first >= 0x90:  # one byte: -112..127
        return (first if first < 0x80 else first - 0x100), pos + 1
    signed = first - 0x100
    negative = signed < -120
    size = (-120 - signed) if negative else (-112 - signed)  # bytes after the first
    end = pos + 1 + size
    if end > len(buf):
        raise IndexError("vint cut off")
    value = int.from_bytes(buf[pos + 1 : end], "big")
    return (~value if negative else value), end


def _byte_array(buf: bytes, pos: int, ensure: Ensure, what: str) -> tuple[bytes, bytes, int]:
    """``Bytes.readByteArray`` at ``pos``: the bytes, the buffer, the position after them."""
    if pos + 5 > len(buf):
        buf = ensure(pos + 5)
    length, pos = read_vint(buf, pos)
    if length < 0:
        raise CellCorruptError(f"Phoenix index update: {what} length {length}")
    end = pos + length
    if end > len(buf):
        buf = ensure(end)
        if end > len(buf):
            raise IndexError(f"Phoenix index update: {what} cut off")
    return buf[pos:end], buf, end


def decode_index_update(data: bytes) -> IndexUpdate:
    """The index table and mutation of an index update's bytes (a cell's value)."""
    table, _, pos = _byte_array(data, 0, lambda _n: data, "index table name")
    mutation, _, end = _byte_array(data, pos, lambda _n: data, "mutation")
    if end != len(data):
        raise CellCorruptError(f"Phoenix index update: {len(data) - end} bytes after it")
    return IndexUpdate(table, mutation)


def _index_cell(payload: bytes, mutation: bytes) -> Cell:
    """The METAFAMILY cell standing for an index update (see the module's docstring)."""
    try:
        m = Message(mutation, "MutationProto")
        row = m.opt_bytes(1) or b""
        stamp = m.opt_int(4)
        timestamp = LATEST_TIMESTAMP if stamp is None else to_int64(stamp)
        for column in m.repeated(3):
            values = Message(column, "ColumnValue").repeated(2)
            if values:
                first = Message(values[0], "QualifierValue").opt_int(3)
                if first is not None:
                    timestamp = to_int64(first)
                break
    except ProtobufError as exc:
        raise CellCorruptError(f"Phoenix index update: bad MutationProto: {exc}") from exc
    return Cell(row, METAFAMILY, INDEX_QUALIFIER, timestamp, int(CellType.PUT), payload)


def _index_update(buf: bytes, p: int, ensure: Ensure) -> tuple[Cell, bytes, int]:
    """The index update at ``p`` (after its -1 length marker)."""
    _, buf, pos = _byte_array(buf, p, ensure, "index table name")
    mutation, buf, end = _byte_array(buf, pos, ensure, "mutation")
    return _index_cell(buf[p:end], mutation), buf, end


def phoenix_cells_decoder(compressed: CellsDecoder | None) -> CellsDecoder:
    """The ``CellsDecoder`` of ``IndexedWALEditCodec``: ``compressed`` is the file's
    compressed-cell decoder (None: an uncompressed WAL)."""

    def decode(buf: bytes, p: int, count: int, ensure: Ensure
               ) -> tuple[tuple[Cell, ...], bytes, int]:
        cells: list[Cell] = []
        for _ in range(count):
            if p + 5 > len(buf):
                buf = ensure(p + 5)
            if compressed is not None:
                marker = buf[p]
                if marker == REGULAR_MARKER:
                    one, buf, p = compressed(buf, p + 1, 1, ensure)
                    cells.append(one[0])
                    continue
                if marker != INDEX_MARKER:
                    raise CellCorruptError(
                        f"Phoenix cell marker {marker}: 0 (a cell) or 255 (an index update) "
                        "expected")
                p += 1
                if p + 4 > len(buf):
                    buf = ensure(p + 4)
            (length,) = _INT32(buf, p)
            if length == INDEX_LENGTH_MARKER:
                cell, buf, p = _index_update(buf, p + 4, ensure)
                cells.append(cell)
            elif compressed is not None:
                raise CellCorruptError(f"Phoenix index update marker followed by length "
                                       f"{length}, not {INDEX_LENGTH_MARKER}")
            else:
                one, buf, p = decode_plain_cells(buf, p, 1, ensure)
                cells.append(one[0])
        return tuple(cells), buf, p

    return decode
