"""Store files merged into HBase's scan order, on the golden files real HBase 2.6.1 wrote."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor
from hbase_migrate.errors import HFileCorruptError, HFileError
from hbase_migrate.hfile.merge import StoreFile, merged_cells, sequence_id
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.hfile.region import region_cells
from hbase_migrate.hfile.visible import ScanSpec
from tests.hfile.printout import GOLDEN


def family_of(name: str) -> bytes:
    with HFileReader(GOLDEN / name) as reader:
        return next(iter(reader.cells())).cell.family


def test_two_files_merge_into_one_sorted_stream() -> None:
    names = ["small", "multiblock-gz"]
    with HFileReader(GOLDEN / names[0]) as a, HFileReader(GOLDEN / names[1]) as b:
        family = family_of(names[0])
        assert family_of(names[1]) == family
        merged = list(merged_cells([StoreFile(family, a), StoreFile(family, b)]))
        both = [*a.cells(), *b.cells()]
    # HBase's order, as a plain sort: row, family, qualifier up; timestamp, type, mvcc down
    assert merged == sorted(both, key=lambda s: (s.cell.row, s.cell.family, s.cell.qualifier,
                                                 -s.cell.timestamp, -s.cell.type, -s.mvcc))


def test_the_same_cells_twice_are_read_once(tmp_path: Path) -> None:
    """A file and its copy under another name: every cell twice in the merge, once in the
    scan; versions asked for all, no TTL (the family's own rules would hide none either)."""
    copy = tmp_path / "copy"
    shutil.copyfile(GOLDEN / "multiblock", copy)
    family = family_of("multiblock")
    with HFileReader(copy) as reader:
        assert sequence_id(reader) > 0  # MAX_SEQ_ID_KEY of a flushed file
        once = list(merged_cells([StoreFile(family, reader)]))
    desc = [FamilyDescriptor(family, max_versions=1 << 30)]
    scan = ScanSpec(now_ms=0, max_versions=1 << 30)
    alone = list(region_cells({family: [GOLDEN / "multiblock"]}, desc, scan))
    doubled = list(region_cells({family: [GOLDEN / "multiblock", copy]}, desc, scan))
    assert doubled == alone
    assert len(alone) < len(once)  # the golden file's deletes hide some of its puts


def test_a_cell_of_another_family_names_the_file_and_block() -> None:
    with HFileReader(GOLDEN / "multiblock") as reader, pytest.raises(HFileCorruptError) as got:
        list(merged_cells([StoreFile(b"other", reader)]))
    assert got.value.file.endswith("multiblock")
    assert got.value.offset == reader.trailer.first_data_block_offset
    assert "in the store of family b'other'" in str(got.value)


def test_a_store_of_an_undescribed_family_is_refused() -> None:
    with pytest.raises(HFileError, match="multiblock: store file of family b'x', which the"):
        list(region_cells({b"x": [GOLDEN / "multiblock"]}, [FamilyDescriptor(b"f")],
                          ScanSpec(now_ms=0)))
