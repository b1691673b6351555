"""The Thrift1 fidelity policy as planned calls (no server): one timestamp per call,
exact DeleteColumn/DeleteFamily, Delete(8) only on one-version families, the rest refused
unless lossy deletes are allowed, every approximation counted."""

from __future__ import annotations

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.replay.errors import InexpressibleMutationError
from hbase_migrate.replay.mutations import Kind, WalPosition, to_mutations
from hbase_migrate.replay.thrift1_target import (
    DELETE_LOSSY,
    DELETE_VERSIONS_1,
    FAMILY_VERSION_LOSSY,
    Thrift1Planner,
)
from hbase_migrate.wal.model import Cell, CellType

DESC = TableDescriptor("t", (FamilyDescriptor(b"d", max_versions=3),
                             FamilyDescriptor(b"m", max_versions=1)))
POS = WalPosition("wal.9", 300, 4)


def plan(cells: list[Cell], lossy: bool = False) -> tuple[list[tuple[int, Kind, dict[
        bytes, list[tuple[bytes, bytes | None]]]]], dict[str, int]]:
    planner = Thrift1Planner(DESC, lossy)
    calls = planner.plan(to_mutations(cells, POS))
    return [(c.timestamp, c.kind, c.rows) for c in calls], dict(planner.approximations)


def test_puts_are_grouped_by_timestamp_keeping_runs_in_order() -> None:
    cells = [Cell(b"a", b"d", b"x", 1, CellType.PUT, b"1"),
             Cell(b"a", b"d", b"y", 2, CellType.PUT, b"2"),
             Cell(b"b", b"d", b"x", 1, CellType.PUT, b"3"),
             Cell(b"b", b"d", b"x", 9, CellType.DELETE_COLUMN),
             Cell(b"b", b"m", b"", 9, CellType.DELETE_FAMILY),
             Cell(b"c", b"d", b"z", 2, CellType.PUT, b"4")]
    calls, approx = plan(cells)
    assert calls == [
        (1, Kind.PUT, {b"a": [(b"d:x", b"1")], b"b": [(b"d:x", b"3")]}),
        (2, Kind.PUT, {b"a": [(b"d:y", b"2")]}),
        (9, Kind.DELETE, {b"b": [(b"d:x", None), (b"m", None)]}),
        (2, Kind.PUT, {b"c": [(b"d:z", b"4")]}),
    ]
    assert approx == {}


def test_single_version_delete_on_a_one_version_family_becomes_delete_column() -> None:
    calls, approx = plan([Cell(b"r", b"m", b"q", 7, CellType.DELETE)])
    assert calls == [(7, Kind.DELETE, {b"r": [(b"m:q", None)]})]
    assert approx == {DELETE_VERSIONS_1: 1}


@pytest.mark.parametrize(("cell", "kind"), [
    (Cell(b"r\x01", b"d", b"q", 7, CellType.DELETE), "Delete"),
    (Cell(b"r\x01", b"d", b"", 7, CellType.DELETE_FAMILY_VERSION), "DeleteFamilyVersion"),
    (Cell(b"r\x01", b"m", b"", 7, CellType.DELETE_FAMILY_VERSION), "DeleteFamilyVersion"),
])
def test_inexpressible_deletes_fail_clearly(cell: Cell, kind: str) -> None:
    with pytest.raises(InexpressibleMutationError) as info:
        plan([Cell(b"r", b"d", b"q", 1, CellType.PUT, b"v"), cell])
    text = str(info.value)
    for part in ("wal.9", "byte offset 300", "entry #4", r"row r\x01",
                 f"family {cell.family.decode()}", kind):
        assert part in text


def test_lossy_deletes_are_approximated_and_counted() -> None:
    cells = [Cell(b"r", b"d", b"q", 7, CellType.DELETE),
             Cell(b"r", b"d", b"", 8, CellType.DELETE_FAMILY_VERSION),
             Cell(b"r", b"m", b"q", 8, CellType.DELETE)]
    calls, approx = plan(cells, lossy=True)
    assert calls == [(7, Kind.DELETE, {b"r": [(b"d:q", None)]}),
                     (8, Kind.DELETE, {b"r": [(b"d", None), (b"m:q", None)]})]
    assert approx == {DELETE_LOSSY: 1, FAMILY_VERSION_LOSSY: 1, DELETE_VERSIONS_1: 1}
