"""A table planned from a snapshot's store files over WebHDFS, reading their block indexes
alone: the ranges cover every key of each region once, hold about the cell budget each
(counted from the cells written, not from the plan), and cut only where a block's index
key is; a file whose index has levels below the root is planned as a one-level file is."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cluster.storage.hdfs_files import HdfsRoot
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.hfile.writer import HFileSettings, HFileWriter
from hbase_migrate.snapshot import plan
from hbase_migrate.snapshot.manifest import RegionFile, SnapshotFile, SnapshotRegion
from hbase_migrate.snapshot.plan import plan_regions, record_snapshot_plan
from hbase_migrate.wal.model import Cell, CellType
from minihbase.webhdfs import WebHdfsServer

TABLE = "t"
ROWS = 6000
SPLIT = b"row-003000"  # the two regions' boundary
REGIONS = (("0" * 31 + "1", b"", SPLIT), ("0" * 31 + "2", SPLIT, b""))
BUDGET = 2000


class Table(NamedTuple):
    source: str = TABLE
    target: str = TABLE
    families: tuple[str, ...] = ("a", "b")


def row(i: int) -> bytes:
    return b"row-%06d" % i


def family_cells(family: bytes, rows: range, per_row: int) -> list[Cell]:
    return [Cell(row(i), family, b"q%d" % q, 1_700_000_000_000, CellType.PUT, b"v" * 200)
            for i in rows for q in range(per_row)]


def written(start: int, stop: int) -> dict[bytes, list[Cell]]:
    """A region's cells by family: ``a`` a cell a row, ``b`` three (every other row)."""
    return {b"a": family_cells(b"a", range(start, stop), 1),
            b"b": family_cells(b"b", range(start, stop, 2), 3)}


Served = tuple[HdfsRoot, Path, list[SnapshotRegion]]


@pytest.fixture(scope="module", params=["one level", "three levels"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("hbase")
    # a small index block size makes HBase's writer add leaf and intermediate levels
    settings = HFileSettings(block_size=4096) if request.param == "one level" else \
        HFileSettings(block_size=4096, index_chunk_size=256, index_min_entries=4)
    regions = []
    for n, (encoded, start, stop) in enumerate(REGIONS):
        first = 0 if not start else int(start[4:])
        last = ROWS if not stop else int(stop[4:])
        files: dict[bytes, tuple[RegionFile, ...]] = {}
        for family, cells in written(first, last).items():
            name = f"{n}{family.decode()}" * 16
            folder = root / "data" / "default" / TABLE / encoded / family.decode()
            folder.mkdir(parents=True)
            with HFileWriter(folder / name, settings) as writer:
                for seq, cell in enumerate(cells):
                    writer.append(cell, seq + 1)
                writer.close()
            with HFileReader(folder / name) as reader:
                levels = reader.trailer.data_index_levels
            assert levels == 1 if request.param == "one level" else levels >= 3, levels
            files[family] = (RegionFile(SnapshotFile(TABLE, encoded, family.decode(), name)),)
        regions.append(SnapshotRegion(TABLE, encoded, start, stop, tuple(files.items())))
    with WebHdfsServer(root, hbase_root="/hbase") as server:
        yield HdfsRoot(server.url, "/hbase", "source"), root, regions


def cells_between(start: bytes, stop: bytes) -> int:
    """The cells written in ``[start, stop)``, counted from what was written."""
    return sum(1 for first, last in ((0, 3000), (3000, ROWS))
               for cells in written(first, last).values() for c in cells
               if c.row >= start and (not stop or c.row < stop))


def test_the_plan_covers_each_region_in_ranges_of_about_the_budget(
        served: Served) -> None:
    root, folder, regions = served
    plan = plan_regions(root, "snap", regions, TABLE, BUDGET)
    bounds = [(p.range.start, p.range.stop) for p in plan]
    # every key once, in order, the regions' boundary among the cuts
    assert bounds[0][0] == b"" and bounds[-1][1] == b""
    assert all(a[1] == b[0] for a, b in itertools.pairwise(bounds))
    assert SPLIT in [start for start, _ in bounds]
    total = cells_between(b"", b"")
    assert sum(p.cells for p in plan) == pytest.approx(total, rel=0.05)
    # each range holds about the budget (a block's worth either way), its planned cells
    # about what it really holds
    for p in plan:
        real = cells_between(p.range.start, p.range.stop)
        assert real <= BUDGET * 1.5, (p.range, real)
        assert p.cells == pytest.approx(real, rel=0.35, abs=150), (p.range, real)
    assert len(plan) >= total // (BUDGET * 1.5)
    # each cut (but the regions' boundary) is the row of a data block's index key
    starts = set()
    for path in folder.rglob("*"):
        if path.is_file() and path.parent.name in ("a", "b"):
            with HFileReader(path) as reader:
                starts.update(reader.block_rows())
    assert {s for s, _ in bounds if s and s != SPLIT} <= starts


def test_a_part_begun_inside_a_region_counts_its_own_blocks_only(served: Served) -> None:
    """A hole from the middle of a region (as a split daughter reads half its parent's
    file): the blocks before the one holding its start are not counted in it."""
    root, _folder, regions = served
    plan = plan_regions(root, "snap", regions, TABLE, BUDGET, [(row(4500), b"")])
    assert plan[0].range.start == row(4500) and plan[-1].range.stop == b""
    for p in plan:
        real = cells_between(p.range.start, p.range.stop)
        assert p.cells == pytest.approx(real, rel=0.35, abs=150), (p.range, real)


def test_block_rows_fall_between_the_blocks_they_index(served: Served) -> None:
    _root, folder, _regions = served
    path = next(p for p in folder.rglob("*") if p.is_file() and p.parent.name == "b")
    blocks: dict[int, list[bytes]] = {}  # the rows of each data block, by its offset
    with HFileReader(path) as reader:
        rows = reader.block_rows()
        for cell in reader.cells():
            blocks.setdefault(reader.block_offset, []).append(cell.cell.row)
    held = list(blocks.values())
    assert len(rows) == len(held) > 10
    for n, (indexed, block) in enumerate(zip(rows, held, strict=True)):
        assert indexed <= block[0], n
        assert n == 0 or indexed >= held[n - 1][-1], n


def test_a_plan_is_recorded_for_the_keys_no_range_covers(
        served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, _folder, regions = served
    # (the manifest's parse has tests of its own: the regions are given here)
    monkeypatch.setattr(plan, "snapshot_regions", lambda _root, _snapshot: regions)
    with Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}") as ledger:
        mid = ledger.ensure_migration("m", "source", "target", [Table()]).id
        # a stopped scan copy left [row-001000, row-002000) planned
        ledger.plan_key_ranges(mid, TABLE, [(row(1000), row(2000), 5)])
        added = record_snapshot_plan(ledger, mid, TABLE, root, "snap", BUDGET)
        ranges = ledger.key_ranges(mid, TABLE)
        assert record_snapshot_plan(ledger, mid, TABLE, root, "snap", BUDGET) == 0
    assert added == len(ranges) - 1
    starts = [r.range_start for r in ranges]
    assert starts[0] == b"" and ranges[-1].range_end == b""
    assert all(a.range_end == b.range_start for a, b in itertools.pairwise(ranges))
    kept = bisect.bisect_left(starts, row(1000))
    assert (ranges[kept].range_start, ranges[kept].range_end) == (row(1000), row(2000))
