"""The WALKey message of each WAL entry (``WAL.proto``): encoding, decoding, skipping.

WALKey: 1 encoded_region_name bytes*, 2 table_name bytes*, 3 log_sequence_number uint64,
4 write_time uint64 (1-4 required), 5 cluster_id UUID (deprecated), 6 scopes FamilyScope
{1 family bytes*, 2 scope_type enum}, 7 following_kv_count uint32, 8 cluster_ids UUID
{1 least_sig_bits, 2 most_sig_bits}, 9 nonceGroup, 10 nonce, 11 orig_sequence_number uint64,
12 extended_attributes Attribute {1 key string, 2 value bytes*}.
Fields marked * hold a dictionary item instead of raw bytes when the file is compressed;
the update order is region, table, scope families, attribute values (``WALKeyImpl``).

The reader decodes every key, so ``decode_key`` tries the usual layout first with the
fields' bytes read in place (``_fast_key``), then one pass over any layout (``_scan_key``);
the small nested messages go through ``protobuf.Message``. Whether a cut-off tail can begin
a WALKey is ``keyprefix.py``'s question.
"""

from __future__ import annotations

import uuid
from typing import NamedTuple

from hbase_migrate.wal.dictionary import LruDictionary, read_item, write_item
from hbase_migrate.wal.messages import decode_uuid, encode_uuid
from hbase_migrate.wal.model import WalKey
from hbase_migrate.wal.protobuf import (
    LENGTH_DELIMITED,
    VARINT,
    Message,
    ProtobufError,
    bytes_field,
    decode_varint,
    scan_varint,
    skip_field,
    string_field,
    to_int64,
    varint_field,
)

_new_tuple = tuple.__new__


class KeyDictionaries(NamedTuple):
    """The dictionaries a compressed WALKey uses (FAMILY is shared with the cells)."""

    region: LruDictionary
    table: LruDictionary
    family: LruDictionary


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
            value, p = scan_varint(buf, p + 1, end, 9)  # longer ones: the general parser
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
