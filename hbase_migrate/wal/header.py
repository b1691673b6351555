"""The protobuf messages of a WAL file: WALHeader, WALKey, WALTrailer (``WAL.proto``).

File framing (``AbstractProtobufLogWriter``/``ProtobufLogWriter``)::

    "PWAL" | varint N | WALHeader (N bytes)
    per entry: varint K | WALKey (K bytes, following_kv_count = C) | C cells
    clean close: WALTrailer (T bytes, empty today) | int32 BE T | "LAWP"

WALHeader: 1 has_compression bool, 2 encryption_key bytes, 3 has_tag_compression bool,
4 writer_cls_name string, 5 cell_codec_cls_name string, 6 has_value_compression bool,
7 value_compression_algorithm uint32.

WALKey: 1 encoded_region_name bytes*, 2 table_name bytes*, 3 log_sequence_number uint64,
4 write_time uint64 (1-4 required), 5 cluster_id UUID (deprecated), 6 scopes FamilyScope
{1 family bytes*, 2 scope_type enum}, 7 following_kv_count uint32, 8 cluster_ids UUID
{1 least_sig_bits, 2 most_sig_bits}, 9 nonceGroup, 10 nonce, 11 orig_sequence_number uint64,
12 extended_attributes Attribute {1 key string, 2 value bytes*}.
Fields marked * hold a dictionary item instead of raw bytes when the file is compressed;
the update order is region, table, scope families, attribute values (``WALKeyImpl``).
"""

from __future__ import annotations

import uuid
from typing import NamedTuple

from hbase_migrate.wal.dictionary import LruDictionary, read_item, write_item
from hbase_migrate.wal.messages import decode_uuid, encode_uuid
from hbase_migrate.wal.model import WalHeader, WalKey
from hbase_migrate.wal.protobuf import (
    LENGTH_DELIMITED,
    UINT64_MASK,
    VARINT,
    VARINT_CUT,
    VARINT_TOO_LONG,
    Message,
    ProtobufError,
    bytes_field,
    decode_varint,
    encode_varint,
    scan_varint,
    skip_field,
    string_field,
    to_int64,
    varint_field,
)

MAGIC = b"PWAL"
TRAILER_MAGIC = b"LAWP"
LEGACY_MAGIC = b"SEQ"
EMPTY_TRAILER = b"\x00\x00\x00\x00" + TRAILER_MAGIC  # WALTrailer{} + int32 0 + "LAWP"
WRITER_CLS_NAMES = frozenset(
    {
        "ProtobufLogWriter",
        "AsyncProtobufLogWriter",
        "SecureProtobufLogWriter",
        "SecureAsyncProtobufLogWriter",
    }
)
_new_tuple = tuple.__new__


class KeyDictionaries(NamedTuple):
    """The dictionaries a compressed WALKey uses (FAMILY is shared with the cells)."""

    region: LruDictionary
    table: LruDictionary
    family: LruDictionary


# --- header -------------------------------------------------------------------------------


def encode_header(header: WalHeader, *, explicit_flags: bool = True) -> bytes:
    """Serialise a WALHeader in field order, as protobuf-java does.

    HBase 2.5+ always sets fields 1, 3 and 6 (false when off); ``explicit_flags=False``
    writes them only when true.
    """
    out = bytearray()
    if explicit_flags or header.has_compression:
        out += varint_field(1, header.has_compression)
    if header.encryption_key is not None:
        out += bytes_field(2, header.encryption_key)
    if explicit_flags or header.has_tag_compression:
        out += varint_field(3, header.has_tag_compression)
    if header.writer_cls_name is not None:
        out += string_field(4, header.writer_cls_name)
    if header.cell_codec_cls_name is not None:
        out += string_field(5, header.cell_codec_cls_name)
    if explicit_flags or header.has_value_compression:
        out += varint_field(6, header.has_value_compression)
    if header.value_compression_algorithm is not None:
        out += varint_field(7, header.value_compression_algorithm)
    return bytes(out)


