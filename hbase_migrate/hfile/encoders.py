"""The writer's data block encoders, each the mirror of a decoder (``keyvalue.py``,
``prefix.py``, ``diff.py``, ``fastdiff.py``, ``rowindex.py``), making the bytes HBase 2.6's
own encoders make for the same cells (``NoneEncoder``, ``PrefixKeyDeltaEncoder``,
``DiffKeyDeltaEncoder``, ``FastDiffDeltaEncoder``, ``RowIndexEncoderV1`` and
``BufferedDataBlockEncoder.afterEncodingKeyValue`` in branch-2.6).

An encoder fills one data block at a time: ``start()``, ``add(cell, key, mvcc)`` per cell,
``finish()`` the block's data (the bytes after the block header, before compression). It
counts what HBase's ``EncodingState`` counts: ``unencoded`` (the cells as unencoded
KeyValues with their tags and mvcc) and ``encoded`` (the bytes written for the cells), which
decide where a block ends. The common prefix of two keys is HBase's
(``PrivateCellUtil.findCommonPrefixInFlatKey``), not the plain byte prefix: it stops at the
qualifier when the qualifiers' lengths differ.
"""

from __future__ import annotations

import struct

from hbase_migrate.hfile.diff import DIFF
from hbase_migrate.hfile.fastdiff import FAST_DIFF
from hbase_migrate.hfile.prefix import PREFIX
from hbase_migrate.hfile.rowindex import ROW_INDEX_V1
from hbase_migrate.hfile.tagcompression import TAG_DICTIONARY_CAPACITY
from hbase_migrate.wal.dictionary import LruDictionary, write_item
from hbase_migrate.wal.model import Cell
from hbase_migrate.wal.protobuf import encode_varint

NONE = 0
ENCODING_NAMES = {NONE: "NONE", PREFIX: "PREFIX", DIFF: "DIFF", FAST_DIFF: "FAST_DIFF",
                  ROW_INDEX_V1: "ROW_INDEX_V1"}
BY_NAME = {name: code for code, name in ENCODING_NAMES.items()}
_LENS = struct.Struct(">ii")
_TS = struct.Struct(">q")
_TS_TYPE = struct.Struct(">qB")
KV_INFRASTRUCTURE = 8  # keyLen, valueLen


def flat_key(cell: Cell) -> bytes:
    """The cell's KeyValue key: row length, row, family length, family, qualifier,
    timestamp, type."""
    return (len(cell.row).to_bytes(2, "big") + cell.row + bytes((len(cell.family),))
            + cell.family + cell.qualifier + _TS_TYPE.pack(cell.timestamp, cell.type))


def vlong(value: int) -> bytes:
    """Hadoop's ``WritableUtils.writeVLong``."""
    if -112 <= value <= 127:
        return bytes((value & 0xFF,))
    size = -112
    if value < 0:
        value = ~value
        size = -120
    rest = value
    while rest:
        rest >>= 8
        size -= 1
    count = -(size + 120) if size < -120 else -(size + 112)
    return bytes((size & 0xFF,)) + value.to_bytes(count, "big")


def common_prefix(cell: Cell, prev: Cell, *, with_ts_type: bool) -> int:
    """``PrivateCellUtil.findCommonPrefixInFlatKey`` (the family taken as shared)."""
    if len(cell.row) != len(prev.row):
        a, b = len(cell.row).to_bytes(2, "big"), len(prev.row).to_bytes(2, "big")
        return 1 if a[0] == b[0] else 0
    common = 2 + _shared(cell.row, prev.row)
    if common - 2 != len(cell.row):
        return common
    common += 1 + len(cell.family)
    q_common = _shared(cell.qualifier, prev.qualifier)
    common += q_common
    if not with_ts_type or max(len(cell.qualifier), len(prev.qualifier)) != q_common:
        return common
    ts_common = _shared(_TS.pack(cell.timestamp), _TS.pack(prev.timestamp))
    common += ts_common
    if ts_common == 8 and cell.type == prev.type:
        common += 1
    return common


def _shared(a: bytes, b: bytes) -> int:
    """The length of the common prefix of ``a`` and ``b``."""
    limit = min(len(a), len(b))
    if a[:limit] == b[:limit]:
        return limit
    differ = int.from_bytes(a[:limit], "big") ^ int.from_bytes(b[:limit], "big")
    return limit - (differ.bit_length() + 7) // 8


