"""What a normal scan returns from a region's store cells: delete types, versions, TTL,
MIN_VERSIONS, KEEP_DELETED_CELLS and time ranges on small hand-made cases, each expectation
worked out from HBase's documented semantics (the reference guide's "Versions", "Delete",
"Keeping Deleted Cells", "Time To Live")."""

from __future__ import annotations

import pytest

from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.hfile.visible import FamilyRules, ScanSpec, visible_cells
from hbase_migrate.wal.model import Cell, CellType, Tag

PUT, DEL, DEL_COL, DEL_FAM, DEL_FAM_VER = (CellType.PUT, CellType.DELETE,
                                           CellType.DELETE_COLUMN, CellType.DELETE_FAMILY,
                                           CellType.DELETE_FAMILY_VERSION)
F, G = b"f", b"g"
pytestmark = pytest.mark.usefixtures("both_matchers")


def cell(row: bytes, qualifier: bytes, ts: int, kind: int = PUT, family: bytes = F,
         value: bytes = b"", tags: tuple[Tag, ...] = (), mvcc: int = 1) -> StoreCell:
    return StoreCell(Cell(row, family, qualifier, ts, kind, value or b"v%d" % ts, tags), mvcc)


def scan(cells: list[StoreCell], rules: FamilyRules | None = None, *, versions: int = 1,
         now: int = 10_000, min_ts: int = 0, max_ts: int = (1 << 63) - 1,
         families: tuple[bytes, ...] = (F, G)) -> list[tuple[bytes, bytes, bytes, int]]:
    """The (row, family, qualifier, timestamp) a scan returns; the input put in scan order
    by a plain sort (row, family, qualifier up; timestamp, type, mvcc down)."""
    ordered = sorted(cells, key=lambda s: (s.cell.row, s.cell.family, s.cell.qualifier,
                                           -s.cell.timestamp, -s.cell.type, -s.mvcc))
    given = rules or FamilyRules(max_versions=10)
    spec = ScanSpec(now_ms=now, min_ts=min_ts, max_ts=max_ts, max_versions=versions)
    return [(c.row, c.family, c.qualifier, c.timestamp)
            for c in visible_cells(ordered, dict.fromkeys(families, given), spec)]


def test_a_delete_hides_exactly_its_version() -> None:
    cells = [cell(b"r", b"q", 10), cell(b"r", b"q", 9), cell(b"r", b"q", 8),
             cell(b"r", b"q", 9, DEL)]
    assert scan(cells, versions=5) == [(b"r", F, b"q", 10), (b"r", F, b"q", 8)]


def test_two_deletes_of_a_column_hide_their_two_versions() -> None:
    cells = [cell(b"r", b"q", 10), cell(b"r", b"q", 9), cell(b"r", b"q", 8),
             cell(b"r", b"q", 10, DEL), cell(b"r", b"q", 9, DEL)]
    assert scan(cells, versions=5) == [(b"r", F, b"q", 8)]


def test_a_delete_of_a_timestamp_with_no_put_hides_nothing() -> None:
    cells = [cell(b"r", b"q", 10), cell(b"r", b"q", 8), cell(b"r", b"q", 9, DEL)]
    assert scan(cells, versions=5) == [(b"r", F, b"q", 10), (b"r", F, b"q", 8)]


def test_a_delete_column_hides_its_timestamp_and_older() -> None:
    cells = [cell(b"r", b"q", 10), cell(b"r", b"q", 9), cell(b"r", b"q", 8),
             cell(b"r", b"q", 9, DEL_COL), cell(b"r", b"p", 5)]
    assert scan(cells, versions=5) == [(b"r", F, b"p", 5), (b"r", F, b"q", 10)]


def test_a_delete_family_hides_every_column_up_to_its_timestamp() -> None:
    cells = [cell(b"r", b"a", 10), cell(b"r", b"a", 9), cell(b"r", b"b", 8),
             cell(b"r", b"b", 11), cell(b"r", b"", 9, DEL_FAM),
             cell(b"r", b"a", 3, family=G), cell(b"s", b"a", 4)]
    assert scan(cells, versions=5) == [(b"r", F, b"a", 10), (b"r", F, b"b", 11),
                                       (b"r", G, b"a", 3), (b"s", F, b"a", 4)]


def test_a_delete_family_version_hides_that_timestamp_in_every_column() -> None:
    cells = [cell(b"r", b"a", 9), cell(b"r", b"a", 8), cell(b"r", b"b", 9),
             cell(b"r", b"b", 7), cell(b"r", b"", 9, DEL_FAM_VER)]
    assert scan(cells, versions=5) == [(b"r", F, b"a", 8), (b"r", F, b"b", 7)]