def decode_header(data: bytes) -> WalHeader:
    """Parse a WALHeader; absent string fields are None, absent flags False."""
    m = Message(data, "WALHeader")
    algorithm = m.opt_int(7, "value_compression_algorithm")
    return WalHeader(
        has_compression=bool(m.opt_int(1, "has_compression")),
        encryption_key=m.opt_bytes(2, "encryption_key"),
        has_tag_compression=bool(m.opt_int(3, "has_tag_compression")),
        writer_cls_name=m.opt_str(4, "writer_cls_name"),
        cell_codec_cls_name=m.opt_str(5, "cell_codec_cls_name"),
        has_value_compression=bool(m.opt_int(6, "has_value_compression")),
        value_compression_algorithm=None if algorithm is None else algorithm & 0xFFFFFFFF,
    )


# --- key ----------------------------------------------------------------------------------


def encode_key(key: WalKey, kv_count: int, dicts: KeyDictionaries | None) -> bytes:
    """Serialise a WALKey (without its length prefix); with ``dicts`` the dictionary fields
    are compressed in HBase's order (region, table, scopes, attribute values)."""

    def item(data: bytes, dictionary: LruDictionary | None) -> bytes:
        if dictionary is None:
            return data
        buf = bytearray()
        write_item(buf, data, dictionary)
        return bytes(buf)

    region = item(key.encoded_region_name, dicts.region if dicts else None)
    table = item(key.table_name, dicts.table if dicts else None)
    scopes = [
        bytes_field(1, item(family, dicts.family if dicts else None)) + varint_field(2, scope)
        for family, scope in key.scopes
    ]
    attributes = [
        string_field(1, name) + bytes_field(2, item(value, dicts.table if dicts else None))
        for name, value in key.extended_attributes
    ]
    out = bytearray()
    out += bytes_field(1, region)
    out += bytes_field(2, table)
    out += varint_field(3, key.sequence)
    out += varint_field(4, key.write_time)
    if key.cluster_id is not None:
        out += bytes_field(5, encode_uuid(key.cluster_id))
    for scope_bytes in scopes:
        out += bytes_field(6, scope_bytes)
    out += varint_field(7, kv_count)
    for cluster in key.cluster_ids:
        out += bytes_field(8, encode_uuid(cluster))
    if key.nonce_group is not None:
        out += varint_field(9, key.nonce_group)
    if key.nonce is not None:
        out += varint_field(10, key.nonce)
    if key.orig_sequence is not None:
        out += varint_field(11, key.orig_sequence)
    for attribute in attributes:
        out += bytes_field(12, attribute)
    return bytes(out)


class _RawKey:
    """Fields of a WALKey as they arrive, before dictionary decoding."""

    __slots__ = (
        "attributes",
        "cluster_id",
        "cluster_ids",
        "count",
        "nonce",
        "nonce_group",
        "orig",
        "region",
        "scopes",
        "sequence",
        "table",
        "write_time",
    )

    def __init__(self) -> None:
        self.region: bytes | None = None
        self.table: bytes | None = None
        self.sequence: int | None = None
        self.write_time: int | None = None
        self.count = 0
        self.scopes: list[bytes] = []
        self.cluster_ids: list[uuid.UUID] = []
        self.cluster_id: uuid.UUID | None = None
        self.nonce_group: int | None = None
        self.nonce: int | None = None
        self.orig: int | None = None
        self.attributes: list[bytes] = []


