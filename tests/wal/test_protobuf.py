"""The proto2 wire helpers."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hbase_migrate.wal.messages import decode_uuid, encode_uuid
from hbase_migrate.wal.protobuf import (
    VARINT_CUT,
    VARINT_TOO_LONG,
    Message,
    ProtobufError,
    bytes_field,
    decode_varint,
    decode_varint32,
    encode_varint,
    iter_fields,
    scan_varint,
    string_field,
    to_int64,
    varint_field,
)


def test_varint_vectors() -> None:
    assert encode_varint(0) == b"\x00"
    assert encode_varint(300) == bytes.fromhex("ac02")
    assert encode_varint(-1) == bytes.fromhex("ffffffffffffffffff01")
    assert decode_varint(bytes.fromhex("ac02"), 0) == (300, 2)
    assert to_int64(decode_varint(bytes.fromhex("ffffffffffffffffff01"), 0)[0]) == -1


@settings(max_examples=200)
@given(st.integers(0, 2**64 - 1))
def test_varint_round_trip(value: int) -> None:
    data = encode_varint(value)
    assert decode_varint(data, 0) == (value, len(data))


def test_varint_errors() -> None:
    with pytest.raises(ProtobufError, match="cut off"):
        decode_varint(b"\x80\x80", 0)
    with pytest.raises(ProtobufError, match="10 bytes"):
        decode_varint(b"\x80" * 11, 0)
    with pytest.raises(ProtobufError, match="32-bit"):
        decode_varint32(encode_varint(2**31), 0)


def test_fields() -> None:
    data = (
        varint_field(1, 5) + bytes_field(2, b"ab") + string_field(3, "é") + b"\x25\x01\x02\x03\x04"
    )
    assert list(iter_fields(data)) == [
        (1, 0, 5),
        (2, 2, b"ab"),
        (3, 2, "é".encode()),
        (4, 5, 0x04030201),
    ]
    with pytest.raises(ProtobufError):
        list(iter_fields(bytes_field(2, b"ab")[:-1]))
    with pytest.raises(ProtobufError, match="wire type"):
        list(iter_fields(b"\x0f"))


def test_uuid_least_significant_bits_first() -> None:
    value = uuid.UUID(int=(1 << 64) | 2)  # most = 1, least = 2
    assert encode_uuid(value) == b"\x08\x02\x10\x01"
    assert decode_uuid(b"\x08\x02\x10\x01") == value


def test_scan_varint_reports_cut_and_too_long_without_raising() -> None:
    assert scan_varint(b"\xac\x02", 0, 2) == (300, 2)
    assert scan_varint(b"\x80\x80", 0, 2) == (VARINT_CUT, 0)
    assert scan_varint(b"\x80" * 5, 0, 5, 5) == (VARINT_TOO_LONG, 0)
    assert scan_varint(b"\x80" * 4, 0, 4, 5) == (VARINT_CUT, 0)
    assert scan_varint(b"\x00\xac\x02", 1, 2) == (VARINT_CUT, 1)  # ``end`` bounds it


def test_message_reads_the_last_value_and_checks_wire_types() -> None:
    data = varint_field(1, 5) + varint_field(1, 6) + bytes_field(2, b"a") + varint_field(2, 1)
    m = Message(data, "Test")
    assert m.opt_int(1) == 6 and m.opt_int(3) is None
    with pytest.raises(ProtobufError, match="wire type"):
        m.opt_bytes(2)  # the last value of field 2 is a varint
    with pytest.raises(ProtobufError, match="wire type"):
        m.repeated(2)  # a repeated field whose values disagree: no AssertionError
    with pytest.raises(ProtobufError, match="Test lacks required field name"):
        m.req_str(4, "name")
