"""The proto2 wire helpers."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hbase_migrate.wal.messages import decode_uuid, encode_uuid
from hbase_migrate.wal.protobuf import (
    ProtobufError,
    bytes_field,
    decode_varint,
    decode_varint32,
    encode_varint,
    iter_fields,
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
