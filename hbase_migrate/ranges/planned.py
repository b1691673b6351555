"""The key ranges a migration's tables are cut into: planned once (region boundaries split
to the cell budget, :mod:`hbase_migrate.ranges.plan`) and kept in the ledger, so that the
copy, its reruns and every validation use the same ranges. The snapshot copy plans in a
pass that copies the first ranges too (:func:`plan_copying`), ``[ranges] threads`` regions
at once."""

from __future__ import annotations

import time

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.config import MigrationSpec
from hbase_migrate.limits import Throttle
from hbase_migrate.ranges.engine import in_threads
from hbase_migrate.ranges.keyrange import KeyRange, RangeError
from hbase_migrate.ranges.lent import lent_client
from hbase_migrate.ranges.plan import (
    CopyBudget,
    CopyWhilePlanning,
    PlannedRange,
    plan_ranges,
    plan_region,
)
from hbase_migrate.ranges.tasks import RangeCopy


def planned_ranges(ledger: Ledger, migration_id: int, spec: MigrationSpec, table: str,
                   time_range: tuple[int, int] | None) -> list[tuple[KeyRange, int | None]]:
    """The table's ranges from the ledger (planned now when none are), each with the cells
    copied when it was copied (None when not yet)."""
    records = ledger.key_ranges(migration_id, table)
    if not records:
        with lent_client(spec.source) as source:
            plan = plan_ranges(source, table, spec.engine.max_cells, time_range)
        records = ledger.plan_key_ranges(
            migration_id, table, [(p.range.start, p.range.stop, p.cells) for p in plan])
    return [(KeyRange(table, r.range_start, r.range_end),
             r.copied_cells if r.copied_at is not None else None) for r in records]


def plan_copying(ledger: Ledger, migration_id: int, step_id: int | None, spec: MigrationSpec,
                 table: str, target_table: str, time_range: tuple[int, int], cells: int,
                 throttle: Throttle | None) -> list[RangeCopy]:
    """Plan ``table`` (unless a plan is recorded) in a pass that copies about ``cells``
    cells of ``time_range`` to ``target_table``, ``[ranges] threads`` regions at once (each
    copies its first rows while the budget they share lasts): the plan is recorded once the
    pass is over, then the ranges it copied, as the copy step ``step_id`` does. Returns
    those ranges. A pass that fails records nothing (what it wrote is written again)."""
    if ledger.key_ranges(migration_id, table):
        return []
    began = time.monotonic()
    with lent_client(spec.source) as source:
        regions = source.regions(table)
    budget = CopyBudget(cells)

    def region_pass(region: RegionDescriptor) -> list[PlannedRange]:
        with lent_client(spec.source) as source, lent_client(spec.target) as target:
            try:
                return plan_region(source, table, region, spec.engine.max_cells, time_range,
                                   CopyWhilePlanning(target, target_table, cells,
                                                     throttle=throttle), budget)
            except Exception as exc:
                where = KeyRange(table, region.start_key, region.end_key)
                raise RangeError(f"copy of range {where} (planning it) failed: {exc}"
                                 ) from exc

    threads = min(spec.engine.threads, len(regions))
    passes = (in_threads(threads, region_pass, regions, what=f"plan {table}") if threads > 1
              else [region_pass(r) for r in regions])
    plan = [p for ranges in passes for p in ranges]
    seconds = time.monotonic() - began
    records = ledger.plan_key_ranges(migration_id, table,
                                     [(p.range.start, p.range.stop, p.cells) for p in plan])
    recorded = {(r.range_start, r.range_end) for r in records}
    copied = [p for p in plan if p.copied and (p.range.start, p.range.stop) in recorded]
    total = sum(p.cells for p in plan if p.copied) or 1
    for p in copied:  # (a plan recorded meanwhile by another process has other ranges)
        ledger.record_range_copied(migration_id, table, p.range.start, step_id, p.rows,
                                   p.cells)
    return [RangeCopy(p.range, p.rows, p.cells, seconds * p.cells / total) for p in copied]
