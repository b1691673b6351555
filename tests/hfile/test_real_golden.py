"""The golden HFiles HBase 2.6.1 wrote (``tests/data/real-hfile/``), and 3.0.0-alpha-4 and
1.4.13 (``real-hfile-3.0``, ``real-hfile-1.4``), read cell for cell through both decoders
and compared with what HBase's own HFilePrettyPrinter printed for them; among them tagged
cells in every encoding, their tags compressed where HBase compresses them."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.hfile import tagcompression
from hbase_migrate.hfile.decoders import CELLS
from hbase_migrate.hfile.fileinfo import int_value, time_range
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.hfile.tagcompression import TAG_DICTIONARY_CAPACITY
from hbase_migrate.hfile.trailer import comparator_class
from hbase_migrate.wal.codecs import algorithm_label
from hbase_migrate.wal.dictionary import LruDictionary
from tests.hfile.golden_files import (
    CASES,
    CODECS,
    FOLDERS,
    GOLDEN_1,
    GOLDEN_3,
    IDS,
    READABLE,
    TAGGED,
    read_cells,
)
from tests.hfile.printout import GOLDEN, printed_cells, printed_section


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
    assert len([c for c in CASES if c[0] == GOLDEN]) == len(READABLE)
    assert len([c for c in CASES if c[0] == GOLDEN_3]) == len(READABLE) - len(CODECS)
    assert len([c for c in CASES if c[0] == GOLDEN_1]) == len(READABLE) - len(CODECS)


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
def test_tagged_files_say_whether_their_tags_are_compressed(folder: Path) -> None:
    """What the reader takes from the file info, as HBase printed it: every encoded file of
    tagged cells says its tags are compressed (ROW_INDEX_V1's too, which writes them plain),
    the unencoded ones not."""
    true, false = ("\\xFF", "\\x00") if folder == GOLDEN_1 else ("true", "false")
    names = [n for n in READABLE if n.startswith("tagged") and (folder / n).exists()]
    assert len(names) >= len(TAGGED)
    for name in names:
        encoded = name not in ("tagged", "tagged-multiblock")
        printed = printed_section(name, "Fileinfo", folder)["hfile.TAGS_COMPRESSED"]
        assert printed == (true if encoded else false), name
        with HFileReader(folder / name) as reader:
            assert reader.tags and reader.compressed_tags == encoded, name


class _CountingDictionary(LruDictionary):
    """A tag dictionary that counts the literals added to it (``read_item`` adds them)."""

    added = 0

    def add(self, data: bytes) -> int:
        _CountingDictionary.added += 1
        return super().add(data)


@pytest.mark.parametrize("folder", [GOLDEN, GOLDEN_1], ids=lambda f: f.name)
@pytest.mark.parametrize("name", ["tagged-prefix", "tagged-diff", "tagged-fastdiff"])
def test_one_block_holds_more_distinct_tags_than_the_dictionary(
        folder: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The golden files of one 64 KiB block reuse slots of the 127 (least recently used
    first) and still refer to the tags every few cells repeat: read by the reference with a
    dictionary that counts its literals, their cells are HBase's."""
    monkeypatch.setattr(tagcompression, "LruDictionary", _CountingDictionary)
    _CountingDictionary.added = 0
    with HFileReader(folder / name) as reader:
        assert reader.trailer.data_index_count == 1
    before = CELLS.implementation()
    CELLS.use("python")
    try:
        got = read_cells(name, folder)
    finally:
        CELLS.use(before)
    assert _CountingDictionary.added > TAG_DICTIONARY_CAPACITY
    referred = sum(len(c["tags"]) for c in got) - _CountingDictionary.added
    assert referred > 100
    if folder == GOLDEN_1:
        for cell in got:
            cell["tags"] = [{"type": None, "value": t["value"]} for t in cell["tags"]]
    assert got == printed_cells(name, folder)
