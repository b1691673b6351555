"""CRC32C and Hadoop vlongs against published vectors and hand-encoded bytes."""

from __future__ import annotations

import pytest

from hbase_migrate.hfile.checksum import CHECKSUM_CRC32C, crc32c, first_bad_chunk
from hbase_migrate.hfile.keyvalue import read_vlong
from hbase_migrate.wal.cells import CellCorruptError


@pytest.mark.parametrize(("data", "expected"), [
    (b"123456789", 0xE3069283),  # the CRC-32C check value
    (bytes(32), 0x8A9136AA),  # RFC 3720 B.4
    (b"\xff" * 32, 0x62A8AB43),
    (bytes(range(32)), 0x46DD794E),
])
def test_crc32c_vectors(data: bytes, expected: int) -> None:
    assert crc32c(data) == expected


def test_chunked_checksums_find_the_bad_chunk() -> None:
    data = bytes(32) + b"\xff" * 32 + b"123456789"
    sums = bytes.fromhex("8A9136AA 62A8AB43 E3069283")  # chunks of 32 bytes, big-endian
    assert first_bad_chunk(data, sums, CHECKSUM_CRC32C, 32) is None
    assert first_bad_chunk(data[:-1] + b"0", sums, CHECKSUM_CRC32C, 32) == 2


@pytest.mark.parametrize(("encoded", "value"), [
    ("00", 0), ("7f", 127), ("90", -112), ("ff", -1),
    ("8f 80", 128),  # -113: one byte follows
    ("8e 01 2c", 300),  # -114: two bytes follow
    ("87 70", -113),  # -121: negative, one byte follows holding ~value
    ("88 7f ff ff ff ff ff ff ff", (1 << 63) - 1),  # -120: eight bytes, Long.MAX_VALUE
    ("80 7f ff ff ff ff ff ff ff", -(1 << 63)),  # -128: negative, Long.MIN_VALUE
])
def test_hadoop_vlong(encoded: str, value: int) -> None:
    buf = bytes.fromhex(encoded)
    assert read_vlong(buf, 0, len(buf)) == (value, len(buf))


def test_cut_vlong_is_corrupt() -> None:
    with pytest.raises(CellCorruptError):
        read_vlong(bytes.fromhex("8e 01"), 0, 2)
