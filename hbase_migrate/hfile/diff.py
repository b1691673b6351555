"""Data blocks encoded DIFF (``DiffKeyDeltaEncoder`` and its seeker's ``decodeFirst`` and
``decode`` in branch-2.6).

After the block's 2-byte encoding id (3) and the int32 unencoded size (as PREFIX,
``prefix.py``): the family (uint8 length, bytes), sent once, then per cell::

    uint8 flag: 1 SAME_KEY_LENGTH, 2 SAME_VALUE_LENGTH, 4 SAME_TYPE, 8 TIMESTAMP_IS_DIFF,
                bits 4-6 the timestamp's byte count less one, 128 TIMESTAMP_SIGN
    [cint keyLen] [cint valueLen] cint common
    key bytes, timestamp and type excluded, as FAST_DIFF's (``fastdiff.py``)
    timestamp: that many bytes, least significant first (``ByteBuff.readLong``), negated
               with TIMESTAMP_SIGN; the timestamp, or with TIMESTAMP_IS_DIFF what the previous
               timestamp exceeds it by
    [uint8 type] | value | [cint tagsLen | tags] | [vlong mvcc]
                 (tags compressed with TAGS_COMPRESSED: ``tagcompression.py``)
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from hbase_migrate.hfile.cursor import Cursor
from hbase_migrate.hfile.fastdiff import TS_TYPE, key_stem
from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.wal.cells import CellCorruptError

DIFF = 3
SAME_KEY_LENGTH, SAME_VALUE_LENGTH, SAME_TYPE, TIMESTAMP_IS_DIFF, TIMESTAMP_SIGN = 1, 2, 4, 8, 128


def diff_cells(data: bytes, *, tags: bool, mvcc: bool,
               compressed_tags: bool = False) -> Iterator[StoreCell]:
    """The cells of a DIFF block's data after the encoding id."""
    if len(data) < 5:
        raise CellCorruptError("DIFF block has no unencoded size and family")
    (unencoded,) = struct.unpack_from(">i", data, 0)
    pos = 5 + data[4]
    family = data[4:pos]
    # the key before the first: an empty row and the block's family, so that the first key
    # (common prefix 0) takes its family from it as every later key does
    prev_key, timestamp, kind = b"\x00\x00" + family + bytes(TS_TYPE), 0, b"\x04"
    cur = Cursor(data, pos, "DIFF", compressed_tags=tags and compressed_tags)
    while cur.more():
        flag = cur.take(1)[0]
        common = cur.lengths(flag, SAME_KEY_LENGTH, SAME_VALUE_LENGTH)
        key_len, value_len = cur.key_len, cur.value_len
        key = key_stem(prev_key, common, key_len - TS_TYPE, cur.take, first=False)
        number = int.from_bytes(cur.take(1 + ((flag >> 4) & 7)), "little")
        if flag & TIMESTAMP_SIGN:
            number = -number
        timestamp = timestamp - number if flag & TIMESTAMP_IS_DIFF else number
        if not flag & SAME_TYPE:
            kind = cur.take(1)
        if not -(1 << 63) <= timestamp < 1 << 63:
            raise CellCorruptError(f"DIFF timestamp {timestamp} does not fit 64 bits")
        key += struct.pack(">q", timestamp) + kind
        value = cur.take(value_len)
        stored = cur.cell(key, value, tags=tags, mvcc=mvcc)
        prev_key = key
        yield stored
    cur.check_unencoded(unencoded)