def _long_fits_in(value: int) -> int:
    """``ByteBufferUtils.longFitsIn``: bytes a value needs (8 for a negative one)."""
    if value < 0:
        return 8
    return max(1, (value.bit_length() + 7) // 8)


def _key_rest(cell: Cell, common: int) -> bytes:
    """What DIFF and FAST_DIFF send of a key, timestamp and type excluded
    (``writeRowKeyExcludingCommon`` and the qualifier)."""
    row_end = 2 + len(cell.row)
    if common < row_end:
        head = len(cell.row).to_bytes(2, "big") + cell.row
        return head[common:] + cell.qualifier
    return cell.qualifier[common - row_end - 1 - len(cell.family):]


class BlockEncoder:
    """NONE: the cells as KeyValues, tags (uint16 length) and mvcc as a vlong."""

    encoding = NONE

    def __init__(self, *, tags: bool, mvcc: bool, compress_tags: bool = False) -> None:
        self.tags, self.mvcc, self.compress_tags = tags, mvcc, compress_tags
        self.out = bytearray()
        self.unencoded = self.encoded = self.count = 0

    def start(self) -> None:
        self.out = bytearray()
        self.unencoded = self.encoded = self.count = 0

    def add(self, cell: Cell, key: bytes, mvcc: int, tags: bytes = b"") -> None:
        """Encode a cell: ``key`` its KeyValue key, ``tags`` its serialised tags."""
        before = len(self.out)
        size = self._cell(cell, key, mvcc, tags)
        self.unencoded += size
        self.encoded += len(self.out) - before
        self.count += 1

    def _cell(self, cell: Cell, key: bytes, mvcc: int, raw: bytes) -> int:
        out = self.out
        out += _LENS.pack(len(key), len(cell.value))
        out += key
        out += cell.value
        size = KV_INFRASTRUCTURE + len(key) + len(cell.value)
        if self.tags:
            out += len(raw).to_bytes(2, "big")
            out += raw
            size += 2 + len(raw)
        if self.mvcc:
            version = vlong(mvcc)
            out += version
            size += len(version)
        return size

    def finish(self) -> bytes:
        return bytes(self.out)


class RowIndexEncoder(BlockEncoder):
    """ROW_INDEX_V1: the cells as NONE writes them, then the offset of each row's first cell
    (``RowIndexEncoderV1``)."""

    encoding = ROW_INDEX_V1

    def start(self) -> None:
        super().start()
        self.rows: list[int] = []
        self.last_row: bytes | None = None

    def add(self, cell: Cell, key: bytes, mvcc: int, tags: bytes = b"") -> None:
        extra = 0
        if cell.row != self.last_row:
            self.rows.append(len(self.out))
            self.last_row = cell.row
            extra = 4
        super().add(cell, key, mvcc, tags)
        self.encoded += extra

    def finish(self) -> bytes:
        index = struct.pack(f">i{len(self.rows)}i", len(self.rows), *self.rows)
        return (ROW_INDEX_V1.to_bytes(2, "big") + bytes(self.out) + index
                + len(self.out).to_bytes(4, "big"))


class _Buffered(BlockEncoder):
    """What PREFIX, DIFF and FAST_DIFF share (``BufferedDataBlockEncoder``): the block's
    unencoded size after the encoding id, each cell's tail of tags (dictionary-compressed
    with one dictionary a block when the family compresses tags) and mvcc."""

    def start(self) -> None:
        super().start()
        self.prev: Cell | None = None
        self.prev_key = b""
        self.dictionary = (LruDictionary(TAG_DICTIONARY_CAPACITY, writer=True)
                           if self.tags and self.compress_tags else None)

    def _cell(self, cell: Cell, key: bytes, mvcc: int, raw: bytes) -> int:
        size = KV_INFRASTRUCTURE + len(key) + len(cell.value) + self._key_value(cell, key)
        out = self.out
        if self.tags:
            out += encode_varint(len(raw))
            if raw and self.dictionary is not None:
                for tag in cell.tags:
                    write_item(out, bytes((tag.type,)) + tag.value, self.dictionary)
            else:
                out += raw
            size += 2 + len(raw)
        if self.mvcc:
            version = vlong(mvcc)
            out += version
            size += len(version)
        self.prev, self.prev_key = cell, key
        return size

    def _key_value(self, cell: Cell, key: bytes) -> int:
        """Write the cell's key and value; the bytes counted beyond the KeyValue (none)."""
        raise NotImplementedError

    def finish(self) -> bytes:
        return (self.encoding.to_bytes(2, "big") + self.unencoded.to_bytes(4, "big")
                + bytes(self.out))


class PrefixEncoder(_Buffered):
    """PREFIX: each key less the prefix it shares with the previous one."""

    encoding = PREFIX

    def _key_value(self, cell: Cell, key: bytes) -> int:
        common = 0 if self.prev is None else common_prefix(cell, self.prev, with_ts_type=True)
        out = self.out
        out += encode_varint(len(key) - common)
        out += encode_varint(len(cell.value))
        out += encode_varint(common)
        out += key[common:]
        out += cell.value
        return 0


class DiffEncoder(_Buffered):
    """DIFF: flags, the key's differing part, the timestamp or its difference from the
    previous one in as few bytes as fit, the type when it differs."""

    encoding = DIFF

    def _key_value(self, cell: Cell, key: bytes) -> int:
        out, prev = self.out, self.prev
        flag = 0
        timestamp = cell.timestamp
        if prev is None:
            common = 0
            if timestamp < 0:
                flag |= 128
                timestamp = -timestamp
            ts_bytes = _long_fits_in(timestamp)
            flag |= (ts_bytes - 1) << 4
            head = bytes((len(cell.family),)) + cell.family
            value_bytes, number = ts_bytes, timestamp
        else:
            head = b""
            common = common_prefix(cell, prev, with_ts_type=False)
            if len(key) == len(self.prev_key):
                flag |= 1
            if len(cell.value) == len(prev.value):
                flag |= 2
            if cell.type == prev.type:
                flag |= 4
            diff = prev.timestamp - timestamp
            negative = timestamp < 0
            if negative:
                timestamp = -timestamp
            ts_bytes = _long_fits_in(timestamp)
            minus = diff < 0
            if minus:
                diff = -diff
            diff_bytes = _long_fits_in(diff)
            if diff_bytes < ts_bytes:
                flag |= ((diff_bytes - 1) << 4) | 8 | (128 if minus else 0)
                value_bytes, number = diff_bytes, diff
            else:
                flag |= ((ts_bytes - 1) << 4) | (128 if negative else 0)
                value_bytes, number = ts_bytes, timestamp
        out += head
        out.append(flag)
        if not flag & 1:
            out += encode_varint(len(key))
        if not flag & 2:
            out += encode_varint(len(cell.value))
        out += encode_varint(common)
        out += _key_rest(cell, common)
        out += (number & ((1 << 64) - 1)).to_bytes(8, "little")[:value_bytes]
        if not flag & 4:
            out.append(cell.type)
        out += cell.value
        return 0


class FastDiffEncoder(_Buffered):
    """FAST_DIFF: flags, the key's differing part, the timestamp's bytes after those it
    shares with the previous one, the type and the value when they differ."""

    encoding = FAST_DIFF

    def _key_value(self, cell: Cell, key: bytes) -> int:
        out, prev = self.out, self.prev
        if prev is None:
            out.append(0)
            out += encode_varint(len(key))
            out += encode_varint(len(cell.value))
            out.append(0)
            out += key
            out += cell.value
            return 0
        flag = 0
        common = common_prefix(cell, prev, with_ts_type=False)
        if len(key) == len(self.prev_key):
            flag |= 8
        if len(cell.value) == len(prev.value):
            flag |= 16
        if cell.type == prev.type:
            flag |= 32
        ts, prev_ts = _TS.pack(cell.timestamp), _TS.pack(prev.timestamp)
        shared = min(_shared(ts, prev_ts), 7)
        flag |= shared
        if cell.value == prev.value:
            flag |= 64
        out.append(flag)
        if not flag & 8:
            out += encode_varint(len(key))
        if not flag & 16:
            out += encode_varint(len(cell.value))
        out += encode_varint(common)
        out += _key_rest(cell, common)
        out += ts[shared:]
        if not flag & 32:
            out.append(cell.type)
        if not flag & 64:
            out += cell.value
        return 0


ENCODERS: dict[int, type[BlockEncoder]] = {
    NONE: BlockEncoder, ROW_INDEX_V1: RowIndexEncoder, PREFIX: PrefixEncoder,
    DIFF: DiffEncoder, FAST_DIFF: FastDiffEncoder,
}
