"""Golden byte vectors, written out by hand from the format description (not by the writer)."""

from __future__ import annotations

import gzip
import io
import uuid
import zlib

import pytest
from conftest import read_all

from hbase_migrate.wal.cells import CompressionState, encode_compressed_cell, encode_plain_cell
from hbase_migrate.wal.header import decode_header, encode_header
from hbase_migrate.wal.model import Cell, Tag, WalHeader, WalKey
from hbase_migrate.wal.walkey import decode_key, encode_key
from hbase_migrate.wal.writer import WalOptions, WalWriter, write_wal

pytestmark = pytest.mark.usefixtures("both_hot_loops")  # the reference and the compiled hot loops


def h(text: str) -> bytes:
    """Hex with spaces and ``#`` comments allowed."""
    return bytes.fromhex("".join(line.split("#")[0] for line in text.splitlines()))


CODEC = b"org.apache.hadoop.hbase.regionserver.wal.WALCellCodec".hex()  # 53 = 0x35 bytes
WRITER = b"ProtobufLogWriter".hex()  # 17 = 0x11 bytes
TS1 = "00 00 00 00 00 00 00 01"  # int64 timestamp 1

CELL = Cell(b"r1", b"f", b"q", 1, 4, b"v")
PLAIN_CELL = h(f"""
    00 00 00 19          # L = 8 + keyLen 16 + valLen 1 = 25
    00 00 00 10          # keyLen = 2 + 2 + 1 + 1 + 1 + 8 + 1 = 16
    00 00 00 01          # valLen
    00 02 72 31          # rowLen 2, "r1"
    01 66                # famLen 1, "f"
    71                   # qualifier "q" (length implied)
    {TS1} 04             # timestamp, type Put
    76                   # value "v"
""")
PLAIN_CELL_TAGS = h(f"""
    00 00 00 20          # L = 25 + 2 + tagsLen 5 = 32
    00 00 00 10 00 00 00 01 00 02 72 31 01 66 71 {TS1} 04 76
    00 05                # tagsLen
    00 03 08 00 01       # tag: length 3 (type + 2 value bytes), type 8 (TTL), value 00 01
""")


def test_plain_cell_without_tags() -> None:
    out = bytearray()
    encode_plain_cell(out, CELL)
    assert bytes(out) == PLAIN_CELL


def test_plain_cell_with_tags() -> None:
    out = bytearray()
    encode_plain_cell(out, CELL._replace(tags=(Tag(8, b"\x00\x01"),)))
    assert bytes(out) == PLAIN_CELL_TAGS


def _state(**kwargs: object) -> CompressionState:
    defaults: dict[str, object] = {"tags": True, "value_algorithm": None, "writer": True}
    defaults.update(kwargs)
    return CompressionState.create(**defaults)  # type: ignore[arg-type]


def test_compressed_cells_literal_then_reference() -> None:
    state = _state()
    out = bytearray()
    cell = Cell(b"r1", b"f", b"", 1, 4, b"v")
    encode_compressed_cell(out, cell, state)
    encode_compressed_cell(out, cell, state)
    assert bytes(out) == h(f"""
        0f 01 00             # varint keyLen 15 (no qualifier), valLen 1, tagsLen 0
        ff 02 72 31          # row literal "r1" -> ROW slot 0
        ff 01 66             # family literal "f" -> FAMILY slot 0
        ff 00                # empty qualifier: literal of length 0, takes no slot
        {TS1} 04 76          # timestamp, type, raw value
        0f 01 00
        00 00                # row: reference to slot 0
        00 00                # family: slot 0
        ff 00                # empty qualifier again a literal
        {TS1} 04 76
    """)


