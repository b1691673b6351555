"""The HFile writer's files read back by the project's reader, in every data block encoding
and compression, with tags (compressed where the family compresses them) and without:
the cells and sequence ids written, the trailer's counts and the file info HBase writes.
That real HBase reads the same files: ``tests/realstack/test_hfile_writer_real.py``; that
they are HBase's own bytes: ``test_writer_golden.py``."""

from __future__ import annotations

import itertools
import tracemalloc
from pathlib import Path

import pytest

from hbase_migrate.hfile.fileinfo import int_value, time_range
from hbase_migrate.hfile.metadata import bulk_load_metadata, flush_metadata
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.hfile.writer import HFileSettings, HFileWriteError, HFileWriter
from hbase_migrate.wal.model import Cell, CellType
from tests.support.hfilecells import T0, writer_cells

ENCODINGS = ["NONE", "PREFIX", "DIFF", "FAST_DIFF", "ROW_INDEX_V1"]
COMPRESSIONS = ["NONE", "GZ", "SNAPPY", "LZ4", "ZSTD"]
CELLS = writer_cells()
UNTAGGED = [(cell._replace(tags=()), mvcc) for cell, mvcc in CELLS]


def write(path: Path, cells: list[tuple[Cell, int]], settings: HFileSettings,
          info: dict[bytes, bytes] | None = None) -> None:
    with HFileWriter(path, settings) as writer:
        for cell, mvcc in cells:
            writer.append(cell, mvcc)
        writer.close(info)


@pytest.mark.parametrize(("encoding", "compression", "tags"),
                         list(itertools.product(ENCODINGS, COMPRESSIONS, [True, False])))
def test_round_trip(encoding: str, compression: str, tags: bool, tmp_path: Path) -> None:
    cells = CELLS if tags else UNTAGGED
    path = tmp_path / "f"
    write(path, cells, HFileSettings(block_size=2048, encoding=encoding,
                                     compression=compression, include_tags=tags,
                                     bloom="ROW"))
    with HFileReader(path) as reader:
        read = [(s.cell, s.mvcc) for s in reader.cells()]
        trailer, info = reader.trailer, reader.file_info
        compressed_tags = reader.compressed_tags
    assert read == cells
    assert trailer.entry_count == len(cells) and trailer.data_index_levels == 1
    assert trailer.data_index_count > 10  # many blocks of 2 KiB
    assert compressed_tags == (tags and encoding != "NONE")
    assert info.get(b"DATA_BLOCK_ENCODING", b"NONE") == encoding.encode()
    assert (b"hfile.MAX_TAGS_LEN" in info) == tags


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_three_level_index_and_blooms(encoding: str, tmp_path: Path) -> None:
    """Blocks of 256 bytes and index chunks of 128: intermediate index blocks; Bloom
    chunks of 64 bytes: several, written inline."""
    path = tmp_path / "f"
    write(path, CELLS, HFileSettings(block_size=256, encoding=encoding, bloom="ROWCOL",
                                     index_chunk_size=128, index_min_entries=2,
                                     bloom_chunk_size=64))
    with HFileReader(path) as reader:
        assert [(s.cell, s.mvcc) for s in reader.cells()] == CELLS
        assert reader.trailer.data_index_levels >= 3
        assert reader.file_info[b"BLOOM_FILTER_TYPE"] == b"ROWCOL"


