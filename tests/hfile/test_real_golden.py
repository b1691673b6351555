"""The golden HFiles HBase 2.6.1 wrote (``tests/data/real-hfile/``), read cell for cell and
compared with what HBase's own HFilePrettyPrinter printed for them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.errors import HFileUnsupportedError
from hbase_migrate.hfile.fileinfo import int_value, time_range
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.hfile.trailer import comparator_class
from hbase_migrate.wal.codecs import algorithm_label
from hbase_migrate.wal.model import type_name
from tests.hfile.printout import GOLDEN, printed_cells, printed_section

READABLE = ["small", "multiblock", "multiblock-gz", "multiblock-crc32", "multiblock-3level",
            "multiblock-snappy", "multiblock-lz4", "multiblock-zstd", "multiblock-brotli",
            "small-rowindex", "multiblock-rowindex", "small-prefix", "multiblock-prefix",
            "small-fastdiff", "multiblock-fastdiff", "small-diff", "multiblock-diff"]


def read_cells(name: str, folder: Path = GOLDEN) -> list[dict[str, Any]]:
    """The reader's cells of a file, rendered as the printout's fields."""
    with HFileReader(folder / name) as reader:
        return [{
            "row": to_string_binary(s.cell.row), "family": to_string_binary(s.cell.family),
            "qualifier": to_string_binary(s.cell.qualifier), "timestamp": s.cell.timestamp,
            "type": type_name(s.cell.type), "value": to_string_binary(s.cell.value),
            "vlen": len(s.cell.value), "mvcc": s.mvcc,
            "tags": [{"type": t.type, "value": to_string_binary(t.value)} for t in s.cell.tags],
        } for s in reader.cells()]


# HBase 3.0.0-alpha-4 on Maven Central has no codec module: no SNAPPY, LZ4, ZSTD or BROTLI
# file; HBase 1.4.13 has SNAPPY and LZ4 through Hadoop's native library only, none here
GOLDEN_3 = GOLDEN.parent / "real-hfile-3.0"
GOLDEN_1 = GOLDEN.parent / "real-hfile-1.4"
FOLDERS = [GOLDEN, GOLDEN_3, GOLDEN_1]
CASES = [(f, n) for f in FOLDERS for n in READABLE if (f / n).exists()]
IDS = [f"{folder.name}/{name}" for folder, name in CASES]


@pytest.mark.usefixtures("both_decoders")
@pytest.mark.parametrize(("folder", "name"), CASES, ids=IDS)
def test_cells_as_hbase_prints_them(folder: Path, name: str) -> None:
    expected = printed_cells(name, folder)
    assert len(expected) > 10
    got = read_cells(name, folder)
    if folder == GOLDEN_1:  # 1.x prints no tag types: the values are compared
        for cell in got:
            cell["tags"] = [{"type": None, "value": t["value"]} for t in cell["tags"]]
    assert got == expected


def test_hbase_3_and_1_goldens_are_there() -> None:
    assert len([c for c in CASES if c[0] == GOLDEN_3]) == len(READABLE) - 4
    assert len([c for c in CASES if c[0] == GOLDEN_1]) == len(READABLE) - 4


def test_golden_files_cover_deletes_tags_and_blocks() -> None:
    kinds = {c["type"] for c in printed_cells("small")}
    assert kinds == {"Put", "Delete", "DeleteColumn", "DeleteFamily", "DeleteFamilyVersion"}
    assert any(len(c["tags"]) == 2 for c in printed_cells("small"))
    assert printed_section("multiblock", "Trailer")["numDataIndexLevels"] == "2"
    assert printed_section("multiblock-3level", "Trailer")["numDataIndexLevels"] == "3"


@pytest.mark.parametrize(("folder", "name"), CASES, ids=IDS)
def test_trailer_and_file_info_as_hbase_prints_them(folder: Path, name: str) -> None:
    printed = printed_section(name, "Trailer", folder)
    info = printed_section(name, "Fileinfo", folder)
    with HFileReader(folder / name) as reader:
        t = reader.trailer
        assert {
            "fileinfoOffset": str(t.file_info_offset),
            "loadOnOpenDataOffset": str(t.load_on_open_offset),
            "dataIndexCount": str(t.data_index_count),
            "metaIndexCount": str(t.meta_index_count),
            "entryCount": str(t.entry_count),
            "compressionCodec": algorithm_label(t.compression),
            "uncompressedDataIndexSize": str(t.uncompressed_data_index_size),
            "numDataIndexLevels": str(t.data_index_levels),
            "firstDataBlockOffset": str(t.first_data_block_offset),
            "lastDataBlockOffset": str(t.last_data_block_offset),
            # 1.x prints the name as written; later releases their own class for it
            "comparatorClassName": t.comparator if folder == GOLDEN_1
            else comparator_class(t.comparator),
            "majorVersion": str(t.major_version),
            "minorVersion": str(t.minor_version),
        }.items() <= printed.items()
        assert str(int_value(reader.file_info, b"MAX_SEQ_ID_KEY")) == info["MAX_SEQ_ID_KEY"]
        low, high = time_range(reader.file_info) or (None, None)
        assert f"{low}....{high}" == info["TIMERANGE"]
        assert len(reader.root_index) == t.data_index_count


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda f: f.name)
def test_compressed_tags_are_refused_with_the_offset(folder: Path) -> None:
    printed = printed_section("small-tagcompression", "Trailer", folder)
    info = printed_section("small-tagcompression", "Fileinfo", folder)
    assert info["hfile.TAGS_COMPRESSED"] == ("\\xFF" if folder == GOLDEN_1 else "true")
    with HFileReader(folder / "small-tagcompression") as reader, \
            pytest.raises(HFileUnsupportedError) as caught:
        next(reader.cells())
    assert caught.value.offset == int(printed["fileinfoOffset"])
    assert str(caught.value).endswith("compressed tags")
    assert "small-tagcompression" in str(caught.value)