def test_tag_compression() -> None:
    state = _state()
    out = bytearray()
    cell = Cell(b"r", b"f", b"q", 1, 4, b"", (Tag(8, b"\x00\x01"),))
    encode_compressed_cell(out, cell, state)
    encode_compressed_cell(out, cell, state)
    assert bytes(out) == h(f"""
        0f 00 05             # keyLen 15 = 2 + 1 + 1 + 1 + 1 + 9, valLen 0, tagsLen 5 (raw size)
        ff 01 72 ff 01 66 ff 01 71 {TS1} 04
        ff 03 08 00 01       # tag literal: type byte + value, no 2-byte length
        0f 00 05 00 00 00 00 00 00 {TS1} 04
        00 00                # tag reference to TAG slot 0
    """)


def test_raw_tags_inside_compression() -> None:
    state = _state(tags=False)
    out = bytearray()
    encode_compressed_cell(out, Cell(b"r", b"f", b"q", 1, 4, b"", (Tag(8, b"\x00\x01"),)), state)
    assert bytes(out) == h(f"0f 00 05 ff 01 72 ff 01 66 ff 01 71 {TS1} 04 00 03 08 00 01")


def test_gz_value_is_one_gzip_member() -> None:
    state = _state(value_algorithm=1)
    out = bytearray()
    encode_compressed_cell(out, Cell(b"r", b"f", b"q", 1, 4, b"hello hello hello"), state)
    data = bytes(out)
    assert data[:3] == h("0f 11 00")  # keyLen 15, valLen 17, tagsLen 0
    comp_len = data[3 + 3 * 3 + 9]  # after three literals of one byte and ts+type
    member = data[3 + 9 + 9 + 1 :]
    assert len(member) == comp_len
    # GZIPOutputStream's fixed header: magic, deflate, no flags, mtime 0, xfl 0, OS 0xff
    assert member[:10] == h("1f 8b 08 00 00 00 00 00 00 ff")
    assert member[-8:] == zlib.crc32(b"hello hello hello").to_bytes(4, "little") + h("11 00 00 00")
    assert gzip.decompress(member) == b"hello hello hello"


def test_gz_empty_value_still_has_a_member() -> None:
    state = _state(value_algorithm=1)
    out = bytearray()
    encode_compressed_cell(out, Cell(b"r", b"f", b"q", 1, 4, b""), state)
    assert bytes(out) == h(f"""
        0f 00 00 ff 01 72 ff 01 66 ff 01 71 {TS1} 04
        14                               # compLen 20 > 0 for an empty value
        1f 8b 08 00 00 00 00 00 00 ff    # gzip header
        03 00                            # deflate: one empty final fixed-Huffman block
        00 00 00 00 00 00 00 00          # CRC32 0, ISIZE 0
    """)


def test_value_compression_none() -> None:
    state = _state(value_algorithm=2)
    out = bytearray()
    encode_compressed_cell(out, Cell(b"r", b"f", b"q", 1, 4, b"vv"), state)
    assert bytes(out) == h(f"0f 02 00 ff 01 72 ff 01 66 ff 01 71 {TS1} 04 02 76 76")


KEY_ALL = WalKey(
    b"rg",
    b"ns:t",
    300,
    1,
    scopes=((b"f", 1),),
    cluster_ids=(uuid.UUID(int=(2 << 64) | 1),),
    nonce_group=9,
    nonce=-1,
    orig_sequence=7,
    extended_attributes=(("k", b"v"),),
)
KEY_ALL_BYTES = h("""
    0a 02 72 67          # 1 encoded_region_name "rg"
    12 04 6e 73 3a 74    # 2 table_name "ns:t"
    18 ac 02             # 3 log_sequence_number 300
    20 01                # 4 write_time 1
    32 05 0a 01 66 10 01 # 6 scopes {family "f", scope_type GLOBAL}
    38 02                # 7 following_kv_count 2
    42 04 08 01 10 02    # 8 cluster_ids {least_sig_bits 1, most_sig_bits 2}
    48 09                # 9 nonceGroup 9
    50 ff ff ff ff ff ff ff ff ff 01   # 10 nonce -1 as a 10-byte varint
    58 07                # 11 orig_sequence_number 7
    62 06 0a 01 6b 12 01 76           # 12 extended_attributes {key "k", value "v"}
""")


