"""Replay through a real Thrift1 gateway under the fidelity policy."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from hbase_migrate.replay.client_target import ClientTarget
from hbase_migrate.replay.errors import InexpressibleMutationError
from hbase_migrate.replay.file_replay import ReplaySpec, replay_file
from hbase_migrate.replay.filters import ReplayFilter
from hbase_migrate.replay.targets import open_target
from hbase_migrate.replay.thrift1_target import (
    DELETE_LOSSY,
    DELETE_VERSIONS_1,
    FAMILY_VERSION_LOSSY,
    Thrift1Target,
)
from hbase_migrate.validate.compare import compare_tables
from hbase_migrate.wal.model import Cell, CellType
from tests.support.replay import Clusters, T, entries_for, make_wal, scan_all

pytestmark = pytest.mark.integration


def c(row: bytes, family: bytes, qualifier: bytes, ts: int, type_: CellType,
      value: bytes = b"") -> Cell:
    return Cell(row, family, qualifier, T + ts, type_, value)


P = CellType.PUT
EXACT_CALLS = [
    [c(b"r1", b"d", b"a", v, P, b"a%d" % v) for v in (1, 2, 3)]
    + [c(b"r1", b"d", b"b", 4, P, b"b4"), c(b"r1", b"m", b"x", 1, P, b"m1")],
    [c(b"r2", b"d", b"a", 1, P, b"x"), c(b"r2", b"d", b"b", 9, P, b"y"),
     c(b"r2", b"m", b"x", 3, P, b"z")],
    [c(b"r1", b"d", b"a", 2, CellType.DELETE_COLUMN)],
    [c(b"r2", b"d", b"", 5, CellType.DELETE_FAMILY)],
    [c(b"r1", b"m", b"x", 1, CellType.DELETE)],  # VERSIONS=1: approximated, same result
    [c(b"r3", b"d", b"a", 1, P, b"one"), c(b"r3", b"d", b"b", 2, P, b"two"),
     c(b"r3", b"d", b"a", 1, P, b"one again")],
]


def test_exact_types_and_one_version_deletes_converge(clusters: Clusters, table: str,
                                                     tmp_path: Path) -> None:
    clusters.create(table)
    for cells in EXACT_CALLS:
        clusters.src.write_cells(table, cells)
    wal = make_wal(tmp_path / "wal.t1", entries_for(table, EXACT_CALLS))
    result = replay_file(wal, ReplaySpec(), Thrift1Target(clusters.dst1))
    comparison = compare_tables(clusters.src, clusters.dst, table)
    assert comparison.equal, comparison.examples
    assert dict(result.progress.approximations) == {DELETE_VERSIONS_1: 1}
    assert result.progress.cells["DeleteColumn"] == 1
    got = scan_all(clusters.dst, table)
    assert [x[3] for x in got if x[:3] == (b"r1", b"d", b"a")] == [T + 3]
    assert [x[2] for x in got if x[0] == b"r2"] == [b"b", b"x"]
    assert (b"r3", b"d", b"a", T + 1, b"one again") in got


@pytest.mark.parametrize(("bad", "kind"), [
    (c(b"r\xff", b"d", b"a", 2, CellType.DELETE), "Delete"),
    (c(b"r\xff", b"d", b"", 2, CellType.DELETE_FAMILY_VERSION), "DeleteFamilyVersion"),
])
def test_inexpressible_deletes_fail_unless_lossy_allowed(
        clusters: Clusters, table: str, tmp_path: Path, bad: Cell, kind: str) -> None:
    clusters.create(table, source=False)
    calls = [[c(b"r\xff", b"d", b"a", v, P, b"v%d" % v) for v in (1, 2)], [bad],
             [c(b"r\xff", b"d", b"b", 3, P, b"after")]]
    wal = make_wal(tmp_path / "wal.bad", entries_for(table, calls))
    with pytest.raises(InexpressibleMutationError) as info:
        replay_file(wal, ReplaySpec(batch_cells=1), Thrift1Target(clusters.dst1))
    text = str(info.value)
    for part in ("wal.bad", "entry #1", r"row r\xFF", "family d", kind):
        assert part in text
    # the entry before was applied (acknowledged batch), nothing from the bad one on
    assert [x[4] for x in scan_all(clusters.dst, table)] == [b"v1", b"v2"]

    result = replay_file(wal, ReplaySpec(), Thrift1Target(clusters.dst1,
                                                          allow_lossy_deletes=True))
    expected = DELETE_LOSSY if kind == "Delete" else FAMILY_VERSION_LOSSY
    assert dict(result.progress.approximations) == {expected: 1}
    # the approximation deletes every version <= ts: v1 too, which the exact delete keeps
    assert [x[4] for x in scan_all(clusters.dst, table)] == [b"after"]


def test_thrift1_and_thrift2_targets_agree_on_exact_files(clusters: Clusters, table: str,
                                                          tmp_path: Path) -> None:
    one, two = f"{table}_1", f"{table}_2"
    clusters.create(one, source=False)
    clusters.create(two, source=False)
    wal = make_wal(tmp_path / "wal.x", entries_for(one, EXACT_CALLS))
    replay_file(wal, ReplaySpec(), Thrift1Target(clusters.dst1))
    replay_file(wal, ReplaySpec(ReplayFilter.build([f"{one}={two}"])),
                ClientTarget(clusters.dst))
    assert scan_all(clusters.dst, one) == scan_all(clusters.dst, two)


def test_open_target_prefers_thrift2(clusters: Clusters, table: str, tmp_path: Path) -> None:
    clusters.create(table, source=False)
    endpoints = clusters.dst_endpoints
    exact = open_target(endpoints)
    assert isinstance(exact, ClientTarget)
    exact.close()
    without_thrift2 = replace(endpoints, thrift2=None)
    policy = open_target(without_thrift2, allow_lossy_deletes=True)
    assert isinstance(policy, Thrift1Target) and policy.allow_lossy_deletes
    try:
        wal = make_wal(tmp_path / "wal.o", entries_for(table, EXACT_CALLS[:1]))
        replay_file(wal, ReplaySpec(), policy)
    finally:
        policy.close()
    assert len(scan_all(clusters.dst, table)) == len(EXACT_CALLS[0])
