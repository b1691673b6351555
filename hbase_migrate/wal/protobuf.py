"""Minimal proto2 wire-format helpers: varints, field keys, length-delimited fields.

Only what the WAL messages need; no schema machinery. Wire format (protobuf encoding)::

    key     = varint (field_number << 3 | wire_type)
    type 0  varint   base-128, least significant group first, high bit = more follows
    type 1  fixed64  8 bytes little-endian
    type 2  bytes    varint length, then that many bytes
    type 5  fixed32  4 bytes little-endian

Decoders take ``(buf, pos[, end])`` and return ``(value, new_pos)``; every malformed or
cut-off input raises ``ProtobufError`` (a ``ValueError``) so callers can add file context.
``scan_varint`` is the one varint loop (the others here build on it; ``cells.py``'s hot loop
inlines only the one- and two-byte cases). A message is read in one way: ``Message`` collects
its fields and hands out typed values by field number (the WALKey's own scanner, on the
reader's hot path, is the one exception).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TypeVar

from hbase_migrate.errors import HBaseMigrateError

VARINT = 0
FIXED64 = 1
LENGTH_DELIMITED = 2
FIXED32 = 5

UINT64_MASK = (1 << 64) - 1
VARINT_CUT = -1  # scan_varint: the data ends inside the varint
VARINT_TOO_LONG = -2  # scan_varint: more bytes than allowed


class ProtobufError(HBaseMigrateError, ValueError):
    """Bytes that are not a valid protobuf encoding (or end too early)."""


_ONE_BYTE = tuple(bytes((i,)) for i in range(0x80))


def encode_varint(value: int) -> bytes:
    """Encode a non-negative integer (or a negative int64, as 10 bytes) as a varint."""
    if 0 <= value < 0x80:
        return _ONE_BYTE[value]
    if value < 0:
        value &= UINT64_MASK
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def scan_varint(buf: bytes, pos: int, end: int, max_bytes: int = 10) -> tuple[int, int]:
    """The one varint loop: a varint of at most ``max_bytes`` bytes at ``pos``, below
    ``end``, without raising. Returns ``(value, new_pos)``, or ``(VARINT_CUT, pos)`` when the
    data ends inside it, ``(VARINT_TOO_LONG, pos)`` when it runs on past ``max_bytes``. The
    callers check the value's range and raise their own errors (a cut-off cell is an
    IndexError to the reader, a malformed message a ProtobufError)."""
    result = 0
    shift = 0
    i = pos
    stop = pos + max_bytes
    if stop > end:  # noqa: PLR1730  (min() costs a call on the WALKey fast path)
        stop = end
    while i < stop:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7
    return (VARINT_TOO_LONG if end - pos >= max_bytes else VARINT_CUT), pos


def varint_cut_off(buf: bytes, pos: int) -> bool:
    """Whether ``buf`` ends inside a varint at ``pos`` (the tail of a file still written)."""
    return scan_varint(buf, pos, len(buf))[0] == VARINT_CUT


def decode_varint(buf: bytes, pos: int, end: int | None = None) -> tuple[int, int]:
    """Decode a varint at ``pos``; the value is at most 64 bits."""
    if end is None:
        end = len(buf)
    if pos < end and buf[pos] < 0x80:
        return buf[pos], pos + 1
    value, new_pos = scan_varint(buf, pos, end)
    if value > UINT64_MASK:
        raise ProtobufError(f"varint at {pos} exceeds 64 bits")
    if value >= 0:
        return value, new_pos
    if value == VARINT_TOO_LONG:
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
        number, wire_type, value, pos = _field_at(buf, pos, end)
        yield number, wire_type, value


def _field_at(buf: bytes, pos: int, end: int) -> tuple[int, int, int | bytes, int]:
    """The field at ``pos`` and the position after it (one-byte keys, varints and lengths
    read inline: messages are decoded by the thousand, a Multi's actions)."""
    key = buf[pos]
    if key < 0x80:
        pos += 1
    else:
        key, pos = decode_varint(buf, pos, end)
    number, wire_type = key >> 3, key & 7
    if number == 0:
        raise ProtobufError(f"field number 0 at {pos}")
    value: int | bytes
    if wire_type == LENGTH_DELIMITED:
        if pos < end and buf[pos] < 0x80:
            length, pos = buf[pos], pos + 1
        else:
            length, pos = decode_varint32(buf, pos, end)
        if pos + length > end:
            raise ProtobufError(f"field {number} at {pos} runs past the end of its message")
        return number, wire_type, bytes(buf[pos : pos + length]), pos + length
    if wire_type == VARINT:
        if pos < end and buf[pos] < 0x80:
            return number, wire_type, buf[pos], pos + 1
        value, pos = decode_varint(buf, pos, end)
        return number, wire_type, value, pos
    start = pos
    pos = skip_field(buf, pos, end, wire_type)
    return number, wire_type, int.from_bytes(buf[start:pos], "little"), pos


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


_T = TypeVar("_T")


def _fields_of(buf: bytes) -> dict[int, list[tuple[int, int | bytes]]]:
    """``iter_fields`` gathered by field number, in one loop."""
    fields: dict[int, list[tuple[int, int | bytes]]] = {}
    pos, end = 0, len(buf)
    while pos < end:
        number, wire_type, value, pos = _field_at(buf, pos, end)
        found = fields.get(number)
        if found is None:
            fields[number] = [(wire_type, value)]
        else:
            found.append((wire_type, value))
    return fields


class Message:
    """The fields of one message, read by number: the last value of a field counts, as in
    proto2, and ``repeated`` gives every value. Each accessor checks the wire types of the
    values it reads; unknown fields are kept unread. ``what`` names the message in errors
    (``"<what> lacks required field <name>"``)."""

    __slots__ = ("fields", "what")

    def __init__(self, data: bytes, what: str) -> None:
        self.what = what
        self.fields = _fields_of(data)

    def __contains__(self, number: int) -> bool:
        return number in self.fields

    def _get(
        self, number: int, name: str, required: bool, read: Callable[[int, int, int | bytes], _T]
    ) -> _T | None:
        values = self.fields.get(number)
        if not values:
            if required:
                raise ProtobufError(f"{self.what} lacks required field {name or number}")
            return None
        return read(number, *values[-1])

    def opt_int(self, number: int, name: str = "") -> int | None:
        """A varint field's value (unsigned), or None when absent."""
        return self._get(number, name, False, as_int)

    def req_int(self, number: int, name: str) -> int:
        return _present(self._get(number, name, True, as_int))

    def opt_bytes(self, number: int, name: str = "") -> bytes | None:
        """A length-delimited field's bytes, or None when absent."""
        return self._get(number, name, False, as_bytes)

    def req_bytes(self, number: int, name: str) -> bytes:
        return _present(self._get(number, name, True, as_bytes))

    def opt_str(self, number: int, name: str = "") -> str | None:
        """A string field (see ``as_str``), or None when absent."""
        return self._get(number, name, False, as_str)

    def req_str(self, number: int, name: str) -> str:
        return _present(self._get(number, name, True, as_str))

    def repeated(self, number: int) -> tuple[bytes, ...]:
        """Every value of a repeated length-delimited field, in order."""
        return tuple(as_bytes(number, *value) for value in self.fields.get(number, ()))

    def strs(self, number: int) -> tuple[str, ...]:
        """Every value of a repeated string field, in order."""
        return tuple(as_str(number, *value) for value in self.fields.get(number, ()))

    def msgs(self, number: int, parse: Callable[[bytes], _T]) -> tuple[_T, ...]:
        """Every value of a repeated message field, each parsed by ``parse``."""
        return tuple(parse(data) for data in self.repeated(number))


def _present(value: _T | None) -> _T:
    assert value is not None  # a required field's accessor raises when it is absent
    return value
