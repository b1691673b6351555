"""Reference (half) files of a split: their two encodings, and the halves of a golden file
read through them."""

from __future__ import annotations

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor
from hbase_migrate.errors import HFileCorruptError
from hbase_migrate.hfile.merge import StoreFile, merged_cells
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.hfile.reference import Half, parse_reference_file
from hbase_migrate.hfile.region import Source, region_cells
from hbase_migrate.hfile.visible import ScanSpec
from tests.hfile.printout import GOLDEN


def first_on_row(row: bytes) -> bytes:
    """``KeyValueUtil.createFirstOnRow(row).getKey()``: row length, row, an empty family
    and qualifier, LATEST_TIMESTAMP, type Maximum (255)."""
    return len(row).to_bytes(2, "big") + row + b"\x00" + b"\x7f" + b"\xff" * 7 + b"\xff"


def test_protobuf_reference_of_each_half() -> None:
    key = first_on_row(b"row-0042")
    message = b"\x0a" + bytes([len(key)]) + key + b"\x10"  # splitkey 1, range 2
    assert parse_reference_file(b"PBUF" + message + b"\x00", "r") == Half(b"row-0042", True)
    assert parse_reference_file(b"PBUF" + message + b"\x01", "r") == Half(b"row-0042", False)


def test_writable_reference_of_older_releases() -> None:
    key = first_on_row(b"m")
    assert parse_reference_file(b"\x01" + bytes([len(key)]) + key, "r") == Half(b"m", True)
    assert parse_reference_file(b"\x00" + bytes([len(key)]) + key, "r") == Half(b"m", False)


@pytest.mark.parametrize(("data", "found"), [
    (b"", "neither PBUF nor a Writable reference"),
    (b"PBUF\x10\x00", "not a reference"),
    (b"PBUF\x0a\x01\x00\x10\x00", "holds no row"),
    (b"PBUF\x0a\x02\x00\x00\x10\x07", "reference range 7"),
    (b"\x01\x05ab", "split key of 5 bytes"),
])
def test_bad_reference_names_the_file(data: bytes, found: str) -> None:
    with pytest.raises(HFileCorruptError, match=f"^daughter/f/abc.def: .*{found}"):
        parse_reference_file(data, "daughter/f/abc.def")


def test_two_halves_of_a_file_are_the_whole_file() -> None:
    with HFileReader(GOLDEN / "multiblock") as reader:
        whole = list(reader.cells())
        family = whole[0].cell.family
        rows = sorted({s.cell.row for s in whole})
        split = rows[len(rows) // 2]
        bottom = list(merged_cells([StoreFile(family, reader, Half(split, top=False))]))
        top = list(merged_cells([StoreFile(family, reader, Half(split, top=True))]))
    assert bottom and top
    assert all(s.cell.row < split for s in bottom)
    assert all(s.cell.row >= split for s in top)
    assert bottom + top == whole
    desc = [FamilyDescriptor(family, max_versions=1 << 30)]
    scan = ScanSpec(now_ms=0, max_versions=1 << 30)
    halves = [*region_cells({family: [Source(GOLDEN / "multiblock", Half(split, False))]},
                            desc, scan),
              *region_cells({family: [Source(GOLDEN / "multiblock", Half(split, True))]},
                            desc, scan)]
    assert halves == list(region_cells({family: [GOLDEN / "multiblock"]}, desc, scan))