def test_file_info_of_a_bulk_load(tmp_path: Path) -> None:
    path = tmp_path / "f"
    write(path, CELLS, HFileSettings(create_time=T0),
          bulk_load_metadata("replay-1", loaded_at=T0 + 1))
    puts = [c.timestamp for c, _ in CELLS if c.type == CellType.PUT]
    deletes = [c for c, _ in CELLS if c.type in (CellType.DELETE_FAMILY,
                                                   CellType.DELETE_FAMILY_VERSION)]
    with HFileReader(path) as reader:
        info = reader.file_info
    assert info[b"BULKLOAD_SOURCE_TASK"] == b"replay-1"
    assert int_value(info, b"BULKLOAD_TIMESTAMP") == T0 + 1
    assert info[b"MAJOR_COMPACTION_KEY"] == b"\xff"
    assert b"MAX_SEQ_ID_KEY" not in info  # the region gives a bulk-loaded file its id
    assert int_value(info, b"EARLIEST_PUT_TS") == min(puts)
    # a DeleteFamily or DeleteColumn covers every older version: the range reaches 0
    assert time_range(info) == (0, max(c.timestamp for c, _ in CELLS))
    assert int_value(info, b"DELETE_FAMILY_COUNT") == len(deletes)
    assert int_value(info, b"MAX_MEMSTORE_TS_KEY") == max(m for _, m in CELLS)
    assert int_value(info, b"hfile.CREATE_TIME_TS") == T0


def test_file_info_of_a_flush(tmp_path: Path) -> None:
    path = tmp_path / "f"
    write(path, CELLS[:5], HFileSettings(), flush_metadata(77))
    with HFileReader(path) as reader:
        assert int_value(reader.file_info, b"MAX_SEQ_ID_KEY") == 77


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "f"
    write(path, [], HFileSettings(bloom="ROW"))
    with HFileReader(path) as reader:
        assert list(reader.cells()) == []
        assert reader.trailer.entry_count == 0


@pytest.mark.usefixtures("both_writers")
def test_cells_out_of_order_are_refused(tmp_path: Path) -> None:
    with HFileWriter(tmp_path / "f") as writer:
        writer.append(Cell(b"b", b"f", b"q", T0, CellType.PUT, b"v"))
        with pytest.raises(HFileWriteError, match="sorts before"):
            writer.append(Cell(b"a", b"f", b"q", T0, CellType.PUT, b"v"))
        with pytest.raises(HFileWriteError, match="one family a file"):
            writer.append(Cell(b"c", b"g", b"q", T0, CellType.PUT, b"v"))
        # a newer version of the same column sorts first
        with pytest.raises(HFileWriteError, match="sorts before"):
            writer.append(Cell(b"b", b"f", b"q", T0 + 1, CellType.PUT, b"v"))


@pytest.mark.usefixtures("both_writers")
def test_cells_hbase_cannot_hold_are_refused(tmp_path: Path) -> None:
    with HFileWriter(tmp_path / "f") as writer, pytest.raises(HFileWriteError, match="row"):
        writer.append(Cell(b"r" * 40_000, b"f", b"q", T0, CellType.PUT, b"v"))


def test_settings_refused() -> None:
    with pytest.raises(HFileWriteError, match="PREFIX_TREE"):
        HFileWriter(Path("/nonexistent/f"), HFileSettings(encoding="PREFIX_TREE"))
    with pytest.raises(HFileWriteError, match="LZO"):
        HFileWriter(Path("/nonexistent/f"), HFileSettings(compression="LZO"))


def _peak_memory(path: Path, cells: int) -> int:
    """The most memory Python held while writing ``cells`` cells (blocks of 4 KiB, index
    blocks of 4 KiB: a multi-level index)."""
    tracemalloc.start()
    try:
        writer = HFileWriter(path, HFileSettings(block_size=4096, index_chunk_size=4096))
        for i in range(cells):
            writer.append(Cell(b"user%010d" % i, b"f", b"q", T0 + i, CellType.PUT, b"x" * 100))
        writer.close()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_stays_flat_as_the_file_grows(tmp_path: Path) -> None:
    """Ten times the cells (about 3 MB of file): the same memory, within 64 KiB (the root
    index's few more entries)."""
    small, large = _peak_memory(tmp_path / "s", 2_000), _peak_memory(tmp_path / "l", 20_000)
    assert large - small < 64 * 1024, (small, large)
