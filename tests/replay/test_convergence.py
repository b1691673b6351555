"""Replay into a real target over Thrift2: the target converges to the source cell for
cell, replays are idempotent, and a replay cut off mid-file resumes from its reported
offset to the same state."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hbase_migrate.replay.client_target import ClientTarget
from hbase_migrate.replay.file_replay import FileProgress, ReplaySpec, replay_file
from hbase_migrate.replay.filters import ReplayFilter
from hbase_migrate.validate.compare import compare_tables
from hbase_migrate.wal.model import Cell, CellType
from hbase_migrate.wal.reader import WalReader
from hbase_migrate.wal.writer import WalOptions
from tests.support.replay import Clusters, T, entries_for, make_wal, scan_all

pytestmark = pytest.mark.integration

P, D, DC, DF, DFV = (CellType.PUT, CellType.DELETE, CellType.DELETE_COLUMN,
                     CellType.DELETE_FAMILY, CellType.DELETE_FAMILY_VERSION)
BIN = b"\x00bin\xff\n"


def put(row: bytes, family: bytes, qualifier: bytes, ts: int, value: bytes) -> Cell:
    return Cell(row, family, qualifier, T + ts, P, value)


def delete(row: bytes, family: bytes, qualifier: bytes, ts: int, type_: CellType) -> Cell:
    return Cell(row, family, qualifier, T + ts, type_)


# One client call per list; each becomes one WAL entry.
CALLS: list[list[Cell]] = [
    [put(b"r1", b"d", b"a", v, b"r1-a-%d" % v) for v in (1, 2, 3)]
    + [put(b"r1", b"d", b"b", 1, b"r1-b"), put(b"r1", b"m", b"x", 1, b"r1-m")],
    [put(BIN, b"d", b"a", 1, b"\x00\xff"), put(BIN, b"d", b"\x00q", 5, b""),
     put(BIN, b"m", b"", 2, b"empty qualifier")],
    [delete(b"r1", b"d", b"a", 2, D)],  # exactly one version
    [put(b"r3", b"d", b"a", v, b"r3-%d" % v) for v in (1, 2, 3)],
    [delete(b"r3", b"d", b"a", 2, DC)],  # versions <= T+2
    [put(b"r4", b"d", b"a", 5, b"r4-a"), put(b"r4", b"d", b"b", 12, b"r4-b"),
     put(b"r4", b"m", b"x", 5, b"r4-m")],
    [delete(b"r4", b"d", b"", 10, DF)],  # family d <= T+10
    [put(b"r5", b"d", b"a", 7, b"r5-a7"), put(b"r5", b"d", b"b", 7, b"r5-b7"),
     put(b"r5", b"d", b"c", 8, b"r5-c8"), put(b"r5", b"d", b"a", 6, b"r5-a6")],
    [delete(b"r5", b"d", b"", 7, DFV)],  # every column of d at exactly T+7
    [delete(b"r6", b"d", b"a", 20, DC)],
    [put(b"r6", b"d", b"a", 15, b"masked by the earlier marker"),
     put(b"r6", b"d", b"a", 25, b"r6-visible")],
    # the WALPlayer duplicate-Put case inside one entry, mixed rows and kinds
    [put(b"r7", b"d", b"a", 1, b"r7"), delete(b"r7", b"d", b"b", 100, DC),
     put(b"r8", b"d", b"a", 1, b"r8")],
    [delete(b"r1", b"m", b"x", 1, D)],  # exact version on a one-version family
    [put(b"r9", b"d", b"a", 1, b"old")],
    [put(b"r9", b"d", b"a", 1, b"new")],  # same key later in the file: the later wins
    [put(BIN, b"d", b"a", 3, b"third"), delete(BIN, b"m", b"", 2, DC)],
]

VARIANTS = {
    "plain": WalOptions(),
    "compressed": WalOptions(compression=True),
    "compressed-gz-values": WalOptions(compression=True, value_compression="GZ"),
}


def _apply_to_source(clusters: Clusters, table: str) -> None:
    for cells in CALLS:
        clusters.src.write_cells(table, cells)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_replay_converges_to_the_source(clusters: Clusters, table: str, tmp_path: Path,
                                        variant: str) -> None:
    clusters.create(table)
    _apply_to_source(clusters, table)
    wal = make_wal(tmp_path / "wal.1", entries_for(table, CALLS), VARIANTS[variant])
    progress: list[FileProgress] = []
    result = replay_file(wal, ReplaySpec(ReplayFilter.build([table])),
                         ClientTarget(clusters.dst), on_progress=progress.append)
    assert result.complete and result.end_reason == "trailer"
    comparison = compare_tables(clusters.src, clusters.dst, table)
    assert comparison.equal, comparison.examples
    # independent expectations on what the source must hold
    got = scan_all(clusters.dst, table)
    assert (b"r1", b"d", b"a", T + 2, b"r1-a-2") not in got
    assert (b"r1", b"d", b"a", T + 3, b"r1-a-3") in got
    assert [c for c in got if c[0] == b"r3"] == [(b"r3", b"d", b"a", T + 3, b"r3-3")]
    assert {c[2] for c in got if c[0] == b"r4"} == {b"b", b"x"}
    assert sorted(c[4] for c in got if c[0] == b"r5") == [b"r5-a6", b"r5-c8"]
    assert [c[4] for c in got if c[0] == b"r6"] == [b"r6-visible"]
    assert [c[4] for c in got if c[0] == b"r9"] == [b"new"]
    assert not [c for c in got if c[:3] == (b"r1", b"m", b"x")]
    # counts
    cells = result.progress.cells
    assert sum(cells.values()) == sum(len(c) for c in CALLS)
    assert cells["Delete"] == 2 and cells["DeleteFamilyVersion"] == 1
    assert cells["DeleteFamily"] == 1 and cells["DeleteColumn"] == 4
    assert result.progress.entries == result.progress.entries_applied == len(CALLS)
    assert progress[-1] == result.progress


def test_replaying_twice_gives_the_same_state(clusters: Clusters, table: str,
                                              tmp_path: Path) -> None:
    clusters.create(table, source=False)
    wal = make_wal(tmp_path / "wal.1", entries_for(table, CALLS))
    target = ClientTarget(clusters.dst)
    replay_file(wal, ReplaySpec(), target)
    once = scan_all(clusters.dst, table)
    replay_file(wal, ReplaySpec(), target)
    assert scan_all(clusters.dst, table) == once
    assert once


def _boundaries(wal: Path) -> set[int]:
    with WalReader(wal) as reader:
        return {e.offset + e.size for e in reader}


@pytest.mark.parametrize("compression", [False, True])
def test_a_cut_off_replay_resumes_to_the_same_state(clusters: Clusters, tmp_path: Path,
                                                    compression: bool) -> None:
    whole, resumed = f"whole_{compression:d}", f"resumed_{compression:d}"
    clusters.create(whole, source=False)
    clusters.create(resumed, source=False)
    many = [[put(b"row%03d" % i, b"d", b"q", i % 7, b"v%d" % i),
             delete(b"row%03d" % (i - 3), b"d", b"q", i % 5, DC)] for i in range(60)]
    opts = WalOptions(compression=compression)
    wal = make_wal(tmp_path / "wal.full", entries_for(resumed, many), opts)
    boundaries = _boundaries(wal)
    with WalReader(wal) as reader:
        cut_entry = list(reader)[33]
    cut = tmp_path / "wal.cut"  # a copy of the file cut inside entry #33, as a live WAL
    shutil.copyfile(wal, cut)
    with cut.open("r+b") as handle:
        handle.truncate(cut_entry.offset + cut_entry.size // 2)

    target = ClientTarget(clusters.dst)
    spec = ReplaySpec(batch_cells=5)
    first: list[FileProgress] = []
    part = replay_file(cut, spec, target, on_progress=first.append)
    assert part.end_reason == "truncated" and not part.complete
    assert part.end_offset == cut_entry.offset
    assert part.progress.next_index == 33 and part.progress.entries == 33
    second: list[FileProgress] = []
    rest = replay_file(wal, spec, target, start_offset=part.end_offset,
                       start_index=part.progress.next_index, on_progress=second.append)
    assert rest.complete and rest.progress.entries == len(many) - 33
    offsets = [p.offset for p in first + second]
    assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets)
    assert set(offsets) <= boundaries
    assert len(first) > 3  # batches of 5 cells: progress is reported as it goes

    renamed = ReplaySpec(ReplayFilter.build([f"{resumed}={whole}"]))
    replay_file(wal, renamed, target)
    assert scan_all(clusters.dst, resumed) == scan_all(clusters.dst, whole)
