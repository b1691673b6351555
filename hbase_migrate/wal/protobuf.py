"""Minimal proto2 wire-format helpers: varints, field keys, length-delimited fields.

Only what the WAL messages need; no schema machinery. Wire format (protobuf encoding)::

    key     = varint (field_number << 3 | wire_type)
    type 0  varint   base-128, least significant group first, high bit = more follows
    type 1  fixed64  8 bytes little-endian
    type 2  bytes    varint length, then that many bytes
    type 5  fixed32  4 bytes little-endian

Decoders take ``(buf, pos[, end])`` and return ``(value, new_pos)``; every malformed or
cut-off input raises ``ProtobufError`` (a ``ValueError``) so callers can add file context.
"""

from __future__ import annotations

from collections.abc import Iterator

from hbase_migrate.errors import HBaseMigrateError

VARINT = 0
FIXED64 = 1
LENGTH_DELIMITED = 2
FIXED32 = 5

_MAX_VARINT_BYTES = 10
_UINT64_MASK = (1 << 64) - 1


class ProtobufError(HBaseMigrateError, ValueError):
    """Bytes that are not a valid protobuf encoding (or end too early)."""


def encode_varint(value: int) -> bytes:
    """Encode a non-negative integer (or a negative int64, as 10 bytes) as a varint."""
    if value < 0:
        value &= _UINT64_MASK
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def decode_varint(buf: bytes, pos: int, end: int | None = None) -> tuple[int, int]:
    """Decode a varint at ``pos``; the value is at most 64 bits."""
    if end is None:
        end = len(buf)
    if pos >= end:
        raise ProtobufError(f"varint at {pos} is cut off")
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    result = b & 0x7F
    shift = 7
    i = pos + 1
    stop = min(end, pos + _MAX_VARINT_BYTES)
    while i < stop:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            if result > _UINT64_MASK:
                raise ProtobufError(f"varint at {pos} exceeds 64 bits")
            return result, i
        shift += 7
    if end - pos >= _MAX_VARINT_BYTES:
        raise ProtobufError(f"varint at {pos} is longer than 10 bytes")
    raise ProtobufError(f"varint at {pos} is cut off")


def decode_varint32(buf: bytes, pos: int, end: int | None = None) -> tuple[int, int]:
    """Decode a varint that must fit a non-negative Java int (a length or count)."""
    if pos < len(buf) and buf[pos] < 0x80 and (end is None or pos < end):
        return buf[pos], pos + 1
    value, new_pos = decode_varint(buf, pos, end)
    if value > 0x7FFFFFFF:
        raise ProtobufError(f"length {value} at {pos} does not fit a 32-bit int")
    return value, new_pos


def to_int64(value: int) -> int:
    """Reinterpret a decoded varint as a signed 64-bit integer (proto ``int64``)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def skip_field(buf: bytes, pos: int, end: int, wire_type: int) -> int:
    """Skip the value of an unknown field; return the position after it."""
    if wire_type == VARINT:
        return decode_varint(buf, pos, end)[1]
    if wire_type == LENGTH_DELIMITED:
        length, pos = decode_varint32(buf, pos, end)
        new_pos = pos + length
    elif wire_type == FIXED64:
        new_pos = pos + 8
    elif wire_type == FIXED32:
        new_pos = pos + 4
    else:
        raise ProtobufError(f"unsupported wire type {wire_type} at {pos}")
    if new_pos > end:
        raise ProtobufError(f"field at {pos} runs past the end of its message")
    return new_pos


def iter_fields(
    buf: bytes, pos: int = 0, end: int | None = None
) -> Iterator[tuple[int, int, int | bytes]]:
    """Yield ``(field_number, wire_type, value)``: an int for varints and fixed fields,
    the bytes for length-delimited fields."""
    if end is None:
        end = len(buf)
    while pos < end:
        key, pos = decode_varint(buf, pos, end)
        field, wire_type = key >> 3, key & 7
        if field == 0:
            raise ProtobufError(f"field number 0 at {pos}")
        value: int | bytes
        if wire_type == VARINT:
            value, pos = decode_varint(buf, pos, end)
        elif wire_type == LENGTH_DELIMITED:
            length, pos = decode_varint32(buf, pos, end)
            if pos + length > end:
                raise ProtobufError(f"field {field} at {pos} runs past the end of its message")
            value = bytes(buf[pos : pos + length])
            pos += length
        else:
            start = pos
            pos = skip_field(buf, pos, end, wire_type)
            value = int.from_bytes(buf[start:pos], "little")
        yield field, wire_type, value


def field_key(field: int, wire_type: int) -> bytes:
    """The encoded key of a field."""
    return encode_varint(field << 3 | wire_type)


def varint_field(field: int, value: int) -> bytes:
    """A complete varint field (bool, enum, uint32, uint64, int64)."""
    return encode_varint(field << 3) + encode_varint(int(value))


def bytes_field(field: int, value: bytes) -> bytes:
    """A complete length-delimited field (bytes, string, embedded message)."""
    return encode_varint(field << 3 | LENGTH_DELIMITED) + encode_varint(len(value)) + value


def string_field(field: int, value: str) -> bytes:
    """A complete string field (UTF-8)."""
    return bytes_field(field, value.encode("utf-8", "surrogateescape"))


def delimited(message: bytes) -> bytes:
    """``writeDelimitedTo``: the varint length, then the message."""
    return encode_varint(len(message)) + message


def expect_wire_type(field: int, wire_type: int, expected: int) -> None:
    """Raise unless a known field arrived with the wire type its schema gives it."""
    if wire_type != expected:
        raise ProtobufError(f"field {field} has wire type {wire_type}, expected {expected}")


def as_int(field: int, wire_type: int, value: int | bytes) -> int:
    """The value of a varint field, checking the wire type."""
    expect_wire_type(field, wire_type, VARINT)
    assert isinstance(value, int)
    return value


def as_bytes(field: int, wire_type: int, value: int | bytes) -> bytes:
    """The value of a length-delimited field, checking the wire type."""
    expect_wire_type(field, wire_type, LENGTH_DELIMITED)
    assert isinstance(value, bytes)
    return value


def as_str(field: int, wire_type: int, value: int | bytes) -> str:
    """The value of a string field. proto2 does not validate UTF-8, so invalid bytes are
    kept as surrogate escapes and ``string_field`` writes them back unchanged."""
    return as_bytes(field, wire_type, value).decode("utf-8", "surrogateescape")
