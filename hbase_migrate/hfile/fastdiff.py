"""Data blocks encoded FAST_DIFF (``FastDiffDeltaEncoder`` and its seeker's ``decode`` in
branch-2.6).

After the block's 2-byte encoding id (4) and the int32 unencoded size (as PREFIX,
``prefix.py``), per cell, against the previous cell::

    uint8 flag: bits 0-2 the count of leading timestamp bytes shared with the previous cell,
                8 SAME_KEY_LENGTH, 16 SAME_VALUE_LENGTH, 32 SAME_TYPE, 64 SAME_VALUE
    [cint keyLen] [cint valueLen] cint common (bytes of the key shared with the previous key)
    key bytes, timestamp and type excluded, by ``common``:
      < 2 (row length differs): the rest of the row length, the row, the qualifier
                                (the family is the previous cell's)
      < row length + 2:         the rest of the row, the qualifier (family as before)
      else:                     the key from ``common`` on
    the timestamp's last 8 - shared bytes | [uint8 type] | [value] | [cint tagsLen | tags]
    | [vlong mvcc]     (tags compressed with TAGS_COMPRESSED: ``tagcompression.py``)

``cint`` as in ``prefix.py``. Anything that does not fit raises ``CellCorruptError``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator

from hbase_migrate.hfile.cursor import Cursor
from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.wal.cells import CellCorruptError

FAST_DIFF = 4
SAME_KEY_LENGTH, SAME_VALUE_LENGTH, SAME_TYPE, SAME_VALUE = 8, 16, 32, 64
TS_TYPE = 9  # timestamp and type at the end of a key


def key_stem(prev_key: bytes, common: int, stem: int, take: Callable[[int], bytes], *,
          first: bool) -> bytes:
    """The key without timestamp and type, from the previous key and the bytes sent."""
    prev_row = 2 + int.from_bytes(prev_key[:2], "big")
    if first or common >= prev_row:
        if not first and common > len(prev_key) - TS_TYPE:
            raise CellCorruptError(f"FAST_DIFF prefix {common} is longer than the key")
        return prev_key[:common] + take(stem - common)
    family = prev_key[prev_row : prev_row + 1 + prev_key[prev_row]]
    if common < 2:  # the row's length differs
        head = prev_key[:common] + take(2 - common)
        row = take(int.from_bytes(head, "big"))
    else:
        head = prev_key[:2]
        row = prev_key[2:common] + take(prev_row - common)
    return head + row + family + take(stem - 2 - len(row) - len(family))


def fast_diff_cells(data: bytes, *, tags: bool, mvcc: bool,
                    compressed_tags: bool = False) -> Iterator[StoreCell]:
    """The cells of a FAST_DIFF block's data after the encoding id."""
    if len(data) < 4:
        raise CellCorruptError("FAST_DIFF block has no unencoded size")
    (unencoded,) = struct.unpack_from(">i", data, 0)
    prev_key, value = bytes(TS_TYPE + 3), b""
    cur = Cursor(data, 4, "FAST_DIFF", compressed_tags=tags and compressed_tags)
    while cur.more():
        flag = cur.take(1)[0]
        common = cur.lengths(flag, SAME_KEY_LENGTH, SAME_VALUE_LENGTH)
        key_len, value_len = cur.key_len, cur.value_len
        key = key_stem(prev_key, common, key_len - TS_TYPE, cur.take, first=cur.unencoded == 0)
        shared_ts = flag & 7
        ts_bytes = prev_key[-TS_TYPE : -TS_TYPE + shared_ts] + cur.take(8 - shared_ts)
        kind = prev_key[-1:] if flag & SAME_TYPE else cur.take(1)
        key += ts_bytes + kind
        if not flag & SAME_VALUE:
            value = cur.take(value_len)
        elif len(value) != value_len:
            raise CellCorruptError("FAST_DIFF same value with another value length")
        stored = cur.cell(key, value, tags=tags, mvcc=mvcc)
        prev_key = key
        yield stored
    cur.check_unencoded(unencoded)
