"""File info and root block index of an HFile (``HFileInfo``, ``HFileBlockIndex``,
``HStoreFile``, ``TimeRangeTracker`` in branch-2.6).

The load-on-open section starts at the trailer's ``load_on_open_data_offset``: the root data
index block, the meta index block, the file info block (``HFileInfo.initMetaAndIndex``), then
bloom metadata.

File info (``HFileInfo.read``): ``PBUF`` (``ProtobufMagic.PB_MAGIC``), then a varint-delimited
``FileInfoProto`` of ``BytesBytesPair`` entries (first = 1, second = 2). Keys read here:
``hfile.MAX_TAGS_LEN`` (present: the cells carry tags), ``hfile.TAGS_COMPRESSED``,
``KEY_VALUE_VERSION`` (int32 1: every cell ends with its mvcc), ``MAX_MEMSTORE_TS_KEY``,
``DATA_BLOCK_ENCODING`` (the encoding's name), ``MAX_SEQ_ID_KEY`` (int64), ``TIMERANGE``
(``PBUF`` and a ``TimeRangeTracker`` message: from = 1, to = 2; before that two int64).

Root index (``BlockIndexReader.readRootIndex``): per entry int64 block offset, int32 on-disk
size and a key as ``Bytes.readByteArray`` (Hadoop vint length, bytes); a multi-level root
adds mid-key metadata after the entries (``readMultiLevelIndexRoot``). Leaf and intermediate
blocks (``BlockIndexReader.getNonRootIndexedKey``): int32 entry count, count + 1 int32
secondary offsets (relative to the entries), then per entry int64 offset, int32 on-disk size
and the key, its length from the secondary index.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from hbase_migrate.hfile.keyvalue import read_vlong
from hbase_migrate.wal.cells import CellCorruptError
from hbase_migrate.wal.protobuf import Message, ProtobufError, decode_varint

PB_MAGIC = b"PBUF"
_ENTRY = struct.Struct(">qi")


class IndexEntry(NamedTuple):
    offset: int
    on_disk_size: int
    key: bytes


def parse_file_info(data: bytes) -> dict[bytes, bytes]:
    """The file info block's map (raises ``ProtobufError`` on bad bytes)."""
    if data[:4] != PB_MAGIC:
        raise ProtobufError(f"file info starts with {data[:4]!r}, not {PB_MAGIC!r}")
    length, pos = decode_varint(data, 4)
    if pos + length > len(data):
        raise ProtobufError("file info message runs past its block")
    info: dict[bytes, bytes] = {}
    for pair in Message(data[pos : pos + length], "FileInfoProto").repeated(1):
        entry = Message(pair, "BytesBytesPair")
        info[entry.req_bytes(1, "first")] = entry.req_bytes(2, "second")
    return info


def int_value(info: dict[bytes, bytes], key: bytes) -> int | None:
    """A big-endian signed int32 or int64 value of the file info, or None."""
    raw = info.get(key)
    if raw is None or len(raw) not in (4, 8):
        return None
    return int.from_bytes(raw, "big", signed=True)


def time_range(info: dict[bytes, bytes]) -> tuple[int, int] | None:
    """``TIMERANGE``: (minimum, maximum) timestamp of the file's cells, or None."""
    raw = info.get(b"TIMERANGE")
    if raw is None:
        return None
    if raw[:4] == PB_MAGIC:
        msg = Message(raw[4:], "TimeRangeTracker")
        return msg.opt_int(1) or 0, msg.opt_int(2) or 0
    if len(raw) >= 16:  # two longs (``TimeRangeTracker.parseFrom`` reads those only: 1.x
        low, high = struct.unpack_from(">qq", raw)  # wrote 32 bytes, the last 16 zero)
        return low, high
    raise ProtobufError(f"TIMERANGE of {len(raw)} bytes")


def parse_root_index(data: bytes, count: int) -> list[IndexEntry]:
    """The first ``count`` entries of a root index block."""
    entries, pos = [], 0
    for _ in range(count):
        if pos + 12 > len(data):
            raise CellCorruptError("root index entry cut off")
        offset, size = _ENTRY.unpack_from(data, pos)
        key_len, pos = read_vlong(data, pos + 12, len(data))
        if key_len < 0 or pos + key_len > len(data):
            raise CellCorruptError(f"root index key of {key_len} bytes runs past the block")
        entries.append(IndexEntry(offset, size, data[pos : pos + key_len]))
        pos += key_len
    return entries


def parse_non_root_index(data: bytes) -> list[IndexEntry]:
    """The entries of a leaf or intermediate index block."""
    if len(data) < 4:
        raise CellCorruptError("index block shorter than its entry count")
    (count,) = struct.unpack_from(">i", data, 0)
    base = 4 + 4 * (count + 1)
    if count < 0 or base > len(data):
        raise CellCorruptError(f"index block of {count} entries does not fit")
    offsets = struct.unpack_from(f">{count + 1}i", data, 4)
    entries = []
    for index in range(count):
        start, stop = base + offsets[index], base + offsets[index + 1]
        if not base <= start <= stop - 12 or stop > len(data):
            raise CellCorruptError(f"index entry {index} does not fit its block")
        offset, size = _ENTRY.unpack_from(data, start)
        entries.append(IndexEntry(offset, size, data[start + 12 : stop]))
    return entries
