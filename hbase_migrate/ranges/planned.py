"""The key ranges a migration's tables are cut into: planned once (region boundaries split
to the cell budget, :mod:`hbase_migrate.ranges.plan`) and kept in the ledger, so that the
copy, its reruns and every validation use the same ranges. The snapshot copy plans in a
pass that copies the first ranges too (:func:`plan_copying`), ``[ranges] threads`` regions
at once. A pass stopped by the user records the ranges it copied: the keys it left are the
plan's holes (:func:`plan_holes`), planned by the next pass."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import replace

from hbase_migrate import runstate
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import KeyRangeRecord
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
    plan_region,
)
from hbase_migrate.ranges.tasks import RangeCopy

Hole = tuple[bytes, bytes]  # [start, stop) of keys no planned range covers; b"" is open


def plan_holes(records: Sequence[KeyRangeRecord]) -> list[Hole]:
    """The keys the recorded ranges of a table leave out (all of them when none is
    recorded); none once the plan is whole."""
    holes: list[Hole] = []
    covered = b""  # every key before this is covered
    for r in sorted(records, key=lambda r: r.range_start):
        if r.range_start > covered:
            holes.append((covered, r.range_start))
        if not r.range_end:
            return holes
        covered = max(covered, r.range_end)
    return [*holes, (covered, b"")]


def hole_parts(start: bytes, stop: bytes, holes: Sequence[Hole]) -> list[Hole]:
    """The parts of keys ``[start, stop)`` inside ``holes``."""
    parts = []
    for hole_start, hole_stop in holes:
        begin = max(start, hole_start)
        ends = [e for e in (stop, hole_stop) if e]
        end = min(ends) if ends else b""
        if not end or begin < end:
            parts.append((begin, end))
    return parts


def hole_regions(regions: Sequence[RegionDescriptor], holes: Sequence[Hole]
                 ) -> list[RegionDescriptor]:
    """The parts of ``regions`` inside ``holes``, as regions of their own."""
    return [replace(region, start_key=begin, end_key=end) for region in regions
            for begin, end in hole_parts(region.start_key, region.end_key, holes)]


def planned_ranges(ledger: Ledger, migration_id: int, spec: MigrationSpec, table: str,
                   time_range: tuple[int, int] | None) -> list[tuple[KeyRange, int | None]]:
    """The table's ranges from the ledger (the keys no range covers planned now), each with
    the cells copied when it was copied (None when not yet)."""
    records = ledger.key_ranges(migration_id, table)
    holes = plan_holes(records)
    if holes:
        with lent_client(spec.source) as source:
            plan = [p for region in hole_regions(source.regions(table), holes)
                    for p in plan_region(source, table, region, spec.engine.max_cells,
                                         time_range)]
        runstate.check_stop(f"planning table {table}")
        records = ledger.plan_key_ranges(
            migration_id, table, [(p.range.start, p.range.stop, p.cells) for p in plan])
    return [(KeyRange(table, r.range_start, r.range_end),
             r.copied_cells if r.copied_at is not None else None) for r in records]


def plan_copying(ledger: Ledger, migration_id: int, step_id: int | None, spec: MigrationSpec,
                 table: str, target_table: str, time_range: tuple[int, int], cells: int,
                 throttle: Throttle | None) -> list[RangeCopy]:
    """Plan ``table`` (the keys no recorded range covers: all of them at first) in a pass
    that copies about ``cells`` cells of ``time_range`` to ``target_table``, ``[ranges]
    threads`` regions at once (each copies its first rows while the budget they share
    lasts): each region's plan is recorded as its pass ends, then the ranges it copied, as
    the copy step ``step_id`` does. Returns those ranges. A region whose pass fails records
    nothing (what it wrote is written again; the regions done stay done); a pass stopped by
    the user records what it copied, then raises :class:`~hbase_migrate.runstate.Stopped`."""
    holes = plan_holes(ledger.key_ranges(migration_id, table))
    if not holes:
        return []
    began = time.monotonic()
    with lent_client(spec.source) as source:
        regions = hole_regions(source.regions(table), holes)
    budget = CopyBudget(cells)
    meter = runstate.meter
    meter.regions_total = (meter.regions_total or 0) + len(regions)
    copied: list[PlannedRange] = []  # recorded as each region's pass ends
    recording = threading.Lock()  # the region passes end on their own threads

    def record(plan: list[PlannedRange]) -> None:
        with recording:
            records = ledger.plan_key_ranges(migration_id, table,
                                             [(p.range.start, p.range.stop, p.cells)
                                              for p in plan])
            recorded = {(r.range_start, r.range_end) for r in records}
            for p in plan:  # (a plan recorded meanwhile by another process has other ranges)
                if p.copied and (p.range.start, p.range.stop) in recorded:
                    ledger.record_range_copied(migration_id, table, p.range.start, step_id,
                                               p.rows, p.cells)
                    copied.append(p)

    def region_pass(region: RegionDescriptor) -> list[PlannedRange]:
        with lent_client(spec.source) as source, lent_client(spec.target) as target:
            try:
                ranges = plan_region(source, table, region, spec.engine.max_cells,
                                     time_range, CopyWhilePlanning(target, target_table, cells,
                                                                   throttle=throttle), budget)
            except Exception as exc:
                where = KeyRange(table, region.start_key, region.end_key)
                raise RangeError(f"copy of range {where} (planning it) failed: {exc}"
                                 ) from exc
        record(ranges)
        meter.regions_done += 1
        return ranges

    # on threads even one at a time: Ctrl-C reaches the calling thread alone, which then
    # asks the passes to stop at their next row and records what they copied
    try:
        in_threads(max(1, min(spec.engine.threads, len(regions))), region_pass, regions,
                   what=f"plan {table}")
    except BaseException:
        if not runstate.stop_requested():
            raise
    seconds = time.monotonic() - began
    copied.sort(key=lambda p: p.range.start)
    total = sum(p.cells for p in copied) or 1
    runstate.check_stop(f"planning table {table}")
    return [RangeCopy(p.range, p.rows, p.cells, seconds * p.cells / total) for p in copied]