def test_key_with_all_fields() -> None:
    assert encode_key(KEY_ALL, 2, None) == KEY_ALL_BYTES
    assert decode_key(KEY_ALL_BYTES, 0, len(KEY_ALL_BYTES), None) == (KEY_ALL, 2)


def test_header_plain_and_compressed() -> None:
    plain = h(f"08 00 18 00 22 11 {WRITER} 2a 35 {CODEC} 30 00")
    assert encode_header(WalOptions().header()) == plain
    assert decode_header(plain) == WalHeader()
    gz = h(f"08 01 18 01 22 11 {WRITER} 2a 35 {CODEC} 30 01 38 01")
    options = WalOptions(compression=True, value_compression="GZ")
    assert encode_header(options.header()) == gz
    assert decode_header(gz) == WalHeader(
        True, None, True, "ProtobufLogWriter", None, True, 1
    )._replace(cell_codec_cls_name="org.apache.hadoop.hbase.regionserver.wal.WALCellCodec")


FILE_PLAIN = h(f"""
    50 57 41 4c                          # "PWAL"
    50                                   # header length 80 = 2 + 2 + (2 + 17) + (2 + 53) + 2
    08 00 18 00 22 11 {WRITER} 2a 35 {CODEC} 30 00
    0f                                   # WALKey length 15
    0a 02 72 67 12 02 74 31              # region "rg", table "t1"
    18 05 20 e8 07 38 01                 # sequence 5, write_time 1000, 1 cell
    {PLAIN_CELL.hex()}
    00 00 00 00 4c 41 57 50              # empty WALTrailer, int32 0, "LAWP"
""")
FILE_COMPRESSED = h(f"""
    50 57 41 4c 50
    08 01 18 01 22 11 {WRITER} 2a 35 {CODEC} 30 00
    13                                   # WALKey length 19 = 6 + 6 + 2 + 3 + 2
    0a 04 ff 02 72 67                    # region: literal "rg" (REGION slot 0)
    12 04 ff 02 74 31                    # table: literal "t1" (TABLE slot 0)
    18 05 20 e8 07 38 01
    10 01 00 ff 02 72 31 ff 01 66 ff 01 71 {TS1} 04 76
    0f                                   # second WALKey length 15 = 4 + 4 + 2 + 3 + 2
    0a 02 00 00 12 02 00 00              # region and table: references to slot 0
    18 06 20 e9 07 38 01
    10 01 00 00 00 00 00 00 00 {TS1} 04 76   # row, family, qualifier all references
""")
KEY = WalKey(b"rg", b"t1", 5, 1000)


def test_whole_plain_file(tmp_path: object) -> None:
    assert len(h(f"08 00 18 00 22 11 {WRITER} 2a 35 {CODEC} 30 00")) == 0x50
    out = io.BytesIO()
    writer = WalWriter(out)
    assert writer.append(KEY, [CELL]) == (85, 1 + 15 + 29)
    writer.close()
    assert out.getvalue() == FILE_PLAIN
    entries, reader = read_all(FILE_PLAIN)
    assert [(e.key, e.cells, e.offset, e.size, e.index) for e in entries] == [
        (KEY, (CELL,), 85, 45, 0)
    ]
    assert (reader.end_reason, reader.end_offset, reader.has_trailer) == ("trailer", 130, True)


def test_whole_compressed_file(tmp_path: object) -> None:
    import pathlib

    path = pathlib.Path(str(tmp_path)) / "wal"
    key2 = KEY._replace(sequence=6, write_time=1001)
    write_wal(path, [(KEY, [CELL]), (key2, [CELL])], WalOptions(compression=True), trailer=False)
    assert path.read_bytes() == FILE_COMPRESSED
    entries, reader = read_all(FILE_COMPRESSED)
    assert [(e.key, e.cells) for e in entries] == [(KEY, (CELL,)), (key2, (CELL,))]
    assert (reader.end_reason, reader.end_offset, reader.has_trailer) == (
        "eof",
        len(FILE_COMPRESSED),
        False,
    )
