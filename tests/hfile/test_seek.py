"""A read from a row (``HFileReader.cells(start)``): the cells of the rows at or after it,
the same as the whole file's read from which the earlier rows are dropped, in every data
block encoding, with one, two and more index levels, both decoders, in the writer's files
and in those real HBase 1.4, 2.6 and 3.0 wrote (their index keys shortened between blocks);
a start near the end reads a small part of the file. The rows, block boundaries and
expected cells come from the whole file's read, not from the index the seek goes through."""

from __future__ import annotations

import io
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.hfile.merge import StoreFile, merged_cells
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.hfile.reference import Half
from hbase_migrate.hfile.writer import HFileSettings, HFileWriter
from hbase_migrate.wal.model import Cell, CellType, cell_order

ENCODINGS = ["NONE", "PREFIX", "DIFF", "FAST_DIFF", "ROW_INDEX_V1"]
# index chunk size and the levels the file's index then has (3: three or more)
LAYOUTS = {"one level": (1 << 20, 1), "two levels": (2048, 2), "more levels": (128, 3)}
WIDE_ROW = b"r00150"  # a column of many versions: it spans blocks
T0 = 1_700_000_000_000
DATA = Path(__file__).resolve().parents[1] / "data"
REAL = sorted(p for folder in ("real-hfile", "real-hfile-1.4", "real-hfile-3.0")
              for p in (DATA / folder).glob("*multiblock*") if not p.suffix)


def seek_cells() -> list[tuple[Cell, int]]:
    """Rows ``r00000``..``r00299`` of one to four columns, a delete here and there, and one
    row of 300 versions; each with a sequence id."""
    cells = []
    for i in range(300):
        row = b"r%05d" % i
        versions = 300 if row == WIDE_ROW else 1
        for q in range(i % 4 + 1):
            for v in range(versions):
                cells.append(Cell(row, b"f", b"q%d" % q, T0 + i - v, CellType.PUT,
                                  b"value-%d-%d-%d" % (i, q, v) * (1 + i % 3)))
        if i % 7 == 3:
            cells.append(Cell(row, b"f", b"q0", T0 + i + 1, CellType.DELETE_COLUMN))
    cells.sort(key=cell_order)
    return [(cell, 1000 + n) for n, cell in enumerate(cells)]


class Counted(io.FileIO):
    """A local file that counts the bytes read from it."""

    bytes_read = 0

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self.bytes_read += len(data or b"")
        return data or b""


def write(path: Path, encoding: str, index_chunk: int) -> Path:
    settings = HFileSettings(block_size=512, encoding=encoding, index_chunk_size=index_chunk,
                             index_min_entries=2)
    with HFileWriter(path, settings) as writer:
        for cell, mvcc in seek_cells():
            writer.append(cell, mvcc)
        writer.close()
    return path


def read(path: Path, start: bytes = b"") -> tuple[list[StoreCell], int]:
    """The cells read from ``start`` and the bytes of the file read for them."""
    counted = Counted(path)
    with HFileReader(path, file=counted) as reader:
        opened = counted.bytes_read
        cells = list(reader.cells(start))
    return cells, counted.bytes_read - opened


def block_rows(path: Path) -> list[list[bytes]]:
    """The rows of each data block, from the whole file's read."""
    blocks: list[list[bytes]] = []
    offset = -1
    with HFileReader(path) as reader:
        for stored in reader.cells():
            if reader.block_offset != offset:
                offset = reader.block_offset
                blocks.append([])
            if stored.cell.row not in blocks[-1]:
                blocks[-1].append(stored.cell.row)
    return blocks


def starts(blocks: list[list[bytes]]) -> Iterator[bytes]:
    """Before the first row, after the last, the wide row, blocks' first rows, rows and
    rows between rows, at random."""
    rows = sorted({row for block in blocks for row in block})
    yield from (b"\x00", b"a", b"r", b"r00000", b"s", b"\xff" * 3, rows[-1], WIDE_ROW)
    chosen = random.Random(72)
    yield from (block[0] for block in chosen.sample(blocks, 12))
    for row in chosen.sample(rows, 8):
        yield from (row, row + b"\x00", row[:-1], row[:-1] + b"5\xff")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_read_from_a_row_equals_the_whole_read_from_that_row(
        encoding: str, layout: str, tmp_path: Path, both_decoders: str) -> None:
    chunk, levels = LAYOUTS[layout]
    path = write(tmp_path / "f", encoding, chunk)
    with HFileReader(path) as reader:
        assert min(reader.trailer.data_index_levels, 3) == levels
    whole, whole_bytes = read(path)
    assert [(s.cell, s.mvcc) for s in whole] == seek_cells()
    blocks = block_rows(path)
    assert len(blocks) > 50
    assert sum(WIDE_ROW in block for block in blocks) >= 2  # the wide row spans blocks
    for start in starts(blocks):
        got, _ = read(path, start)
        assert got == [s for s in whole if s.cell.row >= start], start
    last, last_bytes = read(path, blocks[-1][-1])
    assert last and last_bytes * 10 < whole_bytes
    assert read(path, b"\x00")[1] >= whole_bytes  # before every row: every block


def test_the_seek_of_a_half_keeps_to_its_split_row(tmp_path: Path) -> None:
    """Each half of a file read from rows before, at and after its split row: the file's
    cells of that half from that row; a top half read from nothing starts at its split."""
    path = write(tmp_path / "f", "FAST_DIFF", 128)
    whole, whole_bytes = read(path)
    split = b"r00200"
    for top in (False, True):
        half = Half(split, top)
        for start in (b"", b"r00010", WIDE_ROW, b"r001999", split, b"r00200\x00", b"r00290",
                      b"s"):
            counted = Counted(path)
            with HFileReader(path, file=counted) as reader:
                got = list(merged_cells([StoreFile(b"f", reader, half)], start=start))
            assert got == [s for s in whole if half.holds(s.cell.row)
                           and s.cell.row >= start], (top, start)
            if top and start < b"r00290":
                assert counted.bytes_read * 2 < whole_bytes  # from the split row on


@pytest.mark.parametrize("path", REAL, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_read_from_rows_of_files_hbase_wrote(path: Path) -> None:
    """Each block's first and last rows, rows just after them, and rows at random."""
    whole, _ = read(path)
    blocks = block_rows(path)
    assert len(blocks) > 1
    edges = [row for block in blocks for row in (block[0], block[-1])]
    rows = sorted({s.cell.row for s in whole})
    chosen = random.Random(path.name).sample(rows, min(len(rows), 8))
    for start in (b"\x00", *edges, *(row + b"\x00" for row in edges), *chosen, b"\xff" * 4):
        assert read(path, start)[0] == [s for s in whole if s.cell.row >= start], start
