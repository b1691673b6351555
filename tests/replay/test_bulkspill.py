"""A bulk window past its memory budget (``replay/bulkspill.py``): its files, read back by
the project's reader, hold cell for cell what a window held whole writes, and what a
reference derives on its own: per key (row, family, qualifier, timestamp, type) the cell of
the highest sequence id, in the region whose bounds hold its row, sorted by a comparator
written out after HBase's ``CellComparatorImpl`` (unsigned bytes ascending, timestamp and
type descending). Keys come back in several runs and in the cells still held, with the
four delete types at the timestamps of puts, binary rows and tags."""

from __future__ import annotations

import errno
import functools
import random
import tempfile
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.replay import bulkfiles, bulkspill
from hbase_migrate.replay.bulkfiles import BulkWindow, RegionFile
from hbase_migrate.replay.bulkspill import merged
from hbase_migrate.replay.errors import SpillError, SpillSpaceError
from hbase_migrate.wal.model import Cell, CellType, Tag

from .bulk_window_cells import ENTRIES, REGIONS, TABLE, T

KINDS = [CellType.PUT] * 6 + [CellType.DELETE, CellType.DELETE_COLUMN,
                              CellType.DELETE_FAMILY, CellType.DELETE_FAMILY_VERSION]


def wal(entries: int, seed: int) -> list[list[Cell]]:
    """WAL entries in order; every value names its sequence id (its place in the WAL)."""
    rnd = random.Random(seed)
    rows = [b"", b"apple", b"h", b"hat", b"mango", b"p", b"zebra", b"\xff\x00", b"\x80row"]
    seq, out = 0, []
    for _ in range(entries):
        cells = []
        for _ in range(rnd.randint(1, 6)):
            kind = rnd.choice(KINDS)
            family = rnd.choice((b"f", b"g"))
            qualifier = b"" if kind == CellType.DELETE_FAMILY else rnd.choice((b"a", b"b", b""))
            value = b"seq-%06d" % seq if kind == CellType.PUT else b""
            tags = (Tag(8, seq.to_bytes(8, "big")),) if seq % 5 == 0 else ()
            cells.append(Cell(rnd.choice(rows), family, qualifier, T + rnd.randint(0, 3), kind,
                              value, tags))
            seq += 1
        out.append(cells)
    return out


def hbase_compare(a: Cell, b: Cell) -> int:
    """``CellComparatorImpl.compare`` without the sequence id (a bulk file's cells have
    none): row, family, qualifier as unsigned bytes ascending; timestamp descending; type
    code descending."""
    for x, y in ((a.row, b.row), (a.family, b.family), (a.qualifier, b.qualifier),
                 (b.timestamp, a.timestamp), (b.type, a.type)):
        if x != y:
            return -1 if x < y else 1
    return 0


def reference(entries: list[list[Cell]]) -> dict[tuple[bytes, bytes], list[Cell]]:
    """(region start, family) -> the cells a bulk window's file must hold, derived without
    the window: the highest sequence id of each key, the region by its bounds."""
    newest: dict[tuple[bytes, bytes, bytes, int, int], tuple[int, Cell]] = {}
    seq = 0
    for cells in entries:
        for cell in cells:
            key = (cell.row, cell.family, cell.qualifier, cell.timestamp, cell.type)
            if key not in newest or newest[key][0] < seq:
                newest[key] = (seq, cell)
            seq += 1
    files: dict[tuple[bytes, bytes], list[Cell]] = {}
    for _seq, cell in newest.values():
        region = next(r for r in REGIONS
                      if r.start_key <= cell.row and (not r.end_key or cell.row < r.end_key))
        files.setdefault((region.start_key, cell.family), []).append(cell)
    return {slot: sorted(cells, key=functools.cmp_to_key(hbase_compare))
            for slot, cells in files.items()}


def fill(entries: list[list[Cell]], **options: object) -> BulkWindow:
    win = BulkWindow(TABLE, REGIONS, **options)  # type: ignore[arg-type]
    for cells in entries:
        win.add_cells(cells)
    return win


def read(files: list[RegionFile]) -> dict[tuple[bytes, bytes], list[Cell]]:
    found = {}
    for f in files:
        with HFileReader(f.path) as reader:
            found[(f.region.start_key, f.family)] = [s.cell for s in reader.cells()]
        assert f.cells == len(found[(f.region.start_key, f.family)])
    return found


