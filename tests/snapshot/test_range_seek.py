"""A key range read from a snapshot's store file over WebHDFS starts at the data block its
first row is in: a range near the region's end reads a small part of the file (the bytes
the throttle is told of: those read), and every range's rows are the cells written in it."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor
from hbase_migrate.cluster.storage.hdfs_files import HdfsRoot
from hbase_migrate.hfile.writer import HFileSettings, HFileWriter
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.snapshot.manifest import RegionFile, SnapshotFile, SnapshotRegion
from hbase_migrate.snapshot.read import range_rows
from hbase_migrate.wal.model import Cell, CellType
from minihbase.webhdfs import WebHdfsServer

TABLE, SNAPSHOT, REGION, HFILE = "t", "snap", "0" * 31 + "1", "a" * 32
FAMILIES = [FamilyDescriptor(b"f", max_versions=1 << 30)]
NOW = 2**62
ROWS = 4000


class Meter:
    """A throttle that only counts the bytes it is told of."""

    def __init__(self) -> None:
        self.bytes = 0

    def take(self, cells: int, nbytes: int = 0) -> None:
        self.bytes += nbytes


def written() -> list[Cell]:
    """Rows of two columns, two versions of the first, values of 1 KiB: about 12 MB."""
    return [Cell(b"row-%06d" % i, b"f", q, 1_700_000_000_000 - v, CellType.PUT,
                 (b"%d-%s-%d " % (i, q, v)) * 100)
            for i in range(ROWS) for q, versions in ((b"a", 2), (b"b", 1))
            for v in range(versions)]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HdfsRoot]:
    root = tmp_path_factory.mktemp("hbase")
    folder = root / "data" / "default" / TABLE / REGION / "f"
    folder.mkdir(parents=True)
    with HFileWriter(folder / HFILE, HFileSettings(encoding="FAST_DIFF")) as writer:
        for n, cell in enumerate(written()):
            writer.append(cell, n + 1)
        writer.close()
    with WebHdfsServer(root, hbase_root="/hbase") as server:
        yield HdfsRoot(server.url, "/hbase", "source")


def read(root: HdfsRoot, key_range: KeyRange) -> tuple[list[list[Cell]], int]:
    """The range's rows and the bytes of its store file read (the throttle told of)."""
    region = SnapshotRegion(TABLE, REGION, b"", b"", (
        (b"f", (RegionFile(SnapshotFile(TABLE, REGION, "f", HFILE)),)),))
    meter = Meter()
    rows = list(range_rows(root, SNAPSHOT, [region], FAMILIES, key_range, NOW,
                           throttle=meter))
    return rows, meter.bytes


def expected(key_range: KeyRange) -> list[list[Cell]]:
    inside = [c for c in written() if key_range.contains(c.row)]
    return [list(row) for _r, row in itertools.groupby(inside, key=lambda c: c.row)]


def test_a_range_near_the_regions_end_reads_a_small_part_of_its_file(
        served: HdfsRoot) -> None:
    whole, whole_metered = read(served, KeyRange(TABLE))
    assert whole == expected(KeyRange(TABLE))
    size = sum(len(c.value) for row in whole for c in row)
    assert whole_metered > size
    for bounds in ((b"row-003900", b""), (b"row-0039", b"row-003950"),
                   (b"row-003999", b"row-004")):
        key_range = KeyRange(TABLE, *bounds)
        rows, metered = read(served, key_range)
        assert rows == expected(key_range) and rows
        assert metered * 10 < whole_metered, bounds


@pytest.mark.parametrize("bounds", [(b"", b"row-000100"), (b"row-001000", b"row-002000"),
                                    (b"row-0025", b"row-0026"), (b"row-003999\x00", b""),
                                    (b"a", b"b")])
def test_each_range_holds_the_cells_written_in_it(
        served: HdfsRoot, bounds: tuple[bytes, bytes]) -> None:
    key_range = KeyRange(TABLE, *bounds)
    assert read(served, key_range)[0] == expected(key_range)
