"""CRC32C and Hadoop vlongs against published vectors and hand-encoded bytes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hbase_migrate.hfile.checksum import CHECKSUM_CRC32C, CRC32C, crc32c, first_bad_chunk
from hbase_migrate.hfile.keyvalue import read_vlong
from hbase_migrate.wal.cells import CellCorruptError


@pytest.fixture(params=["compiled", "python"])
def both_crc32c(request: pytest.FixtureRequest) -> Iterator[None]:
    """The compiled CRC32C and the reference, each in turn."""
    before = CRC32C.implementation()
    if request.param == "compiled" and CRC32C.module is None:
        pytest.skip("the compiled CRC32C is not built (make setup)")
    CRC32C.use(request.param)
    yield
    CRC32C.use(before)


@pytest.mark.usefixtures("both_crc32c")
@pytest.mark.parametrize(("data", "expected"), [
    (b"123456789", 0xE3069283),  # the CRC-32C check value
    (bytes(32), 0x8A9136AA),  # RFC 3720 B.4
    (b"\xff" * 32, 0x62A8AB43),
    (bytes(range(32)), 0x46DD794E),
    (bytes(range(31, -1, -1)), 0x113FDB5C),  # RFC 3720 B.4
])
def test_crc32c_vectors(data: bytes, expected: int) -> None:
    assert crc32c(data) == expected


def crc32c_by_definition(data: bytes) -> int:
    """CRC32C bit by bit: reflected polynomial 0x82F63B78, initial value and xor-out ~0."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


@pytest.mark.usefixtures("both_crc32c")
@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 1000, 4099])
def test_crc32c_of_every_length_tail(size: int) -> None:
    data = bytes((i * 131 + 7) % 256 for i in range(size))
    assert crc32c(data) == crc32c_by_definition(data)
    assert crc32c(memoryview(data)) == crc32c_by_definition(data)


@pytest.mark.usefixtures("both_crc32c")
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