def _scan_key(buf: bytes, pos: int, end: int) -> _RawKey:  # noqa: C901, PLR0912
    """One pass over the WALKey fields (the reader's hot path: no generic field iterator)."""
    raw = _RawKey()
    while pos < end:
        tag = buf[pos]
        if tag < 0x80:
            pos += 1
        else:
            tag, pos = decode_varint(buf, pos, end)
        field, wire_type = tag >> 3, tag & 7
        if wire_type == LENGTH_DELIMITED and field in (1, 2, 5, 6, 8, 12):
            length = buf[pos] if pos < end else 0x80
            if length < 0x80:
                pos += 1
            else:
                length, pos = decode_varint(buf, pos, end)
            if length > 0x7FFFFFFF:
                raise ProtobufError(f"WALKey field {field} length {length} is implausible")
            stop = pos + length
            if stop > end:
                raise ProtobufError(f"WALKey field {field} runs past the end of the key")
            value = buf[pos:stop]
            pos = stop
            if field == 1:
                raw.region = value
            elif field == 2:
                raw.table = value
            elif field == 6:
                raw.scopes.append(value)
            elif field == 8:
                raw.cluster_ids.append(decode_uuid(value))
            elif field == 12:
                raw.attributes.append(value)
            else:
                raw.cluster_id = decode_uuid(value)
        elif wire_type == VARINT and 3 <= field <= 11 and field not in (5, 6, 8):
            value_int, pos = decode_varint(buf, pos, end)
            if field == 3:
                raw.sequence = value_int
            elif field == 4:
                raw.write_time = value_int
            elif field == 7:
                raw.count = value_int & 0xFFFFFFFF
            elif field == 9:
                raw.nonce_group = to_int64(value_int)
            elif field == 10:
                raw.nonce = to_int64(value_int)
            else:
                raw.orig = to_int64(value_int)
        elif 1 <= field <= 12 or field == 0:
            raise ProtobufError(f"WALKey field {field} has unexpected wire type {wire_type}")
        else:
            pos = skip_field(buf, pos, end, wire_type)
    return raw


def _decode_scope(data: bytes) -> tuple[bytes, int]:
    n = len(data)
    if n >= 4 and data[0] == 0x0A and data[1] == n - 4 and data[n - 2] == 0x10 and data[-1] < 0x80:
        return data[2 : n - 2], data[-1]  # the usual {family, scope_type} in field order
    m = Message(data, "FamilyScope")
    return m.req_bytes(1, "family"), m.req_int(2, "scope_type")


def _decode_attribute(data: bytes) -> tuple[str, bytes]:
    m = Message(data, "Attribute")
    return m.req_str(1, "key"), m.req_bytes(2, "value")


def _uncompress(data: bytes, dictionary: LruDictionary) -> bytes:
    if len(data) == 2 and data[0] < 0x80:  # a reference: the usual case (get, inlined)
        idx = data[0] << 8 | data[1]
        entries = dictionary._entries
        if idx < len(entries):
            dictionary._order.move_to_end(idx)
            return entries[idx]
    value, pos = read_item(data, 0, len(data), dictionary)
    if pos != len(data):
        raise ProtobufError(f"{len(data) - pos} stray bytes after a dictionary item")
    return value


def _fast_tail(
    buf: bytes, p: int, end: int
) -> tuple[list[tuple[bytes, int]], int, int | None, int | None, int | None] | None:
    """Fields 6, 7, 9, 10, 11 after the four required ones, in the usual forms: scopes as
    ``{1 family, 2 scope_type}`` with one-byte lengths, plain varints. None when anything
    else comes (the general parser then decides)."""
    scopes: list[tuple[bytes, int]] = []
    count = 0
    nonce_group = nonce = orig = None
    while p < end:
        tag = buf[p]
        if tag == 0x32:  # FamilyScope, as _decode_scope's usual form
            if p + 2 >= end:
                return None
            n = buf[p + 1]
            s = p + 2
            p = s + n
            if (
                n < 4
                or n >= 0x80
                or p > end
                or buf[s] != 0x0A
                or buf[s + 1] != n - 4
                or buf[p - 2] != 0x10
                or buf[p - 1] >= 0x80
            ):
                return None
            scopes.append((buf[s + 2 : p - 2], buf[p - 1]))
            continue
        if tag not in (0x38, 0x48, 0x50, 0x58) or p + 1 >= end:
            return None
        value = buf[p + 1]
        if value < 0x80:
            p += 2
        else:
            value, p = scan_varint(buf, p + 1, end, 9)  # 63 bits at most: to_int64 not needed
            if value < 0:
                return None
        if tag == 0x38:
            count = value & 0xFFFFFFFF
        elif tag == 0x48:
            nonce_group = value
        elif tag == 0x50:
            nonce = value
        else:
            orig = value
    return scopes, count, nonce_group, nonce, orig


