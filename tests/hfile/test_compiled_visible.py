"""The compiled scan matcher against the pure-Python reference (``visible.py``) on generated
store cells: every delete type, duplicates, TTL tags, timestamps at the ends of the range,
the families' rules and the scan's time range and versions drawn at random."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.hfile.visible import VISIBLE, FamilyRules, ScanSpec, reference_visible_cells
from hbase_migrate.wal.model import Cell, Tag

LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1
TIMES = st.one_of(st.integers(0, 4), st.integers(0, 4), st.integers(0, 12),
                  st.sampled_from([LONG_MIN, LONG_MAX, -5, 1 << 40]))
TTL_TAG = st.integers(-3, 20).map(lambda ms: (Tag(8, ms.to_bytes(8, "big", signed=True)),))
CELLS = st.lists(st.builds(
    lambda row, family, qualifier, ts, kind, tags, mvcc: StoreCell(
        Cell(row, family, qualifier, ts, kind, b"v", tags), mvcc),
    st.sampled_from([b"a", b"b"]), st.sampled_from([b"f", b"g"]),
    st.sampled_from([b"q", b"q", b"r", b""]), TIMES, st.sampled_from([4, 4, 4, 8, 8, 10, 12, 14]),
    st.one_of(st.just(()), TTL_TAG, st.just((Tag(1, b"x"),))), st.integers(0, 3)),
    max_size=40)
RULES = st.builds(FamilyRules, st.integers(1, 4), st.integers(0, 2),
                  st.one_of(st.none(), st.integers(0, 15)),
                  st.sampled_from(["FALSE", "TRUE", "TTL"]))
SCANS = st.builds(ScanSpec, st.integers(0, 30), st.one_of(st.just(0), st.integers(-2, 8)),
                  st.one_of(st.just(LONG_MAX), st.integers(0, 14)), st.integers(1, 4))


def scan_order(cells: list[StoreCell]) -> list[StoreCell]:
    return sorted(cells, key=lambda s: (s.cell.row, s.cell.family, s.cell.qualifier,
                                        -s.cell.timestamp, -s.cell.type, -s.mvcc))


@settings(max_examples=300, deadline=None)
@given(CELLS, RULES, RULES, SCANS)
def test_the_compiled_matcher_returns_the_references_cells(
        cells: list[StoreCell], f_rules: FamilyRules, g_rules: FamilyRules,
        scan: ScanSpec) -> None:
    compiled: Any = VISIBLE.module
    if compiled is None:
        pytest.skip("the compiled scan matcher is not built")
    ordered = scan_order(cells)
    rules = {b"f": f_rules, b"g": g_rules}
    found = compiled.visible_cells(ordered, rules, scan)
    assert found is not None
    assert list(found) == list(reference_visible_cells(ordered, rules, scan))


def test_a_family_without_rules_is_refused_as_the_reference_does() -> None:
    compiled: Any = VISIBLE.module
    if compiled is None:
        pytest.skip("the compiled scan matcher is not built")
    cells = [StoreCell(Cell(b"r", b"h", b"q", 1, 4, b"v"), 0)]
    spec = ScanSpec(now_ms=5)
    for matcher in (compiled.visible_cells, reference_visible_cells):
        with pytest.raises(ValueError, match="cell of family b'h', which no rules name"):
            list(matcher(cells, {b"f": FamilyRules()}, spec))


def test_times_past_64_bits_are_the_references() -> None:
    compiled: Any = VISIBLE.module
    if compiled is None:
        pytest.skip("the compiled scan matcher is not built")
    too_late = ScanSpec(now_ms=1 << 64)  # now - TTL past 64 bits
    assert compiled.visible_cells([], {b"f": FamilyRules(ttl_ms=5)}, too_late) is None