@pytest.mark.parametrize(("entries", "seed", "memory"), [
    (400, 1, 1),  # a run after every entry
    (400, 2, 3_000),  # a run every few entries
    (3_000, 3, 40_000),  # larger runs, many keys in several of them
])
def test_spilled_files_equal_unspilled_and_the_reference(
        tmp_path: Path, entries: int, seed: int, memory: int) -> None:
    stream = wal(entries, seed)
    whole = fill(stream, memory=None)
    spilled = fill(stream, memory=memory, spill_dir=tmp_path)
    assert whole.runs == 0
    assert spilled.runs > 2
    assert (spilled.count, spilled.bytes) == (whole.count, whole.bytes)
    expected = reference(stream)
    got_whole = read(whole.write(tmp_path / "whole", "t"))
    got_spilled = read(spilled.write(tmp_path / "spilled", "t"))
    assert got_spilled == got_whole == expected
    kinds = {c.type for cells in expected.values() for c in cells}
    assert kinds == set(CellType)  # puts and the four delete types all written


def test_the_newest_run_of_a_key_wins(tmp_path: Path) -> None:
    """A put in runs 0 and 2 (not 1) and one in runs 0, 1 and the cells held: the newest of
    each; run 1's delete marker sorted before the put of its timestamp."""
    def put(row: bytes, value: bytes, ts: int = T) -> Cell:
        return Cell(row, b"f", b"a", ts, CellType.PUT, value)

    win = BulkWindow(TABLE, REGIONS, memory=None, spill_dir=tmp_path)
    win.add_cells([put(b"k1", b"run0"), put(b"k2", b"run0"), put(b"k1", b"run0-later")])
    win.spill()
    win.add_cells([put(b"k2", b"run1"), Cell(b"k1", b"f", b"a", T, CellType.DELETE)])
    win.spill()
    win.add_cells([put(b"k1", b"run2"), put(b"k1", b"older", T - 1)])
    win.spill()
    win.add_cells([put(b"k2", b"held")])
    assert win.runs == 3
    (only,) = win.write(tmp_path / "out", "t")
    assert read([only])[(b"h", b"f")] == [
        Cell(b"k1", b"f", b"a", T, CellType.DELETE), put(b"k1", b"run2"),
        put(b"k1", b"older", T - 1), put(b"k2", b"held")]


def test_spilled_runs_are_removed(tmp_path: Path) -> None:
    win = fill(ENTRIES, memory=1, spill_dir=tmp_path)
    assert win.runs == len(ENTRIES) and len(list(tmp_path.glob("*/run-*"))) == len(ENTRIES)
    win.write(tmp_path / "out", "t")
    assert win.runs == 0 and not list(tmp_path.glob("hbase-migrate-spill-*"))
    win = fill(ENTRIES, memory=1, spill_dir=tmp_path)
    win.discard()  # a load that failed
    assert (win.runs, win.count, win.bytes) == (0, 0, 0)
    assert not list(tmp_path.glob("hbase-migrate-spill-*"))


def test_merge_keeps_the_newest_of_equal_keys() -> None:
    def cell(row: bytes, value: bytes, kind: CellType = CellType.PUT) -> Cell:
        return Cell(row, b"f", b"q", T, kind, value)

    old = [cell(b"a", b"old"), cell(b"b", b"old")]
    new = [cell(b"a", b"", CellType.DELETE_COLUMN), cell(b"a", b"new"), cell(b"c", b"new")]
    assert list(merged([old, new])) == [cell(b"a", b"", CellType.DELETE_COLUMN),
                                        cell(b"a", b"new"), cell(b"b", b"old"),
                                        cell(b"c", b"new")]
    assert list(merged([old])) == old


def test_regions_out_of_order_are_sorted() -> None:
    assert [r.start_key for r in BulkWindow(TABLE, REGIONS).regions] == [b"", b"h", b"p"]
    assert isinstance(REGIONS[0], RegionDescriptor)