def test_deleted_versions_do_not_count_and_markers_are_never_returned() -> None:
    cells = [cell(b"r", b"q", 10), cell(b"r", b"q", 9), cell(b"r", b"q", 8),
             cell(b"r", b"q", 10, DEL)]
    assert scan(cells) == [(b"r", F, b"q", 9)]
    assert scan(cells, versions=2) == [(b"r", F, b"q", 9), (b"r", F, b"q", 8)]


def test_versions_the_lesser_of_the_family_and_the_scan() -> None:
    cells = [cell(b"r", b"q", ts) for ts in (5, 4, 3, 2)]
    assert scan(cells, FamilyRules(max_versions=2), versions=10) == [
        (b"r", F, b"q", 5), (b"r", F, b"q", 4)]
    assert scan(cells, FamilyRules(max_versions=3), versions=1) == [(b"r", F, b"q", 5)]


def test_family_ttl_hides_expired_cells_and_min_versions_keeps_some() -> None:
    cells = [cell(b"r", b"a", 950), cell(b"r", b"a", 850), cell(b"r", b"b", 850),
             cell(b"r", b"b", 800), cell(b"r", b"b", 700)]
    rules = FamilyRules(max_versions=5, ttl_ms=100)
    assert scan(cells, rules, versions=5, now=1000) == [(b"r", F, b"a", 950)]
    kept = FamilyRules(max_versions=5, min_versions=2, ttl_ms=100)
    assert scan(cells, kept, versions=5, now=1000) == [
        (b"r", F, b"a", 950), (b"r", F, b"a", 850), (b"r", F, b"b", 850), (b"r", F, b"b", 800)]


def test_a_cell_ttl_tag_expires_that_cell_only() -> None:
    def ttl(ms: int) -> tuple[Tag, ...]:
        return (Tag(8, ms.to_bytes(8, "big")),)
    cells = [cell(b"r", b"a", 900, tags=ttl(50)), cell(b"r", b"b", 900, tags=ttl(200)),
             cell(b"r", b"c", 900, tags=(Tag(1, b"x"),))]
    assert scan(cells, now=1000) == [(b"r", F, b"b", 900), (b"r", F, b"c", 900)]


def test_a_cell_written_twice_is_returned_once_newest_first() -> None:
    older = cell(b"r", b"q", 7, value=b"old", mvcc=3)
    newer = cell(b"r", b"q", 7, value=b"new", mvcc=9)
    ordered = [newer, older]
    got = list(visible_cells(ordered, {F: FamilyRules(max_versions=3)},
                             ScanSpec(now_ms=0, max_versions=3)))
    assert [c.value for c in got] == [b"new"]


def test_time_range_selects_and_versions_count_inside_it() -> None:
    cells = [cell(b"r", b"q", ts) for ts in (15, 10, 8, 5)]
    assert scan(cells, min_ts=6, max_ts=12) == [(b"r", F, b"q", 10)]
    assert scan(cells, versions=5, min_ts=6, max_ts=12) == [(b"r", F, b"q", 10),
                                                            (b"r", F, b"q", 8)]


@pytest.mark.parametrize(("keep", "expected"), [
    ("FALSE", []), ("TRUE", [(b"r", F, b"q", 8)]), ("TTL", [(b"r", F, b"q", 8)])])
def test_keep_deleted_cells_lets_a_time_range_before_the_delete_see_the_cell(
        keep: str, expected: list[tuple[bytes, bytes, bytes, int]]) -> None:
    cells = [cell(b"r", b"q", 8), cell(b"r", b"q", 12, DEL_COL)]
    rules = FamilyRules(max_versions=3, keep_deleted_cells=keep)
    assert scan(cells, rules, max_ts=10) == expected
    assert scan(cells, rules) == []  # over all time the delete applies whatever the setting


def test_deletes_stay_in_their_row_and_family() -> None:
    cells = [cell(b"r", b"q", 5, DEL_COL), cell(b"r", b"", 9, DEL_FAM, family=G),
             cell(b"r", b"q", 4), cell(b"r", b"q", 4, family=G), cell(b"s", b"q", 4)]
    assert scan(cells) == [(b"s", F, b"q", 4)]
    assert scan([*cells, cell(b"r", b"q", 6)]) == [(b"r", F, b"q", 6), (b"s", F, b"q", 4)]
