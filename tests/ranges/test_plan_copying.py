"""The pass that plans a table's ranges and copies its first cells on the way: the same
ranges as a counting pass when it copies everything, a prefix of whole ranges copied when it
stops at its budget, and nothing recorded when it fails. The copy step runs it on
``[ranges] threads`` regions at once, sharing the budget: every cell is copied once."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.config import load_config
from hbase_migrate.lifecycle import prepare, snapshot
from hbase_migrate.ranges.keyrange import RangeError
from hbase_migrate.ranges.plan import (
    CopyBudget,
    CopyWhilePlanning,
    PlannedRange,
    plan_ranges,
    plan_region,
)
from hbase_migrate.ranges.planned import plan_copying
from minihbase.server import MiniHBase
from tests.support.minicluster import EmbeddedClusters, copy_table_schema, run_workload, t2
from tests.support.ranges import BUDGET, configure

pytestmark = pytest.mark.integration
TABLE = "orders"


@pytest.fixture(scope="module")
def clusters(tmp_path_factory: pytest.TempPathFactory) -> object:
    folder = tmp_path_factory.mktemp("plan-copying")
    with EmbeddedClusters(folder) as clusters:
        src, dst = clusters.pair()
        run_workload(src, TABLE, seed=41, ops=600)
        yield src, dst


def covers_every_key(plan: list[PlannedRange]) -> bool:
    bounds = [(p.range.start, p.range.stop) for p in plan]
    return (bounds[0][0] == b"" and bounds[-1][1] == b""
            and all(a[1] == b[0] for a, b in pairwise(bounds)))


def test_a_pass_within_its_budget_copies_every_range_the_counting_pass_plans(
        clusters: tuple[MiniHBase, MiniHBase]) -> None:
    src, dst = clusters
    copy_table_schema(src, dst, TABLE)
    with t2(src) as source, t2(dst) as target:
        counted = plan_ranges(source, TABLE, BUDGET)
        copied = plan_ranges(source, TABLE, BUDGET,
                             copy=CopyWhilePlanning(target, TABLE, cells=10**9))
        expected = sorted(c for piece in source.scan(TABLE) for c in piece)
        assert sorted(c for piece in target.scan(TABLE) for c in piece) == expected
    assert len(counted) > 4 and covers_every_key(counted)
    assert [(p.range, p.cells, p.rows) for p in copied] == [
        (p.range, p.cells, p.rows) for p in counted]
    assert all(p.copied for p in copied) and not any(p.copied for p in counted)
    assert sum(p.cells for p in copied) == len(expected)


def test_a_pass_over_its_budget_copies_whole_ranges_up_to_it_and_counts_the_rest(
        clusters: tuple[MiniHBase, MiniHBase]) -> None:
    src, dst = clusters
    with t2(src) as source, t2(dst) as target:
        total = sum(len(piece) for piece in source.scan(TABLE))
        target.disable_table(TABLE)
        target.delete_table(TABLE)
        copy_table_schema(src, dst, TABLE)
        budget = total // 3
        plan = plan_ranges(source, TABLE, BUDGET,
                           copy=CopyWhilePlanning(target, TABLE, cells=budget))
        copied = [p for p in plan if p.copied]
        assert covers_every_key(plan) and 0 < len(copied) < len(plan)
        assert plan[:len(copied)] == copied  # a prefix of the table
        stop = copied[-1].range.stop
        # exactly the rows before the first range not copied are on the target
        expected = sorted(c for piece in source.scan(TABLE, b"", stop) for c in piece)
        assert sorted(c for piece in target.scan(TABLE) for c in piece) == expected
        assert sum(p.cells for p in copied) == len(expected) >= budget
        # it stopped at the first row to start past the budget
        last_row = max(c.row for c in expected)
        assert len(expected) - sum(1 for c in expected if c.row == last_row) < budget
        assert sum(p.cells for p in plan) == total
        assert sum(p.rows for p in plan) == len({c.row for piece in source.scan(TABLE)
                                                 for c in piece})
    assert all(p.cells <= BUDGET or p.rows == 1 for p in plan)


def test_a_failed_pass_keeps_only_the_regions_it_finished_and_the_next_copies_the_rest(
        clusters: tuple[MiniHBase, MiniHBase], tmp_path: Path) -> None:
    src, dst = clusters
    spec = load_config(configure(tmp_path, src, dst, master="in-process"))
    with t2(dst) as target:
        if target.table_exists(TABLE):
            target.disable_table(TABLE)
            target.delete_table(TABLE)
    with Ledger.open(spec.ledger_url) as ledger:
        mid = ledger.ensure_spec(spec).id
        assert spec.engine.threads > 1  # every region with rows fails: the first is raised
        with pytest.raises(RangeError, match=f"copy of range {TABLE} .* failed") as failed:
            plan_copying(ledger, mid, None, spec, TABLE, TABLE, (0, 2**62), 10**9, None)
        assert "\n" not in str(failed.value)
        # a region's plan is recorded as its pass ends: only empty ones could end (the target
        # table is missing), each recorded as copied with nothing in it
        kept = ledger.key_ranges(mid, TABLE)
        assert all(r.copied_cells == r.planned_cells == 0 for r in kept), kept
    with t2(src) as source:
        assert len(kept) < len(source.regions(TABLE))
    prepare(spec)  # the target table now exists
    with Ledger.open(spec.ledger_url) as ledger:
        step = ledger.steps(mid, "prepare")[0].id  # a step to credit the copy to
        done = plan_copying(ledger, mid, step, spec, TABLE, TABLE, (0, 2**62), 10**9, None)
        records = ledger.key_ranges(mid, TABLE)
    new = [r for r in records if r not in kept]
    assert [(c.range.start, c.range.stop, c.rows, c.cells) for c in done] == [
        (r.range_start, r.range_end, r.copied_rows, r.copied_cells) for r in new]
    assert all(r.copy_step_id == step and r.copied_cells == r.planned_cells for r in new)
    with t2(src) as source, t2(dst) as target:
        assert sorted(c for p in target.scan(TABLE) for c in p) == sorted(
            c for p in source.scan(TABLE) for c in p)


def test_regions_planned_at_once_share_the_budget_and_the_step_copies_the_rest_once(
        clusters: tuple[MiniHBase, MiniHBase], tmp_path: Path) -> None:
    src, dst = clusters
    with t2(src) as source, t2(dst) as target:
        total = sum(len(piece) for piece in source.scan(TABLE))
        regions = len(source.regions(TABLE))
        if target.table_exists(TABLE):
            target.disable_table(TABLE)
            target.delete_table(TABLE)
    spec = load_config(configure(tmp_path, src, dst, master="in-process"))
    assert regions > 1 and spec.engine.threads > 1
    prepare(spec)
    with Ledger.open(spec.ledger_url) as ledger:
        mid = ledger.ensure_spec(spec).id
        step = ledger.steps(mid, "prepare")[0].id
        # the regions' passes share a budget of half the table
        first = plan_copying(ledger, mid, step, spec, TABLE, TABLE, (0, 2**62), total // 2,
                             None)
    assert total // 2 <= sum(c.cells for c in first) < total
    result = snapshot(spec).to_json()  # the ranges the pass left, one task each
    assert result["ranges_skipped"] == len(first)
    assert result["ranges_copied"] == result["ranges"] - len(first) > 0
    assert [c["start"] for c in result["copied"]] == sorted(c["start"] for c in result["copied"])
    with Ledger.open(spec.ledger_url) as ledger:
        records = ledger.key_ranges(mid, TABLE)
    assert all(r.copied_cells == r.planned_cells for r in records)
    with t2(src) as source, t2(dst) as target:
        expected = sorted(c for p in source.scan(TABLE) for c in p)
        assert sorted(c for p in target.scan(TABLE) for c in p) == expected
    # each cell counted once: by the pass, or by the range task of a range it left
    assert sum(r.copied_cells or 0 for r in records) == len(expected) == total


class SpentMeanwhile(CopyBudget):
    """One cell left when a region's pass looks, taken by another region before this one's
    first row comes in."""

    def spent(self) -> bool:
        spent = super().spent()
        self.spend(1)
        return spent


def test_a_region_whose_budget_went_before_its_first_row_is_only_counted(
        clusters: tuple[MiniHBase, MiniHBase]) -> None:
    src, dst = clusters
    copy_table_schema(src, dst, TABLE)
    with t2(src) as source, t2(dst) as target:
        region = source.regions(TABLE)[0]
        counted = plan_region(source, TABLE, region, BUDGET)
        planned = plan_region(source, TABLE, region, BUDGET,
                              copy=CopyWhilePlanning(target, TABLE, cells=1),
                              budget=SpentMeanwhile(1))
    assert [(p.range, p.cells, p.copied) for p in planned] == [
        (p.range, p.cells, False) for p in counted]
