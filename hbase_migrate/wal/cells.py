"""Cell codecs of ``WALCellCodec``: plain KeyValues with tags, and dictionary-compressed cells.

Uncompressed cell (``EnsureKvEncoder`` / ``KeyValueCodecWithTags``), all big-endian::

    int32 L | int32 keyLen | int32 valLen | int16 rowLen | row | int8 famLen | family
    | qualifier (keyLen - 12 - rowLen - famLen bytes) | int64 timestamp | uint8 type | value
    | [uint16 tagsLen | tags]              (present when L > 8 + keyLen + valLen)
    tag = uint16 tagLen | uint8 tagType | tagLen - 1 bytes of value

Compressed cell (``CompressedKvEncoder`` / ``CompressedKvDecoder``)::

    varint keyLen | varint valLen | varint tagsLen | dict row | dict family | dict qualifier
    | int64 timestamp | uint8 type
    | value: raw valLen bytes, or with value compression varint compLen + compLen bytes
    | tags (tagsLen > 0): raw tag bytes, or with tag compression one dict item per tag
      holding tagType + tag value (the reader re-inserts the uint16 length)

A ``dict`` item is described in ``dictionary.py``; the compressed forms of values in
``codecs.py``.

The KeyValue type byte is kept as it is: HBase's WAL decoders do not check it either.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.wal.codecs import ALGO_NONE, CODECS, DecompressionErrors
from hbase_migrate.wal.dictionary import (
    FAMILY_CAPACITY,
    QUALIFIER_CAPACITY,
    ROW_CAPACITY,
    TAG_CAPACITY,
    LruDictionary,
    read_item,
    write_item,
)
from hbase_migrate.wal.model import Cell, Tag
from hbase_migrate.wal.protobuf import VARINT_CUT, VARINT_TOO_LONG, encode_varint, scan_varint

KV_HEAD = struct.Struct(">iiiH")  # L, keyLen, valLen, rowLen
KV_PREFIX = struct.Struct(">iii")
TS_TYPE = struct.Struct(">qB")
UINT16 = struct.Struct(">H")
UINT32 = struct.Struct(">I")
INT32 = struct.Struct(">i")
_KV_HEAD = KV_HEAD.unpack_from
_TS_TYPE_FROM = TS_TYPE.unpack_from
_UINT16 = UINT16.unpack_from
_new_tuple = tuple.__new__

MAX_ROW_LENGTH = 32767  # Short.MAX_VALUE
MAX_FAMILY_LENGTH = 127  # Byte.MAX_VALUE
MAX_TAGS_LENGTH = 65535
MAX_KV_LENGTH = 0x7FFFFFFF  # a Java array

# ``ensure(n)``: make the buffer hold bytes up to position ``n`` if the file has them; returns
# the (possibly new) buffer. A CellsDecoder decodes ``count`` cells at a position of a buffer.
Ensure = Callable[[int], bytes]
CellsDecoder = Callable[[bytes, int, int, Ensure], tuple[tuple[Cell, ...], bytes, int]]


class CellCorruptError(HBaseMigrateError, ValueError):
    """A cell whose bytes are inconsistent (not merely cut off)."""


def tags_bytes(tags: Sequence[Tag]) -> bytes:
    """The serialised tags area (without the uint16 total length)."""
    out = bytearray()
    for tag in tags:
        if not 0 <= tag.type <= 255:
            raise ValueError(f"tag type {tag.type} does not fit a byte")
        out += UINT16.pack(len(tag.value) + 1)
        out.append(tag.type)
        out += tag.value
    return bytes(out)


def parse_tags(buf: bytes, pos: int, end: int) -> tuple[Tag, ...]:
    """Split a tags area into Tags."""
    tags = []
    while pos < end:
        if pos + 3 > end:
            raise CellCorruptError("tag header runs past the tags area")
        (length,) = UINT16.unpack_from(buf, pos)
        stop = pos + 2 + length
        if length < 1 or stop > end:
            raise CellCorruptError(f"tag length {length} does not fit the tags area")
        tags.append(Tag(buf[pos + 2], buf[pos + 3 : stop]))
        pos = stop
    return tuple(tags)


def check_cell(cell: Cell) -> int:
    """Refuse a cell HBase could not hold; return its key length."""
    if len(cell.row) > MAX_ROW_LENGTH:
        raise ValueError(f"row of {len(cell.row)} bytes is longer than {MAX_ROW_LENGTH}")
    if len(cell.family) > MAX_FAMILY_LENGTH:
        raise ValueError(f"family of {len(cell.family)} bytes is longer than 127")
    if not 0 <= cell.type <= 255:
        raise ValueError(f"cell type {cell.type} does not fit a byte")
    if cell.tags and len(tags_bytes(cell.tags)) > MAX_TAGS_LENGTH:
        raise ValueError(f"tags longer than {MAX_TAGS_LENGTH} bytes")
    return 2 + len(cell.row) + 1 + len(cell.family) + len(cell.qualifier) + 9


def encode_plain_cell(out: bytearray, cell: Cell) -> None:
    """Append an uncompressed KeyValue (with its tags, if any) to ``out``."""
    key_len = check_cell(cell)
    tags = tags_bytes(cell.tags) if cell.tags else b""
    total = 8 + key_len + len(cell.value) + (2 + len(tags) if tags else 0)
    out += KV_HEAD.pack(total, key_len, len(cell.value), len(cell.row))
    out += cell.row
    out.append(len(cell.family))
    out += cell.family
    out += cell.qualifier
    out += TS_TYPE.pack(cell.timestamp, cell.type)
    out += cell.value
    if tags:
        out += UINT16.pack(len(tags))
        out += tags


def encode_plain_block(cells: Iterable[Cell], tags: bool = False) -> bytes:
    """Cells as uncompressed KeyValues, one after the other (an RPC cell block):
    ``tags`` False leaves every cell's tags out (KeyValueCodec), True keeps them
    (KeyValueCodecWithTags)."""
    out = bytearray()
    for cell in cells:
        encode_plain_cell(out, cell._replace(tags=()) if cell.tags and not tags else cell)
    return bytes(out)


# --- plain cell decoding -----------------------------------------------------------------


def decode_plain_cells(
    buf: bytes, p: int, count: int, ensure: Ensure
) -> tuple[tuple[Cell, ...], bytes, int]:
    """Decode ``count`` uncompressed KeyValues at ``p`` (a ``CellsDecoder``; the reader's hot
    loop for uncompressed files: kept flat)."""
    cells: list[Cell] = []
    append = cells.append
    new = _new_tuple
    head = _KV_HEAD
    ts_type = _TS_TYPE_FROM
    blen = len(buf)
    for _ in range(count):
        if p + 14 > blen:
            buf = ensure(p + 14)
            blen = len(buf)
        total, klen, vlen, rlen = head(buf, p)
        end = p + 4 + total
        if end > blen:
            buf = ensure(end)
            blen = len(buf)
            if end > blen:
                raise IndexError("cell cut off")
        tpos = p + 3 + klen  # key starts at p + 12 and ends with 8 + 1 bytes of ts and type
        kv_end = tpos + 9 + vlen
        if klen < 12 or vlen < 0 or kv_end > end or rlen > klen - 12:
            raise CellCorruptError(
                f"KeyValue lengths do not fit: total {total}, key {klen}, value {vlen}, row {rlen}"
            )
        fpos = p + 14 + rlen
        flen = buf[fpos]
        qpos = fpos + 1 + flen
        if flen > 127 or qpos > tpos:
            raise CellCorruptError(f"family length {flen} does not fit key length {klen}")
        ts, typ = ts_type(buf, tpos)
        if kv_end == end:
            tags: tuple[Tag, ...] = ()
        else:
            if end - kv_end < 2 or _UINT16(buf, kv_end)[0] != end - kv_end - 2:
                raise CellCorruptError(
                    f"tags length does not fill the {end - kv_end} bytes after the value"
                )
            tags = parse_tags(buf, kv_end + 2, end)
        append(
            new(
                Cell,
                (
                    buf[p + 14 : fpos],
                    buf[fpos + 1 : qpos],
                    buf[qpos:tpos],
                    ts,
                    typ,
                    buf[tpos + 9 : kv_end],
                    tags,
                ),
            )
        )
        p = end
    return tuple(cells), buf, p


_NO_TAGS = LruDictionary(1)  # stays empty: no inline tag path without a tag dictionary


class CompressionState(NamedTuple):
    """Per-file dictionaries and switches of a compressed WAL (``CompressionContext``)."""

    row: LruDictionary
    family: LruDictionary
    qualifier: LruDictionary
    tag: LruDictionary | None  # None: tags written raw
    value_algorithm: int | None  # None: values written raw

    @classmethod
    def create(cls, *, tags: bool, value_algorithm: int | None, writer: bool) -> CompressionState:
        return cls(
            LruDictionary(ROW_CAPACITY, writer=writer),
            LruDictionary(FAMILY_CAPACITY, writer=writer),
            LruDictionary(QUALIFIER_CAPACITY, writer=writer),
            LruDictionary(TAG_CAPACITY, writer=writer) if tags else None,
            value_algorithm,
        )


def encode_compressed_cell(out: bytearray, cell: Cell, state: CompressionState) -> None:
    """Append a dictionary-compressed cell to ``out`` (updating the writer dictionaries)."""
    key_len = check_cell(cell)
    tags = tags_bytes(cell.tags) if cell.tags else b""
    out += encode_varint(key_len)
    out += encode_varint(len(cell.value))
    out += encode_varint(len(tags))
    write_item(out, cell.row, state.row)
    write_item(out, cell.family, state.family)
    write_item(out, cell.qualifier, state.qualifier)
    out += TS_TYPE.pack(cell.timestamp, cell.type)
    if state.value_algorithm is None:
        out += cell.value
    else:
        compressed = CODECS[state.value_algorithm].compress(cell.value)
        out += encode_varint(len(compressed))
        out += compressed
    if tags:
        if state.tag is None:
            out += tags
        else:
            for tag in cell.tags:
                write_item(out, bytes((tag.type,)) + tag.value, state.tag)


# --- compressed cell decoding -------------------------------------------------------------


def _varint32(buf: bytes, pos: int) -> tuple[int, int]:
    """A cell's length varint of two or more bytes (the hot loop inlines the shorter ones):
    at most 5 bytes, a Java int. IndexError when the data ends inside it."""
    value, pos = scan_varint(buf, pos, len(buf), 5)
    if value == VARINT_CUT:
        raise IndexError("cell length varint cut off")
    if value == VARINT_TOO_LONG:
        raise CellCorruptError("cell length varint is longer than 5 bytes")
    if value > MAX_KV_LENGTH:
        raise CellCorruptError(f"cell length {value} does not fit a 32-bit int")
    return value, pos


def _decode_tags_compressed(
    buf: bytes, pos: int, end: int, tags_len: int, tag_dict: LruDictionary
) -> tuple[tuple[Tag, ...], int]:
    tags = []
    produced = 0
    new = _new_tuple
    while produced < tags_len:
        data, pos = read_item(buf, pos, end, tag_dict)
        if not data:
            raise CellCorruptError("empty compressed tag")
        tags.append(new(Tag, (data[0], data[1:])))
        produced += 2 + len(data)
    if produced != tags_len:
        raise CellCorruptError(f"compressed tags make {produced} bytes, expected {tags_len}")
    return tuple(tags), pos


def _cell_tags(
    buf: bytes, p: int, end: int, tags_len: int, tag_dict: LruDictionary | None
) -> tuple[tuple[Tag, ...], int]:
    """The tags of a compressed cell: raw tag bytes, or one dictionary item per tag."""
    if tag_dict is None:
        if p + tags_len > end:
            raise IndexError("cell tags cut off")
        return parse_tags(buf, p, p + tags_len), p + tags_len
    return _decode_tags_compressed(buf, p, end, tags_len, tag_dict)


def decode_compressed_cell(
    buf: bytes, pos: int, state: CompressionState, ensure: Ensure
) -> tuple[Cell, bytes, int]:
    """Decode one compressed cell at ``pos``.

    ``ensure(n)`` makes the buffer hold bytes up to position ``n`` when the file has them
    and returns the (possibly new) buffer; running past what it could load raises
    IndexError (a cut-off cell). Returns the cell, the buffer and the next position.
    """
    cells, buf, pos = decode_compressed_cells(buf, pos, 1, state, ensure)
    return cells[0], buf, pos


def decode_compressed_cells(
    buf: bytes, p: int, count: int, state: CompressionState, ensure: Ensure
) -> tuple[tuple[Cell, ...], bytes, int]:
    """Decode ``count`` compressed cells at ``p`` (see ``decode_compressed_cell``)."""
    return compressed_cells_decoder(state)(buf, p, count, ensure)


def compressed_cells_decoder(  # noqa: C901, PLR0915  # holds the hot loop below
    state: CompressionState,
) -> CellsDecoder:
    """``decode_compressed_cells`` bound to ``state``, with everything it looks up per call
    (dictionary slots, switches) looked up once: a reader makes one per file."""
    algorithm = state.value_algorithm
    raw_value = algorithm is None
    tag_dict = state.tag
    row_dict, fam_dict, qual_dict = state.row, state.family, state.qualifier
    rows, row_touch = row_dict.fast_get()
    fams, fam_touch = fam_dict.fast_get()
    quals, qual_touch = qual_dict.fast_get()
    row_order = row_dict.fast_add()[1]
    row_cap = row_dict.capacity
    tag_slots, tag_touch = (_NO_TAGS if tag_dict is None else tag_dict).fast_get()
    value_of = None if algorithm is None else value_decoder(algorithm)

    def decode(  # noqa: C901, PLR0912, PLR0915  # the reader's hot loop, inlined on purpose
        buf: bytes, p: int, count: int, ensure: Ensure
    ) -> tuple[tuple[Cell, ...], bytes, int]:
        """One flat loop: one-byte varints and dictionary references are decoded inline;
        every other case (long lengths, anything cut off or malformed) goes through the
        general helpers, which raise the errors."""
        new = _new_tuple
        ts_type = _TS_TYPE_FROM
        cells: list[Cell] = []
        append = cells.append
        tags: tuple[Tag, ...]
        blen = len(buf)
        # filled slots of each dictionary, kept here and re-read after every general-path
        # item (the WALKey decoder may also have added families since the last call)
        nrow, nfam, nqual, ntag = len(rows), len(fams), len(quals), len(tag_slots)
        for _ in range(count):
            if p + 15 > blen:
                buf = ensure(p + 15)
                blen = len(buf)
            # the lengths' varints are inlined on purpose (one byte; two for the value): in
            # CPython a call per length costs more than decoding it here. Longer ones go
            # through _varint32, that is protobuf.scan_varint, the one varint loop.
            key_len = buf[p]
            if key_len < 0x80:
                q = p + 1
            else:
                key_len, q = _varint32(buf, p)
            val_len = buf[q]
            if val_len < 0x80:
                q += 1
            elif (b := buf[q + 1]) < 0x80:  # two bytes: values of 128 bytes to 16 KiB
                val_len = (val_len & 0x7F) | b << 7
                q += 2
            else:
                val_len, q = _varint32(buf, q)
            tags_len = buf[q]
            if tags_len < 0x80:
                q += 1
            else:
                tags_len, q = _varint32(buf, q)
            if key_len < 12:
                raise CellCorruptError(f"key length {key_len} is shorter than a KeyValue key")
            bound = q + key_len + 24 + (val_len if raw_value else 5) + 2 * tags_len
            if bound > blen:
                buf = ensure(bound)
                blen = len(buf)
            # row, family, qualifier: a reference to a filled slot (and, for rows, a literal
            # with a one-byte length) inline, anything else through read_item
            s = buf[q] if q + 2 <= blen else 0x100
            if s < 0x80 and (i := s << 8 | buf[q + 1]) < nrow:
                row_touch(i)
                row = rows[i]
                q += 2
            elif s == 0xFF and (n := buf[q + 1]) < 0x80 and q + 2 + n <= blen:
                q += 2 + n
                row = buf[q - n : q]
                if not n:
                    pass  # an empty literal takes no slot
                elif nrow < row_cap:
                    row_order[nrow] = None
                    rows.append(row)
                    nrow += 1
                else:
                    i = row_order.popitem(False)[0]
                    row_order[i] = None
                    rows[i] = row
            else:
                row, q = read_item(buf, q, blen, row_dict)
                nrow = len(rows)
            s = buf[q] if q + 2 <= blen else 0x100
            if s < 0x80 and (i := s << 8 | buf[q + 1]) < nfam:
                fam_touch(i)
                family = fams[i]
                q += 2
            else:
                family, q = read_item(buf, q, blen, fam_dict)
                nfam = len(fams)
            s = buf[q] if q + 2 <= blen else 0x100
            if s < 0x80 and (i := s << 8 | buf[q + 1]) < nqual:
                qual_touch(i)
                qualifier = quals[i]
                q += 2
            else:
                qualifier, q = read_item(buf, q, blen, qual_dict)
                nqual = len(quals)
            row_len = len(row)
            fam_len = len(family)
            if row_len > MAX_ROW_LENGTH or fam_len > MAX_FAMILY_LENGTH:
                raise CellCorruptError(f"row length {row_len} or family length {fam_len} too long")
            if 12 + row_len + fam_len + len(qualifier) != key_len:
                raise CellCorruptError(
                    f"row, family and qualifier do not add up to key length {key_len}"
                )
            timestamp, cell_type = ts_type(buf, q)
            q += 9
            if raw_value:
                value = buf[q : q + val_len]
                q += val_len
            else:  # varint compLen, compLen bytes
                assert value_of is not None
                comp_len = buf[q]
                if comp_len < 0x80:
                    q += 1
                else:
                    comp_len, q = _varint32(buf, q)
                stop = q + comp_len
                if stop + 2 * tags_len > blen:
                    buf = ensure(stop + 2 * tags_len)
                    blen = len(buf)
                if stop > blen:
                    raise IndexError("compressed value cut off")
                value = value_of(buf[q:stop], val_len)
                q = stop
            if q > blen:
                raise IndexError("cell value cut off")
            if not tags_len:
                tags = ()
            elif (  # one compressed tag, a reference to a filled slot
                q + 2 <= blen
                and (s := buf[q]) < 0x80
                and (i := s << 8 | buf[q + 1]) < ntag
                and len(tag_slots[i]) + 2 == tags_len
            ):
                tag_touch(i)
                data = tag_slots[i]
                tags = (new(Tag, (data[0], data[1:])),)
                q += 2
            else:
                tags, q = _cell_tags(buf, q, blen, tags_len, tag_dict)
                ntag = len(tag_slots)
            append(new(Cell, (row, family, qualifier, timestamp, cell_type, value, tags)))
            p = q
        return tuple(cells), buf, p

    return decode


def value_decoder(algorithm: int) -> Callable[[bytes, int], bytes]:
    """The per-file function from a value's compressed bytes and its length in the cell
    header to the value (``CellCorruptError`` when they disagree)."""
    if algorithm == ALGO_NONE:

        def stored(data: bytes, val_len: int) -> bytes:
            if len(data) != val_len:
                raise CellCorruptError(f"value of {len(data)} bytes, header says {val_len}")
            return data

        return stored
    codec = CODECS[algorithm]
    name, decompress = codec.name, codec.decompress

    def decode(data: bytes, val_len: int) -> bytes:
        if not val_len:  # HBase skips the bytes of an empty value unread (HBASE-27637)
            return b""
        try:
            value = decompress(data, val_len)
        except DecompressionErrors as exc:
            raise CellCorruptError(f"{name} value does not decompress: {exc}") from exc
        if len(value) != val_len:
            raise CellCorruptError(
                f"{name} value decompressed to {len(value)} bytes, expected {val_len}"
            )
        return value

    return decode
