"""Value compression with every algorithm HBase can name: hand-written vectors of each codec's
stream framing, round trips through the writer and reader, damaged values, refusals."""

from __future__ import annotations

import io
import os
import struct

import pytest
from conftest import OTHER_CODECS, read_all, simple_pairs, wal_bytes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hbase_migrate.errors import WalCorruptError, WalError
from hbase_migrate.wal.cells import CompressionState, encode_compressed_cell
from hbase_migrate.wal.model import Cell, WalKey
from hbase_migrate.wal.reader import WalReader
from hbase_migrate.wal.writer import WalOptions

pytestmark = pytest.mark.usefixtures("both_hot_loops")  # the reference and the compiled hot loops

ORDINAL = {"SNAPPY": 3, "LZ4": 4, "BZIP2": 5, "ZSTD": 6, "LZMA": 7, "BROTLI": 8}
BLOCK_CODECS = ("SNAPPY", "LZ4", "ZSTD", "LZMA", "BROTLI")  # BlockCompressorStream framing
# MAX_INPUT_SIZE of each BlockCompressorStream: 256 KiB less the codec's overhead
MAX_INPUT = {"SNAPPY": 262144 - (262144 // 6 + 32), "LZ4": 262144 - (262144 // 255 + 16),
             "ZSTD": 262144 - (262144 // 6 + 32), "LZMA": 262144 - (262144 // 6 + 32),
             "BROTLI": 262144 - (262144 // 6 + 32)}
KEY = WalKey(b"r" * 32, b"t", 1, 1)
TS1 = bytes.fromhex("0000000000000001")


def h(text: str) -> bytes:
    return bytes.fromhex("".join(line.split("#")[0] for line in text.splitlines()))


def cell_bytes(name: str, value: bytes) -> bytes:
    state = CompressionState.create(tags=True, value_algorithm=ORDINAL[name], writer=True)
    out = bytearray()
    encode_compressed_cell(out, Cell(b"r", b"f", b"q", 1, 4, value), state)
    return bytes(out)


def compressed_value(name: str, value: bytes) -> bytes:
    """The value part of a one-cell encoding: varint compLen, compLen bytes."""
    data = cell_bytes(name, value)
    pos = 0
    for _ in range(3):  # keyLen, valLen, tagsLen
        _, pos = read_varint(data, pos)
    comp_len, pos = read_varint(data, pos + 9 + 9)  # three 1-byte literals, ts + type
    assert len(data) == pos + comp_len
    return data[pos:]


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        value |= (data[pos] & 0x7F) << shift
        pos += 1
        if data[pos - 1] < 0x80:
            return value, pos
        shift += 7


def one_cell_wal(name: str, compressed: bytes, val_len: int) -> bytes:
    """A WAL of one entry whose single cell carries ``compressed`` as its value bytes."""
    head = wal_bytes([], WalOptions(compression=True, value_compression=name), trailer=False)
    key = h("0a 22 ff 20") + b"r" * 32 + h("12 03 ff 01 74 18 01 20 01 38 01")
    cell = bytearray(bytes([15]) + encode_varint(val_len) + h("00 ff 01 72 ff 01 66 ff 01 71"))
    cell += TS1 + b"\x04" + encode_varint(len(compressed)) + compressed
    return head + bytes([len(key)]) + key + bytes(cell)


def encode_varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def read_value(data: bytes) -> bytes:
    entries, _ = read_all(data)
    assert len(entries) == 1 and len(entries[0].cells) == 1
    return entries[0].cells[0].value


# --- hand-written vectors -----------------------------------------------------------------


@pytest.mark.parametrize("name", BLOCK_CODECS)
def test_empty_value_is_one_empty_block(name: str) -> None:
    # BlockCompressorStream.finish() with no input: uncompressed length 0 and no chunk
    assert cell_bytes(name, b"") == h("0f 00 00 ff 01 72 ff 01 66 ff 01 71") + TS1 + h(
        "04 04 00 00 00 00"
    )


def test_snappy_block() -> None:
    written = compressed_value("SNAPPY", b"hello")
    assert written == h("""
        00 00 00 05          # block: 5 bytes uncompressed
        00 00 00 07          # chunk of 7 bytes
        05 10 68 65 6c 6c 6f # raw snappy: varint length 5, literal tag (5-1)<<2, "hello"
    """)
    assert read_value(one_cell_wal("SNAPPY", written, 5)) == b"hello"


def test_lz4_block() -> None:
    written = compressed_value("LZ4", b"hello")
    assert written == h("""
        00 00 00 05 00 00 00 06
        50 68 65 6c 6c 6f    # raw LZ4 block: token 5 literals, no match, "hello"
    """)
    assert read_value(one_cell_wal("LZ4", written, 5)) == b"hello"


def test_lz4_block_with_a_match_read() -> None:
    # token 0x1f: 1 literal "a", match length 15 + 4 = 19 at offset 1; then 5 literals "aaaaa"
    chunk = h("1f 61 01 00 00 50") + b"aaaaa"
    value = b"a" * 25
    framed = struct.pack(">ii", 25, len(chunk)) + chunk
    assert read_value(one_cell_wal("LZ4", framed, 25)) == value


# magic, descriptor: single segment with a 1-byte content size 5, one last raw block of 5
ZSTD_HELLO = h("28 b5 2f fd 20 05 29 00 00") + b"hello"


def test_zstd_frame_in_blocks() -> None:
    # HBase's ZSTD codecs (aircompressor, zstd-jni): the frame is the chunk of one block
    framed = h("00 00 00 05 00 00 00 0e") + ZSTD_HELLO
    assert read_value(one_cell_wal("ZSTD", framed, 5)) == b"hello"
    written = compressed_value("ZSTD", b"hello")
    assert written[:4] == h("00 00 00 05") and written[8:12] == h("28 b5 2f fd")
    (size,) = struct.unpack_from(">i", written, 4)
    assert size == len(written) - 8


def test_zstd_bare_frame() -> None:
    # Hadoop's ZStandardCodec (a plain CompressorStream): the frame alone
    assert read_value(one_cell_wal("ZSTD", ZSTD_HELLO, 5)) == b"hello"
    with pytest.raises(WalCorruptError, match="ZSTD value"):
        read_value(one_cell_wal("ZSTD", h("00 00 00 05 00 00 00 05") + b"hello", 5))


def test_bzip2_stream() -> None:
    empty = compressed_value("BZIP2", b"")
    # "BZh9" (CBZip2OutputStream's 900k blocks), end-of-stream magic (sqrt(pi)), CRC 0, padding
    assert empty == h("42 5a 68 39 17 72 45 38 50 90 00 00 00 00")
    written = compressed_value("BZIP2", b"hello hello")
    assert written[:4] == b"BZh9"
    assert read_value(one_cell_wal("BZIP2", written, 11)) == b"hello hello"


def lzma_literals(data: bytes) -> bytes:
    """An "lzma alone" stream with a known size and no end marker, as Java's LZMAOutputStream
    writes: every byte coded as a literal (lc=3, lp=0, pb=2, dictionary 8 MiB)."""
    low, rng, cache, pending = 0, 0xFFFFFFFF, 0, 1
    out = bytearray()
    probs: dict[tuple[object, ...], int] = {}

    def shift_low() -> None:
        nonlocal low, cache, pending
        if low < 0xFF000000 or low > 0xFFFFFFFF:
            carry, temp = low >> 32, cache
            while pending:
                out.append((temp + carry) & 0xFF)
                temp = 0xFF
                pending -= 1
            cache = (low >> 24) & 0xFF
        pending += 1
        low = (low & 0x00FFFFFF) << 8

    def bit(key: tuple[object, ...], b: int) -> None:
        nonlocal low, rng
        p = probs.get(key, 1024)
        bound = (rng >> 11) * p
        if b:
            low, rng, probs[key] = low + bound, rng - bound, p - (p >> 5)
        else:
            rng, probs[key] = bound, p + ((2048 - p) >> 5)
        while rng < 1 << 24:
            rng = (rng << 8) & 0xFFFFFFFF
            shift_low()

    prev = 0
    for pos, byte in enumerate(data):
        bit(("is_match", pos & 3), 0)
        symbol = 1
        for i in range(7, -1, -1):
            b = byte >> i & 1
            bit(("literal", prev >> 5, symbol), b)
            symbol = symbol << 1 | b
        prev = byte
    for _ in range(5):
        shift_low()
    return h("5d 00 00 80 00") + struct.pack("<q", len(data)) + bytes(out)


def test_lzma_known_size_stream() -> None:
    value = b"hello lzma"
    chunk = lzma_literals(value)
    assert chunk[:14] == h("5d 00 00 80 00 0a 00 00 00 00 00 00 00 00")
    framed = struct.pack(">ii", len(value), len(chunk)) + chunk
    assert read_value(one_cell_wal("LZMA", framed, len(value))) == value
    written = compressed_value("LZMA", value)  # the writer's form: unknown size, end marker
    assert written[:4] == h("00 00 00 0a") and written[8:13] == h("5d 00 00 80 00")
    assert read_value(one_cell_wal("LZMA", written, len(value))) == value


@pytest.mark.parametrize("name", BLOCK_CODECS)
def test_large_value_is_split_into_chunks_and_ends_with_an_empty_block(name: str) -> None:
    limit = MAX_INPUT[name]
    value = os.urandom(limit) + b"z" * (limit + 10)
    written = compressed_value(name, value)
    (total,) = struct.unpack_from(">i", written)
    assert total == len(value)
    pos, sizes = 4, []
    while pos < len(written) - 4:
        (size,) = struct.unpack_from(">i", written, pos)
        sizes.append(size)
        pos += 4 + size
    assert len(sizes) == 3  # limit, limit, 10 bytes
    assert written[pos:] == h("00 00 00 00")  # HBASE-28390
    assert read_value(one_cell_wal(name, written, len(value))) == value
    # without the trailing empty block (a value written by a codec that leaves none) too
    assert read_value(one_cell_wal(name, written[:-4], len(value))) == value


@pytest.mark.parametrize("name", BLOCK_CODECS)
def test_bytes_after_the_blocks_are_corruption(name: str) -> None:
    written = compressed_value(name, b"hello") + h("00 00 00 01")
    with pytest.raises(WalCorruptError, match=f"{name} value"):
        read_value(one_cell_wal(name, written, 5))


@pytest.mark.parametrize("name", OTHER_CODECS)
def test_a_value_of_another_length_is_corruption(name: str) -> None:
    written = compressed_value(name, b"hello")
    with pytest.raises(WalCorruptError, match=name):
        read_value(one_cell_wal(name, written, 6))
    with pytest.raises(WalCorruptError, match=name):
        read_value(one_cell_wal(name, written, 4))


def test_empty_value_bytes_are_skipped_unread() -> None:
    # HBASE-27637: whatever an empty value's compressed form holds, HBase skips compLen bytes
    assert read_value(one_cell_wal("ZSTD", b"\xde\xad", 0)) == b""


# --- round trips and damage ---------------------------------------------------------------

VALUES = [b"", b"v", b"abc" * 1000, os.urandom(3000), b"q" * 300_000]


@pytest.mark.parametrize("name", OTHER_CODECS)
def test_round_trip_through_writer_and_reader(name: str) -> None:
    pairs = [(KEY._replace(sequence=i), (Cell(b"r%d" % i, b"f", b"q", 1, 4, v),))
             for i, v in enumerate(VALUES)] + simple_pairs(12, tags=True)
    data = wal_bytes(pairs, WalOptions(compression=True, value_compression=name))
    entries, reader = read_all(data)
    assert [e.cells for e in entries] == [cells for _, cells in pairs]
    assert reader.header.value_compression_algorithm == ORDINAL[name]
    assert reader.end_reason == "trailer"


SAMPLES = {name: wal_bytes(simple_pairs(8), WalOptions(compression=True, value_compression=name),
                           trailer=False) for name in OTHER_CODECS}


@settings(max_examples=150, deadline=3000, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(OTHER_CODECS), st.data())
def test_damaged_compressed_values(name: str, data: st.DataObject) -> None:
    sample = bytearray(SAMPLES[name])
    start = WalReader(io.BytesIO(bytes(sample))).end_offset
    for _ in range(data.draw(st.integers(1, 3))):
        pos = data.draw(st.integers(start, len(sample) - 1))
        sample[pos] = data.draw(st.integers(0, 255))
    try:
        reader = WalReader(io.BytesIO(bytes(sample)), name="fuzz.wal")
        for _ in reader:
            pass
    except WalError as exc:
        assert exc.file == "fuzz.wal"


# --- refusals -----------------------------------------------------------------------------


def test_writer_refuses_lzo_naming_it() -> None:
    with pytest.raises(ValueError, match=r"LZO .*LzoCodec"):
        WalOptions(compression=True, value_compression="LZO").header()
    with pytest.raises(ValueError, match="SNAPPY"):
        WalOptions(compression=True, value_compression="snappy").header()