def test_runs_go_under_tmpdir_unless_told(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    win = fill(ENTRIES, memory=1)
    assert win.spill_dir == temp
    assert [p.parent.parent for p in temp.glob("hbase-migrate-spill-*/run-*")] == [temp] * len(
        ENTRIES)
    told = tmp_path / "told"
    told.mkdir()
    elsewhere = fill(ENTRIES, memory=1, spill_dir=told)
    assert elsewhere.spill_dir == told and len(list(told.glob("*/run-*"))) == len(ENTRIES)
    win.discard()
    elsewhere.discard()
    assert not list(temp.iterdir()) and not list(told.iterdir())


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_runs_file_takes_at_most_what_was_checked(tmp_path: Path, seed: int) -> None:
    """:meth:`BulkWindow.run_bytes`, checked against the free space, bounds each run's file
    (tags, deletes, keys written twice, binary rows)."""
    sizes: list[tuple[int, int]] = []

    def spill(path: Path, slots: Any) -> Any:
        run = bulkspill.spill(path, slots)
        sizes.append((path.stat().st_size, checked[-1]))
        return run

    checked: list[int] = []

    def free(folder: Path) -> int:
        checked.append(win.run_bytes())
        return 1 << 40

    win = BulkWindow(TABLE, REGIONS, memory=3_000, spill_dir=tmp_path, free=free)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bulkfiles, "spill", spill)
        for cells in wal(400, seed):
            win.add_cells(cells)
    assert len(sizes) > 10
    assert all(0 < size <= bound for size, bound in sizes), sizes
    win.discard()


def test_a_run_without_room_is_not_written_and_its_cells_stay_held(tmp_path: Path) -> None:
    """The free space read in the spill folder short of the next run: nothing written, no
    spill folder made, the runs before it kept and its cells held; with room again, the
    files are the reference's."""
    stream = wal(400, 7)
    room = [1 << 40]
    asked: list[Path] = []

    def free(folder: Path) -> int:
        asked.append(folder)
        return room[0]

    win = BulkWindow(TABLE, REGIONS, memory=3_000, spill_dir=tmp_path, free=free)
    room[0] = 5
    with pytest.raises(SpillSpaceError) as failed:
        for cells in stream:
            win.add_cells(cells)
    taken = next(n for n in range(len(stream) + 1)
                 if sum(map(len, stream[:n])) == win.count)
    assert failed.value.folder == str(tmp_path) and failed.value.free == 5
    assert failed.value.needed == win.run_bytes() > 5
    assert str(failed.value) == (
        f"table {TABLE.name}: no room for the bulk window's next sorted run in {tmp_path}: it "
        f"needs up to {win.run_bytes()} bytes ({bulkfiles.format_bytes(win.run_bytes())}), 5 "
        "free")
    assert asked == [tmp_path] and win.runs == 0 and list(tmp_path.iterdir()) == []
    room[0] = 1 << 40
    for cells in stream[taken:]:
        win.add_cells(cells)
    assert win.runs > 2
    assert read(win.write(tmp_path / "out", "t")) == reference(stream)
    assert not list(tmp_path.glob("hbase-migrate-spill-*"))


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_a_disk_filled_while_a_run_is_written_leaves_no_part_of_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """Room when checked, none while writing (another writer took it): the partial run
    removed, the runs before it kept, its cells still held."""
    def spill(path: Path, slots: Any) -> Any:
        if len(list(path.parent.iterdir())) == 2:  # the third run, part-written
            path.write_bytes(b"partial")
            raise OSError(code, "No space left on device")
        return bulkspill.spill(path, slots)

    monkeypatch.setattr(bulkfiles, "spill", spill)
    frees = iter([1 << 40, 1 << 40, 1 << 40, 3])
    stream = wal(400, 8)
    win = BulkWindow(TABLE, REGIONS, memory=3_000, spill_dir=tmp_path,
                     free=lambda folder: next(frees))
    with pytest.raises(SpillSpaceError) as failed:
        for cells in stream:
            win.add_cells(cells)
    assert failed.value.free == 3 and isinstance(failed.value.__cause__, OSError)
    assert win.runs == 2
    assert sorted(p.name for p in tmp_path.glob("*/*")) == ["run-00000", "run-00001"]
    held = win.count
    monkeypatch.setattr(bulkfiles, "spill", bulkspill.spill)
    win.memory = None  # the rest held: the window's files hold every cell taken
    for cells in stream:
        if held <= 0:
            win.add_cells(cells)
        held -= len(cells)
    assert read(win.write(tmp_path / "out", "t")) == reference(stream)


def test_other_write_errors_leave_no_part_of_the_run_either(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def spill(path: Path, slots: Any) -> Any:
        path.write_bytes(b"partial")
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(bulkfiles, "spill", spill)
    with pytest.raises(SpillError, match="could not be written: Input/output error"):
        fill(ENTRIES, memory=1, spill_dir=tmp_path)
    assert not list(tmp_path.glob("*/run-*"))
