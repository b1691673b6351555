"""Can these bytes begin a WALKey? The reader's rare "looks cut off" path.

A writer cut off mid-entry leaves a prefix of a WALKey as HBase serialises it: protobuf-java's
generated ``writeTo`` emits the fields in ascending number order, a non-repeated field at
most once, the required ones (1-4 of WALKey, both fields of UUID, FamilyScope and
Attribute) always and first; every length-delimited field ends inside its message, and in a
compressed file fields 1 and 2 hold exactly one dictionary item (``Dictionary.write``:
FF + varint length + literal, or a 2-byte reference to a slot already filled, since the
dictionaries are in step with the writer's up to this entry). WAL.proto's WALKey has
fields 1-12 on every branch up to master. An encoded region name has at most 32 bytes (the
MD5 hex of new-style names, or the decimal JenkinsHash of old-style ones and hbase:meta's:
``RegionInfo.encodeRegionName``, hbase-client). Anything else after a length is no key.
"""

from __future__ import annotations

from typing import NamedTuple

from hbase_migrate.wal.dictionary import LruDictionary
from hbase_migrate.wal.protobuf import (
    LENGTH_DELIMITED,
    UINT64_MASK,
    VARINT,
    VARINT_CUT,
    VARINT_TOO_LONG,
    scan_varint,
)
from hbase_migrate.wal.walkey import KeyDictionaries


class _Shape(NamedTuple):
    """A message's fields: number -> (wire type, repeated, content); ``required`` fields
    are numbered 1..required. Content is a nested _Shape, a dictionary item ("region",
    "table": the slot must exist; "item": form only) or None."""

    name: str
    fields: dict[int, tuple[int, bool, object]]
    required: int


_REGION_FIELD_MAX = (32, 34)  # raw; as a dictionary literal (FF, length, name)
_UUID_SHAPE = _Shape("UUID", {1: (VARINT, False, None), 2: (VARINT, False, None)}, 2)
_SCOPE_SHAPE = _Shape(
    "FamilyScope", {1: (LENGTH_DELIMITED, False, "item"), 2: (VARINT, False, None)}, 2
)
_ATTRIBUTE_SHAPE = _Shape(
    "Attribute", {1: (LENGTH_DELIMITED, False, None), 2: (LENGTH_DELIMITED, False, "item")}, 2
)
_KEY_SHAPE = _Shape(
    "WALKey",
    {
        1: (LENGTH_DELIMITED, False, "region"),
        2: (LENGTH_DELIMITED, False, "table"),
        3: (VARINT, False, None),
        4: (VARINT, False, None),
        5: (LENGTH_DELIMITED, False, _UUID_SHAPE),
        6: (LENGTH_DELIMITED, True, _SCOPE_SHAPE),
        7: (VARINT, False, None),
        8: (LENGTH_DELIMITED, True, _UUID_SHAPE),
        9: (VARINT, False, None),
        10: (VARINT, False, None),
        11: (VARINT, False, None),
        12: (LENGTH_DELIMITED, True, _ATTRIBUTE_SHAPE),
    },
    4,
)


def key_prefix_problem(
    buf: bytes, pos: int, end: int, key_end: int, dicts: KeyDictionaries | None
) -> str | None:
    """Why ``buf[pos:end]`` cannot be the first bytes of a WALKey that ends at ``key_end``
    (``end <= key_end``) as HBase writes it; None when it can."""
    return _shape_problem(buf, pos, end, key_end, _KEY_SHAPE, dicts)


def _shape_problem(  # noqa: C901, PLR0911
    buf: bytes, pos: int, end: int, limit: int, shape: _Shape, dicts: KeyDictionaries | None
) -> str | None:
    """``buf[pos:end]`` against ``shape`` for a message ending at ``limit``; the data may
    stop early (``end < limit``: cut off) but not inside a complete message."""
    cut_ok = end < limit
    last = count = 0
    while pos < end:
        tag, after = _varint_or_cut(buf, pos, end)
        if tag < 0:
            return None if cut_ok and tag == VARINT_CUT else "bad field tag"
        field, wire_type = tag >> 3, tag & 7
        spec = shape.fields.get(field)
        if spec is None or wire_type != spec[0]:
            return f"field {field} with wire type {wire_type} is no {shape.name} field"
        if count < shape.required and field != count + 1:
            return f"{shape.name} field {field} where field {count + 1} comes first"
        if field < last or (field == last and not spec[1]):
            return f"{shape.name} field {field} after field {last}: out of order"
        last, count = field, count + 1
        value, pos = _varint_or_cut(buf, after, end)
        if value < 0:
            bad = f"bad value of {shape.name} field {field}"
            return None if cut_ok and value == VARINT_CUT else bad
        if wire_type == VARINT:
            if field == 7 and shape is _KEY_SHAPE and value > 0xFFFFFFFF:
                return f"following_kv_count {value} does not fit a uint32"
            continue
        stop = pos + value
        if stop > limit:
            return f"{shape.name} field {field} of {value} bytes runs past its message"
        if field == 1 and shape is _KEY_SHAPE and value > _REGION_FIELD_MAX[dicts is not None]:
            return f"a {value}-byte encoded region name"
        content = spec[2]
        if isinstance(content, _Shape):
            problem = _shape_problem(buf, pos, min(stop, end), stop, content, dicts)
        elif content is not None and dicts is not None:
            dictionary = dicts.region if content == "region" else dicts.table
            problem = _item_problem(buf, pos, min(stop, end), stop, dictionary, content != "item")
        else:
            problem = None
        if problem is not None:
            return f"{shape.name} field {field}: {problem}"
        pos = stop
    if not cut_ok and count < shape.required:
        return f"{shape.name} lacks required field {count + 1}"
    return None


def _varint_or_cut(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """A varint below ``end``: ``(value, new_pos)``, ``(VARINT_CUT, pos)`` when the data ends
    inside it, ``(VARINT_TOO_LONG, pos)`` when it is longer than 10 bytes or 64 bits."""
    value, new_pos = scan_varint(buf, pos, end)
    return (VARINT_TOO_LONG, pos) if value > UINT64_MASK else (value, new_pos)


def _item_problem(
    buf: bytes, pos: int, end: int, stop: int, dictionary: LruDictionary, slot_must_exist: bool
) -> str | None:
    """``buf[pos:end]`` against one dictionary item filling ``[pos, stop)``."""
    if pos >= end:
        return None if end < stop else "empty dictionary item"
    if buf[pos] == 0xFF:
        length, start = _varint_or_cut(buf, pos + 1, end)
        fits = (length == VARINT_CUT and end < stop) or (length >= 0 and start + length == stop)
        return None if fits else "literal length does not fill the field"
    if buf[pos] >= 0x80 or stop - pos != 2:
        return "neither a literal nor a 2-byte reference"
    if slot_must_exist and pos + 1 < end and (buf[pos] << 8 | buf[pos + 1]) >= len(dictionary):
        return f"reference to empty slot {buf[pos] << 8 | buf[pos + 1]}"
    return None
