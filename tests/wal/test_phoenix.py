"""Apache Phoenix's ``IndexedWALEditCodec`` (``hbase_migrate.wal.phoenix``) on files built byte
by byte from the codec's framing: cells, index updates (uncompressed and after the marker byte
of a dictionary-compressed WAL), Hadoop VInts, a file cut anywhere, bad markers. Real files:
tests/realstack/test_phoenix_wal_golden.py."""

from __future__ import annotations

import io
import struct

import pytest

from hbase_migrate.errors import WalCorruptError
from hbase_migrate.rpc.multi import decode_mutation, inline_mutation
from hbase_migrate.wal.cells import CompressionState, encode_compressed_cell, encode_plain_cell
from hbase_migrate.wal.dictionary import FAMILY_CAPACITY, REGION_CAPACITY, TABLE_CAPACITY
from hbase_migrate.wal.dictionary import LruDictionary as Dict
from hbase_migrate.wal.header import EMPTY_TRAILER, MAGIC, encode_header
from hbase_migrate.wal.markers import decode_marker
from hbase_migrate.wal.model import (
    METAFAMILY,
    PHOENIX_CELL_CODEC,
    Cell,
    CellType,
    WalHeader,
    WalKey,
)
from hbase_migrate.wal.phoenix import (
    INDEX_QUALIFIER,
    IndexUpdate,
    decode_index_update,
    is_index_update,
    read_vint,
)
from hbase_migrate.wal.protobuf import delimited
from hbase_migrate.wal.reader import WalReader
from hbase_migrate.wal.walkey import KeyDictionaries, encode_key

pytestmark = pytest.mark.usefixtures("both_hot_loops")

KEY = WalKey(b"0123456789abcdef0123456789abcdef", b"ORDERS", 7, 1_700_000_000_000)
DATA = [Cell(b"o1", b"0", b"\x80\x0b", 1_700_000_000_123, CellType.PUT, b"ada"),
        Cell(b"o1", b"0", b"\x00\x00\x00\x00", 1_700_000_000_123, CellType.PUT, b"x")]
INDEX_ROW = b"ada\x00o1"
INDEX_CELLS = [Cell(INDEX_ROW, b"0", b"\x00\x00\x00\x00", 1_700_000_000_123, CellType.PUT, b"x"),
               Cell(INDEX_ROW, b"0", b"\x80\x0b", 1_700_000_000_123, CellType.PUT, b"\x80")]
MUTATION = inline_mutation(INDEX_ROW, INDEX_CELLS)
# Bytes.writeByteArray: Hadoop VInt length (one byte below 128), then the bytes
UPDATE = bytes([18]) + b"ORDERS_BY_CUSTOMER" + bytes([len(MUTATION)]) + MUTATION
LONG_TABLE = b"T" * 200
LONG_UPDATE = b"\x8f\xc8" + LONG_TABLE + bytes([len(MUTATION)]) + MUTATION  # 200: 0x8F 0xC8


def _file(body: bytes, compressed: bool) -> bytes:
    header = WalHeader(has_compression=compressed, has_tag_compression=compressed,
                       cell_codec_cls_name=PHOENIX_CELL_CODEC)
    return MAGIC + delimited(encode_header(header)) + body


def _plain(entries: list[list[Cell | bytes]]) -> bytes:
    """Entries whose cells are Cells or index updates' bytes (after the -1 length)."""
    out = bytearray()
    for cells in entries:
        out += delimited(encode_key(KEY, len(cells), None))
        for cell in cells:
            if isinstance(cell, bytes):
                out += struct.pack(">i", -1) + cell
            else:
                encode_plain_cell(out, cell)
    return _file(bytes(out), False)


class Raw(bytes):
    """Bytes written as they are, in place of a cell."""