def _fast_key(
    buf: bytes, pos: int, end: int, dicts: KeyDictionaries | None
) -> tuple[WalKey, int] | None:
    """The WALKey in its usual layout (fields 1, 2, 3, 4 in order with one-byte lengths,
    then only 6, 7, 9, 10, 11 in usual forms), or None to leave it to the general parser.

    Nothing is changed (no dictionary touched) before the whole key is known to fit."""
    n = buf[pos + 1] if end - pos >= 10 else 0x80
    p = pos + 2 + n
    if n >= 0x80 or buf[pos] != 0x0A or p + 2 > end or buf[p] != 0x12:
        return None
    region = buf[pos + 2 : p]
    n = buf[p + 1]
    s = p + 2
    p = s + n
    if n >= 0x80 or p + 2 > end or buf[p] != 0x18:
        return None
    table = buf[s:p]
    sequence = buf[p + 1]
    if sequence < 0x80:
        p += 2
    else:
        sequence, p = scan_varint(buf, p + 1, end, 9)  # longer ones: the general parser
    if sequence < 0 or p + 2 > end or buf[p] != 0x20:
        return None
    # write_time: milliseconds since the epoch take 6 varint bytes until 2109
    b = buf[p + 6] if p + 7 <= end else 0x80
    if b < 0x80 and buf[p + 5] >= 0x80:
        write_time = (
            b << 35
            | (buf[p + 5] & 0x7F) << 28
            | (buf[p + 4] & 0x7F) << 21
            | (buf[p + 3] & 0x7F) << 14
            | (buf[p + 2] & 0x7F) << 7
            | (buf[p + 1] & 0x7F)
        )
        p += 7
        if (buf[p - 6] & buf[p - 5] & buf[p - 4] & buf[p - 3]) < 0x80:
            write_time, p = scan_varint(buf, p - 6, end, 9)  # the varint ended earlier
    else:
        write_time, p = scan_varint(buf, p + 1, end, 9)  # negative: leave it to the parser
    # the usual tail in place: one FamilyScope {family, scope_type}, then a one-byte count
    n = buf[p + 1] if write_time >= 0 and p + 2 < end else 0
    s = p + 2 + n  # after the FamilyScope
    if (
        4 <= n < 0x80
        and s + 2 == end
        and buf[p] == 0x32
        and buf[s] == 0x38
        and buf[s + 1] < 0x80
        and buf[p + 2] == 0x0A
        and buf[p + 3] == n - 4
        and buf[s - 2] == 0x10
        and buf[s - 1] < 0x80
    ):
        family = buf[p + 4 : s - 2]
        if dicts is not None:
            region = _uncompress(region, dicts.region)
            table = _uncompress(table, dicts.table)
            family = _uncompress(family, dicts.family)
        scopes = ((family, buf[s - 1]),)
        fields = (region, table, sequence, write_time, scopes, (), None, None, None, (), None)
        return _new_tuple(WalKey, fields), buf[s + 1]
    tail = _fast_tail(buf, p, end) if write_time >= 0 else None
    if tail is None:
        return None
    scope_list, count, nonce_group, nonce, orig = tail
    if dicts is not None:
        region = _uncompress(region, dicts.region)
        table = _uncompress(table, dicts.table)
        family_dict = dicts.family
        scope_list = [(_uncompress(f, family_dict), scope) for f, scope in scope_list]
    key = _new_tuple(
        WalKey,
        (
            region,
            table,
            sequence,
            write_time,
            tuple(scope_list),
            (),
            None if nonce_group is None else to_int64(nonce_group),
            None if nonce is None else to_int64(nonce),
            None if orig is None else to_int64(orig),
            (),
            None,
        ),
    )
    return key, count


