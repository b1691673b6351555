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
    | [vlong mvcc]

``cint`` as in ``prefix.py``. Anything that does not fit raises ``CellCorruptError``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator

from hbase_migrate.hfile.keyvalue import StoreCell, parse_key
from hbase_migrate.hfile.prefix import encoded_tail
from hbase_migrate.wal.cells import CellCorruptError
from hbase_migrate.wal.model import Cell
from hbase_migrate.wal.protobuf import ProtobufError, decode_varint32

FAST_DIFF = 4
SAME_KEY_LENGTH, SAME_VALUE_LENGTH, SAME_TYPE, SAME_VALUE = 8, 16, 32, 64
TS_TYPE = 9  # timestamp and type at the end of a key


def _stem(prev_key: bytes, common: int, stem: int, take: Callable[[int], bytes], *,
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


def fast_diff_cells(data: bytes, *, tags: bool, mvcc: bool) -> Iterator[StoreCell]:
    """The cells of a FAST_DIFF block's data after the encoding id."""
    if len(data) < 4:
        raise CellCorruptError("FAST_DIFF block has no unencoded size")
    (unencoded,) = struct.unpack_from(">i", data, 0)
    end = len(data)
    pos = 4
    key_len = value_len = total = 0
    prev_key, value = bytes(TS_TYPE + 3), b""

    def take(count: int) -> bytes:
        nonlocal pos
        if count < 0 or pos + count > end:
            raise CellCorruptError(f"FAST_DIFF cell runs past the block at byte {pos + 2}")
        pos += count
        return data[pos - count : pos]

    try:
        while pos < end:
            flag = take(1)[0]
            if not flag & SAME_KEY_LENGTH:
                key_len, pos = decode_varint32(data, pos, end)
            if not flag & SAME_VALUE_LENGTH:
                value_len, pos = decode_varint32(data, pos, end)
            common, pos = decode_varint32(data, pos, end)
            key = _stem(prev_key, common, key_len - TS_TYPE, take, first=total == 0)
            shared_ts = flag & 7
            ts_bytes = prev_key[-TS_TYPE : -TS_TYPE + shared_ts] + take(8 - shared_ts)
            kind = prev_key[-1:] if flag & SAME_TYPE else take(1)
            key += ts_bytes + kind
            if not flag & SAME_VALUE:
                value = take(value_len)
            elif len(value) != value_len:
                raise CellCorruptError("FAST_DIFF same value with another value length")
            cell_tags, version, counted, pos = encoded_tail(data, pos, tags=tags, mvcc=mvcc)
            if len(key) != key_len:
                raise CellCorruptError(f"FAST_DIFF key of {len(key)} bytes, expected {key_len}")
            row, family, qualifier, timestamp, code = parse_key(key)
            total += 8 + key_len + value_len + counted
            prev_key = key
            yield StoreCell(Cell(row, family, qualifier, timestamp, code, value, cell_tags),
                            version)
    except ProtobufError as exc:
        raise CellCorruptError(f"FAST_DIFF cell lengths: {exc}") from exc
    if total != unencoded:
        raise CellCorruptError(f"FAST_DIFF cells of {total} bytes unencoded, the block says "
                               f"{unencoded}")