def _compressed(entries: list[list[Cell | bytes]]) -> bytes:
    family = Dict(FAMILY_CAPACITY, writer=True)
    keys = KeyDictionaries(Dict(REGION_CAPACITY, writer=True), Dict(TABLE_CAPACITY, writer=True),
                           family)
    state = CompressionState.create(tags=True, value_algorithm=None, writer=True)
    state = state._replace(family=family)
    out = bytearray()
    for cells in entries:
        out += delimited(encode_key(KEY, len(cells), keys))
        for cell in cells:
            if isinstance(cell, Raw):
                out += cell
            elif isinstance(cell, bytes):
                out += b"\xff" + struct.pack(">i", -1) + cell
            else:
                out += b"\x00"
                encode_compressed_cell(out, cell, state)
    return _file(bytes(out), True)


def _read(data: bytes) -> tuple[list[tuple[Cell, ...]], str]:
    with WalReader(io.BytesIO(data), name="phoenix.wal") as reader:
        cells = [tuple(e.cells) for e in reader]
        return cells, reader.end_reason


@pytest.mark.parametrize("build", [_plain, _compressed], ids=["plain", "dict"])
def test_cells_and_index_updates(build: object) -> None:
    entries: list[list[Cell | bytes]] = [[UPDATE, *DATA], [*DATA, LONG_UPDATE], [DATA[0]]]
    data = build(entries) + EMPTY_TRAILER  # type: ignore[operator]
    read, end = _read(data)
    assert end == "trailer"
    assert [[c for c in e if not is_index_update(c)] for e in read] == [DATA, DATA, [DATA[0]]]
    updates = [c for e in read for c in e if is_index_update(c)]
    assert [c.value for c in updates] == [UPDATE, LONG_UPDATE]
    assert [is_index_update(e[0]) for e in read] == [True, False, False]
    for cell in updates:  # the index row and its first cell's time, as Phoenix 5 shows it
        assert cell[:5] == (INDEX_ROW, METAFAMILY, INDEX_QUALIFIER, INDEX_CELLS[0].timestamp,
                            CellType.PUT)
        update = decode_marker(cell)
        assert isinstance(update, IndexUpdate)
        assert decode_mutation(update.mutation, b"", 0)[0].cells == tuple(INDEX_CELLS)
    assert decode_index_update(LONG_UPDATE).table == LONG_TABLE


@pytest.mark.parametrize("build", [_plain, _compressed], ids=["plain", "dict"])
def test_every_cut_ends_as_truncated(build: object) -> None:
    entries: list[list[Cell | bytes]] = [[*DATA], [UPDATE, DATA[1]]]
    data = build(entries)  # type: ignore[operator]
    whole, _ = _read(data)
    first_end = len(build([[*DATA]]))  # type: ignore[operator]
    for cut in range(first_end + 1, len(data)):
        read, end = _read(data[:cut])
        assert (read, end) == (whole[:1], "truncated"), cut


def test_resume_at_an_entry() -> None:
    data = _plain([[UPDATE, *DATA], [DATA[0], UPDATE]])
    with WalReader(io.BytesIO(data)) as reader:
        entries = list(reader)
    with WalReader(io.BytesIO(data), start_offset=entries[1].offset) as reader:
        assert list(reader) == entries[1:]


@pytest.mark.parametrize(("bad", "message"), [
    (b"\x07" + struct.pack(">i", -1) + UPDATE, "marker 7"),
    (b"\xff" + struct.pack(">i", 40) + UPDATE, "length 40"),
    (b"\xff" + struct.pack(">i", -1) + b"\x87\x70" + UPDATE, "length -113"),
], ids=["marker", "length", "vint"])
def test_bad_framing_is_named(bad: bytes, message: str) -> None:
    with pytest.raises(WalCorruptError, match=message) as info:
        _read(_compressed([[DATA[0]], [DATA[1], Raw(bad)]]) + b"\x00" * 32)
    assert "phoenix.wal" in str(info.value)


@pytest.mark.parametrize(("data", "value"), [
    (b"\x7f", 127), (b"\x00", 0), (b"\xff", -1), (b"\x90", -112), (b"\x8f\x80", 128),
    (b"\x8e\x01\x2c", 300), (b"\x87\x70", -113), (b"\x8c\x7f\xff\xff\xff", 2**31 - 1),
])
def test_hadoop_vints(data: bytes, value: int) -> None:
    assert read_vint(data + b"rest", 0) == (value, len(data))
