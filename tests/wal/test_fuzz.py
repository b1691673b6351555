"""Damaged WALs: a WalError or a clean end, never another exception, never a hang."""

from __future__ import annotations

import contextlib
import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wal_damage import HEADER_ENDS, SAMPLES, damaged

from hbase_migrate.errors import WalCorruptError, WalError
from hbase_migrate.wal.reader import WalReader

pytestmark = pytest.mark.usefixtures("both_hot_loops")  # the reference and the compiled hot loops

FUZZ = settings(max_examples=300, deadline=2000, suppress_health_check=[HealthCheck.too_slow])


def _read(data: bytes) -> None:
    reader = WalReader(io.BytesIO(data), name="fuzz.wal")
    for _ in reader:
        pass
    assert reader.end_reason in {"trailer", "eof", "truncated", "partial_trailer"}
    assert reader.end_offset <= len(data)


@FUZZ
@given(damaged())
def test_damaged_edits(case: tuple[bytes, int]) -> None:
    data, _ = case
    try:
        _read(data)
    except WalCorruptError as exc:
        assert exc.file == "fuzz.wal" and 0 <= exc.offset <= len(data)


@FUZZ
@given(st.integers(0, len(SAMPLES) - 1), st.data())
def test_damaged_anywhere(i: int, data: st.DataObject) -> None:
    raw = bytearray(SAMPLES[i])
    pos = data.draw(st.integers(0, len(raw) - 1))
    raw[pos] ^= data.draw(st.integers(1, 255))
    with contextlib.suppress(WalError):  # the header may now announce something refused
        _read(bytes(raw))


@settings(max_examples=200, deadline=2000)
@given(st.binary(max_size=200))
def test_random_bytes_after_header(tail: bytes) -> None:
    with contextlib.suppress(WalCorruptError):
        _read(SAMPLES[0][: HEADER_ENDS[0]] + tail)
    with contextlib.suppress(WalCorruptError):
        _read(SAMPLES[2][: HEADER_ENDS[2]] + tail)


def test_huge_lengths_are_not_allocated() -> None:
    head = SAMPLES[0][: HEADER_ENDS[0]]
    # a key claiming 2 GB (HBase's limit, a Java int) over bytes that begin no WALKey: a
    # damaged length, refused without reading or allocating it; a length beyond a Java int
    # is corruption whatever follows
    with pytest.raises(WalCorruptError, match=r"2147483647-byte WALKey .* damaged length"):
        list(WalReader(io.BytesIO(head + b"\xff\xff\xff\xff\x07" + b"x" * 10)))
    with pytest.raises(WalCorruptError, match="does not fit a 32-bit int"):
        list(WalReader(io.BytesIO(head + b"\x80\x80\x80\x80\x08" + b"\x0a\x20" + b"r" * 10)))
    # a key claiming more than the file holds (but plausible), cut inside its first field
    # (encoded_region_name, 32 bytes): a cut-off tail
    reader = WalReader(io.BytesIO(head + b"\xff\xff\x03" + b"\x0a\x20" + b"r" * 10))
    assert list(reader) == [] and reader.end_reason == "truncated"
    # ...but bytes that cannot begin a WALKey after such a length: a damaged length
    with pytest.raises(WalCorruptError, match="damaged length"):
        list(WalReader(io.BytesIO(head + b"\xff\xff\x03" + b"x" * 10)))
    # a cell claiming a 2 GB value in a small file: a cut-off tail, nothing allocated
    key = bytes.fromhex("0a0172120174180120013801")
    cell = bytes.fromhex("7fffffff 00000010 7fffffe0 0001 72 01 66 71") + bytes(9)
    reader = WalReader(io.BytesIO(head + bytes([len(key)]) + key + cell))
    assert list(reader) == [] and reader.end_reason == "truncated"