def decode_key(buf: bytes, pos: int, end: int, dicts: KeyDictionaries | None) -> tuple[WalKey, int]:
    """Parse the WALKey in ``buf[pos:end]``; return it with its following_kv_count.

    Raises ProtobufError (or IndexError/ValueError from a dictionary item) when malformed.
    """
    fast = _fast_key(buf, pos, end, dicts)
    if fast is not None:
        return fast
    raw = _scan_key(buf, pos, end)
    if raw.region is None or raw.table is None or raw.sequence is None or raw.write_time is None:
        missing = [
            name
            for name, value in (
                ("encoded_region_name", raw.region),
                ("table_name", raw.table),
                ("log_sequence_number", raw.sequence),
                ("write_time", raw.write_time),
            )
            if value is None
        ]
        raise ProtobufError(f"WALKey lacks required field(s) {', '.join(missing)}")
    region, table = raw.region, raw.table
    scopes = tuple(_decode_scope(s) for s in raw.scopes)
    attributes = tuple(_decode_attribute(a) for a in raw.attributes)
    if dicts is not None:
        region = _uncompress(region, dicts.region)
        table = _uncompress(table, dicts.table)
        scopes = tuple((_uncompress(f, dicts.family), s) for f, s in scopes)
        attributes = tuple((k, _uncompress(v, dicts.table)) for k, v in attributes)
    key = WalKey(
        region,
        table,
        raw.sequence,
        raw.write_time,
        scopes,
        tuple(raw.cluster_ids),
        raw.nonce_group,
        raw.nonce,
        raw.orig,
        attributes,
        raw.cluster_id,
    )
    return key, raw.count


def kv_count_only(buf: bytes, pos: int, end: int) -> int:
    """following_kv_count of the WALKey in ``buf[pos:end]`` without decoding the rest
    (for skipping entries of an uncompressed file)."""
    count = 0
    while pos < end:
        tag, pos = decode_varint(buf, pos, end)
        field, wire_type = tag >> 3, tag & 7
        if field == 7 and wire_type == VARINT:
            count, pos = decode_varint(buf, pos, end)
            count &= 0xFFFFFFFF
        elif field == 0:
            raise ProtobufError("field number 0 in a WALKey")
        else:
            pos = skip_field(buf, pos, end, wire_type)
    return count


# --- can these bytes begin a WALKey? (the reader's rare "looks cut off" path) --------------
#
# A writer cut off mid-entry leaves a prefix of a WALKey as HBase serialises it: protobuf-java's
# generated ``writeTo`` emits the fields in ascending number order, a non-repeated field at
# most once, the required ones (1-4 of WALKey, both fields of UUID, FamilyScope and
# Attribute) always and first; every length-delimited field ends inside its message, and in a
# compressed file fields 1 and 2 hold exactly one dictionary item (``Dictionary.write``:
# FF + varint length + literal, or a 2-byte reference to a slot already filled, since the
# dictionaries are in step with the writer's up to this entry). WAL.proto's WALKey has
# fields 1-12 on every branch up to master. An encoded region name has at most 32 bytes (the
# MD5 hex of new-style names, or the decimal JenkinsHash of old-style ones and hbase:meta's:
# ``RegionInfo.encodeRegionName``, hbase-client). Anything else after a length is no key.


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


def encode_trailer_message() -> bytes:
    """The WALTrailer message: no fields, so no bytes."""
    return b""


def varint_prefix(message: bytes) -> bytes:
    """The varint length prefix of ``writeDelimitedTo``."""
    return encode_varint(len(message))
