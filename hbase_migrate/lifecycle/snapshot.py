"""Step 2: fix the watermark T0 and copy every retained cell version written before it.

The copy runs on the range engine (:mod:`hbase_migrate.ranges`): each table's key ranges are
planned once (region boundaries split to the cell budget) and kept in the ledger; one task
per range reads ``[0, T0)`` with timestamps and writes the target, and records the range as
copied when it is done. The pass that plans a table copies it on the way, ``[ranges]
threads`` regions at once (:func:`~hbase_migrate.ranges.planned.plan_copying`), all of it
when the copy runs in-process (the table is read once), about ``auto_cells`` cells when the
rest may go to a Spark cluster (:func:`planning_copy_cells`).
A rerun after a failure keeps the T0 (and the WAL anchors) and the ranges the first attempt
fixed, and copies only the ranges not yet done. A migration whose copy finished is skipped.

With ``[snapshot] method = "hbase"`` (or ``method="hbase"``) the copy is an HBase snapshot
of each table instead (:mod:`hbase_migrate.snapshot.hbase_method`): T0 is the earliest
snapshot's creation time, the snapshots' files are exported one task per file, and each is
cloned into its target table. A rerun uses the same snapshots and copies only the files the
target lacks or holds different.

With ``[snapshot] method = "bulk"`` the copy is the scan copy's ranges, planned first (by a
counting pass: nothing is written while planning), each written as HFiles and bulk-loaded
into the target (:mod:`hbase_migrate.snapshot.bulk_copy`), recorded once its load is
acknowledged.

With ``auto`` (the default) each step resolves the method once
(:func:`resolve_method`, :mod:`hbase_migrate.snapshot.choose`): ``hbase`` when the clusters
allow the file copy, else ``bulk`` when ``[snapshot] auto_bulk`` is on and the target takes
a bulk load, else ``scan``; the step's metrics (``method``, ``method_reason``) say which and
why. A copy already begun keeps the method it began with.

A ``scan`` copy can be split into parts that run and are retried on their own (one Airflow
task each): :func:`snapshot_parts` is the ``snapshot-plan`` step, which fixes T0 (with its
WAL anchors) and the range plan once and returns the parts (groups of the planned ranges,
:mod:`hbase_migrate.ranges.groups`); ``snapshot(spec, part=(i, n))`` is a ``snapshot-part``
step copying the ranges of its group not yet copied, always at the recorded T0 (a part
never fixes a watermark: without one it is refused); and
:func:`~hbase_migrate.lifecycle.snapshot_finish.finish_snapshot` is the ``snapshot`` step
that moves the migration to ``copied`` once every planned range is copied. A part retried
late still copies at T0: replay from T0 less the margin applies every later edit, so the
copy stays exact; the cost of the delay is that the source must keep its WAL files since T0
until replay has read them (gaps are reported as always).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from hbase_migrate import runstate
from hbase_migrate.audit.ledger import now_ms
from hbase_migrate.audit.records import (
    KeyRangeRecord,
    MigrationState,
    Provenance,
    StepRecord,
    StepStatus,
)
from hbase_migrate.audit.status import SNAPSHOT_PART_STEP, SNAPSHOT_PLAN_STEP
from hbase_migrate.config import AUTO, IN_PROCESS, SNAPSHOT_METHODS, MigrationSpec
from hbase_migrate.errors import ConfigError
from hbase_migrate.hbase import open_cluster
from hbase_migrate.heavy_imports import fewer_collections
from hbase_migrate.lifecycle.missing import check_schema
from hbase_migrate.lifecycle.result import StepResult
from hbase_migrate.lifecycle.step import (
    StepContext,
    StepRefusedError,
    recorded_step,
    require,
)
from hbase_migrate.limits import ThrottlePlan, step_limits
from hbase_migrate.ranges.choice import (
    EngineChoice,
    check_master,
    choose_engine,
    only_in_process,
)
from hbase_migrate.ranges.engine import Progress, bind, range_engine
from hbase_migrate.ranges.groups import part_count, range_group
from hbase_migrate.ranges.keyrange import KeyRange, RangeError
from hbase_migrate.ranges.planned import plan_copying, plan_holes, planned_ranges
from hbase_migrate.ranges.tasks import CopyJob, RangeCopy, copy_range_task, task_throttle
from hbase_migrate.replay.watermark import record_watermark
from hbase_migrate.snapshot.bulk_copy import bulk_copy_range_task
from hbase_migrate.snapshot.choose import AUTO_METHOD, MethodChoice, choose_method
from hbase_migrate.snapshot.export import ExportJob
from hbase_migrate.snapshot.hbase_method import (
    SnapshotMethodError,
    clone_snapshots,
    export_snapshots,
    hdfs_root,
    take_snapshots,
)
from hbase_migrate.snapshot.plan import record_snapshot_plan
from hbase_migrate.snapshot.probes import ClusterProbes
from hbase_migrate.timeutil import format_time

log = logging.getLogger(__name__)
EVERY_CELL = sys.maxsize  # a planning pass's budget that never runs out
Announce = Callable[[str], None]  # a line for the user as soon as it is known


def snapshot(spec: MigrationSpec, *, watermark: int | None = None,
             provenance: Provenance | None = None, master: str | None = None,
             progress: Progress | None = None, method: str | None = None,
             keep_snapshot: bool | None = None, part: tuple[int, int] | None = None,
             announce: Announce | None = None) -> StepResult:
    """Fix T0 (``watermark``, default now) and copy ``[0, T0)`` of every table, one task per
    key range on ``master`` (default: the spec's Spark master; ``auto`` chooses by the
    planned cells, :mod:`hbase_migrate.ranges.choice`); ``progress(done, total)`` as
    ranges finish. ``method`` (default ``[snapshot] method``): ``scan``, or ``hbase`` (T0
    is the snapshots' creation time; ``keep_snapshot`` keeps them, default
    ``[snapshot] keep``).

    ``part`` ``(i, n)`` (``scan`` only): only the i-th of n groups of the planned ranges, at
    the T0 :func:`snapshot_parts` recorded; the migration stays ``copying`` (see the
    module's doc). ``announce`` gets the watermark line as soon as T0 is fixed.

    Ctrl-C stops the copy at the next piece each task reads: the ranges copied are
    recorded, the migration stays ``copying`` and
    :class:`~hbase_migrate.runstate.StepInterrupted` says what was done; a rerun copies
    the rest at the same T0."""
    check_master(master, spec.engine)
    method = copy_method(spec, method, watermark)
    if part is not None:
        return _snapshot_part(spec, part, provenance, master, progress, method, watermark,
                              announce)
    keep = spec.snapshot.keep if keep_snapshot is None else keep_snapshot
    with recorded_step(spec, "snapshot", provenance) as step:
        require(step, MigrationState.SCHEMA_READY, "the snapshot copy", "prepare")
        step.metrics.update(method=method, keep_snapshot=keep)
        t0 = step.migration.watermark
        if skip_copied(step):
            return step.result()
        check_schema(spec)
        method = resolve_method(step, spec, method, watermark)
        if method == "hbase":
            _hbase_copy(step, spec, t0, master, progress, keep)
            step.advance(MigrationState.COPIED)
            return step.result()
        fixed = t0 is None
        if t0 is None:
            t0 = now_ms() if watermark is None else watermark
            step.metrics["anchors"] = record_watermark(step.ledger, step.migration, spec, t0)
        _announce_watermark(announce, t0, fixed)
        step.advance(MigrationState.COPYING)
        step.metrics["watermark"] = t0
        with fewer_collections(), stoppable_copy(step, spec, t0):
            copy_ranges(step, spec, t0, master, progress, bulk=method == "bulk")
        step.metrics.update(copy_totals(step, spec))
        step.advance(MigrationState.COPIED)
        return step.result()


def snapshot_parts(spec: MigrationSpec, *, parts: int | None = None,
                   watermark: int | None = None, method: str | None = None,
                   provenance: Provenance | None = None) -> StepResult:
    """The plan of a copy made in parts (a ``snapshot-plan`` step): fixes T0 (``watermark``,
    default now; a recorded one is kept) and the planned ranges of every table, and lists in
    ``metrics["parts"]`` the parts (``[i, n]``, ``parts`` ways, default ``[ranges] parts``,
    never more than the ranges) for ``snapshot(spec, part=(i, n))``. None with the
    ``hbase`` method (one step copies it, file by file) or once the copy is finished."""
    method = copy_method(spec, method, watermark)
    with recorded_step(spec, SNAPSHOT_PLAN_STEP, provenance) as step:
        require(step, MigrationState.SCHEMA_READY, "the snapshot copy", "prepare")
        step.metrics.update(method=method, parts=[])
        if skip_copied(step):
            return step.result()
        method = resolve_method(step, spec, method, watermark)
        if method == "hbase":
            step.metrics["notes"] = ["the hbase method copies in one step (one task per "
                                     "snapshot file): no parts"]
            return step.result()
        t0 = step.migration.watermark
        if t0 is None:
            t0 = now_ms() if watermark is None else watermark
            step.metrics["anchors"] = record_watermark(step.ledger, step.migration, spec, t0)
        elif watermark is not None and watermark != t0:
            step.metrics["notes"] = [f"watermark T0 {t0} was recorded before: kept (the "
                                     f"watermark {watermark} given is ignored)"]
        step.advance(MigrationState.COPYING)
        records = []
        for t in spec.tables:
            planned_ranges(step.ledger, step.migration.id, spec, t.source, (0, t0))
            records += step.ledger.key_ranges(step.migration.id, t.source)
        n = part_count(parts or spec.engine.parts, len(records))
        step.metrics.update(watermark=t0, ranges=len(records),
                            ranges_copied=sum(r.copied_at is not None for r in records),
                            parts=[[i, n] for i in range(1, n + 1)])
        return step.result()


def _announce_watermark(announce: Announce | None, t0: int, fixed: bool) -> None:
    line = f"watermark T0 = {format_time(t0)}" + ("" if fixed else " (recorded before: kept)")
    log.info("%s", line)
    if announce is not None:
        announce(line)


@contextmanager
def stoppable_copy(step: StepContext, spec: MigrationSpec, t0: int) -> Iterator[None]:
    """A copy the user stops (Ctrl-C) ends as :class:`StepInterrupted` saying what the
    ledger now holds as copied and what a rerun does."""
    try:
        yield
    except (KeyboardInterrupt, runstate.Stopped):
        runstate.request_stop()
        records = [r for t in spec.tables
                   for r in step.ledger.key_ranges(step.migration.id, t.source)]
        done = [r for r in records if r.copied_at is not None]
        holes = sum(len(plan_holes(step.ledger.key_ranges(step.migration.id, t.source)))
                    for t in spec.tables)
        left = f"{len(records) - len(done)} planned range(s)" + (
            f" and {holes} unplanned stretch(es) of keys" if holes else "")
        raise runstate.StepInterrupted(
            f"snapshot of migration {spec.name!r} stopped: {len(done)} key range(s) "
            f"copied and recorded ({sum(r.copied_cells or 0 for r in done)} cells) at "
            f"watermark T0 = {format_time(t0)}; {left} not yet copied. The migration stays "
            "copying: run the same command again to copy only what is left, at the same T0"
        ) from None


def _snapshot_part(spec: MigrationSpec, part: tuple[int, int], provenance: Provenance | None,
                   master: str | None, progress: Progress | None, method: str,
                   watermark: int | None, announce: Announce | None) -> StepResult:
    """One part of a copy made in parts (a ``snapshot-part`` step)."""
    name = f"snapshot part {part[0]}/{part[1]} of migration {spec.name!r}"
    if method == "hbase":
        raise ConfigError(f"{name}: the hbase method copies in one step (one task per "
                          "snapshot file); drop the part, or use the scan method")
    if watermark is not None:
        raise ConfigError(f"{name}: a part copies at the watermark T0 its plan recorded; "
                          "give the watermark to the plan (snapshot --plan)")
    with recorded_step(spec, SNAPSHOT_PART_STEP, provenance) as step:
        require(step, MigrationState.SCHEMA_READY, "the snapshot copy", "prepare")
        step.metrics.update(method=method, part=f"{part[0]}/{part[1]}")
        if skip_copied(step):
            return step.result()
        method = resolve_method(step, spec, method, watermark, parts=True)
        check_schema(spec)
        t0, records = planned_copy(step, spec, name)
        group = [r for r, _ in range_group(records, part)]
        age = max(0, now_ms() - t0)
        step.metrics.update(watermark=t0, watermark_age_ms=age, notes=[
            f"copies at the recorded watermark T0 {t0} ({age // 1000} s ago); replay starts "
            "from it less the margin"])
        _announce_watermark(announce, t0, False)
        with fewer_collections(), stoppable_copy(step, spec, t0):
            copy_ranges(step, spec, t0, master, progress, group, bulk=method == "bulk")
        return step.result()


def copy_method(spec: MigrationSpec, method: str | None, watermark: int | None) -> str:
    """The copy method asked (default ``[snapshot] method``), checked; ``auto`` is left
    for the step to resolve (:func:`resolve_method`)."""
    method = method or spec.snapshot.method
    if method not in SNAPSHOT_METHODS:
        raise ConfigError(f"snapshot method must be one of {', '.join(SNAPSHOT_METHODS)}, "
                          f"got {method!r}")
    if method == "hbase" and watermark is not None:
        raise ConfigError("the hbase snapshot method takes T0 from the snapshot's creation "
                          "time: give no watermark")
    return method


def resolve_method(step: StepContext, spec: MigrationSpec, method: str,
                   watermark: int | None, *, parts: bool = False) -> str:
    """``method``, or what ``auto`` resolves to for this step: the method of the copy
    already begun (a recorded T0), else :func:`~hbase_migrate.snapshot.choose.choose_method`
    on the clusters; recorded in the step's metrics and logged in one line."""
    if method != AUTO_METHOD:
        return method
    choice = begun_method(step) or choose_method(spec, ClusterProbes(),
                                                 watermark=watermark, parts=parts)
    if parts and choice.method == "hbase":  # parts are key ranges: scan whatever began
        choice = MethodChoice("scan", "a copy made in parts is a scan copy (its parts are "
                                      "key ranges)")
    step.metrics.update(choice.to_metrics())
    log.info("%s", choice.line)
    return choice.method


def begun_method(step: StepContext) -> MethodChoice | None:
    """The method of the migration's copy when one began (T0 recorded): that of the newest
    step that recorded one."""
    if step.migration.watermark is None:
        return None
    steps = [s for kind in ("snapshot", SNAPSHOT_PLAN_STEP, SNAPSHOT_PART_STEP)
             for s in step.ledger.steps(step.migration.id, kind)
             if s.id != step.step_id and s.metrics.get("method") in ("scan", "hbase", "bulk")]
    if not steps:
        return None
    began = max(steps, key=lambda s: s.id)
    if "method_reason" in began.metrics:  # auto chose it there, or kept it from before
        choice = MethodChoice.of(began.metrics)
        return replace(choice, kept_from=choice.kept_from or began.id)
    return MethodChoice(str(began.metrics["method"]), "the copy began with it (watermark T0 "
                        "recorded), so it goes on with it", began.id)


def finished_copy(step: StepContext) -> StepRecord | None:
    """The step that finished the migration's copy, if one did."""
    done = [s for s in step.ledger.steps(step.migration.id, "snapshot")
            if s.status is StepStatus.SUCCEEDED]
    return done[-1] if done and step.migration.watermark is not None else None


def skip_copied(step: StepContext) -> bool:
    """Whether the copy is finished already (then the step says so and does nothing)."""
    done = finished_copy(step)
    if done is None:
        return False
    t0 = step.migration.watermark
    step.metrics.update(watermark=t0, skipped=[
        f"copied at watermark {t0} by step #{done.id}: nothing to do"])
    return True


def planned_copy(step: StepContext, spec: MigrationSpec, what: str
                 ) -> tuple[int, list[KeyRangeRecord]]:
    """T0 and the planned ranges of every table of ``spec``, as the plan recorded them;
    refused, naming ``what``, while the copy is not planned."""
    t0, found = step.migration.watermark, []
    for t in spec.tables:
        records = step.ledger.key_ranges(step.migration.id, t.source)
        found += records
        if plan_holes(records):  # none planned, or a plan a stopped copy left unfinished
            t0 = None
    if t0 is None:
        raise StepRefusedError(f"{what}: no watermark T0 and range plan recorded yet; plan "
                               "the copy first (snapshot --plan)")
    return t0, found


def _hbase_copy(step: StepContext, spec: MigrationSpec, t0: int | None, master: str | None,
                progress: Progress | None, keep: bool) -> None:
    """Snapshot, export, clone (:mod:`hbase_migrate.snapshot.hbase_method`)."""
    try:
        source, target = hdfs_root(spec.source), hdfs_root(spec.target)
    except SnapshotMethodError as exc:  # no real HBase there: nothing done, state kept
        raise StepRefusedError(str(exc)) from None
    version = spec.snapshot.hbase_version
    taken = take_snapshots(spec, source, open_cluster(spec.source).admin(version))
    if t0 is None:
        t0 = min(s.description.creation_time for s in taken)
        step.metrics["anchors"] = record_watermark(step.ledger, step.migration, spec, t0)
    step.advance(MigrationState.COPYING)
    step.metrics["watermark"] = t0
    # the validations' ranges, cut from the snapshots' block indexes: none plans by a scan
    step.metrics["ranges_planned"] = sum(
        record_snapshot_plan(step.ledger, step.migration.id, s.table.source, source, s.name,
                             spec.engine.max_cells) for s in taken)
    choice = choose_engine(master, spec.engine, 0)
    if choice.master == IN_PROCESS and (master or spec.engine.spark_master) == AUTO:
        choice = EngineChoice(IN_PROCESS, "auto: a file export runs in-process unless a Spark "
                              "master is named", 0)
    step.metrics.update(choice.to_metrics())
    job = ExportJob(spec.source, spec.target, spec.ledger_url, step.migration.id,
                    step.step_id)
    summary = export_snapshots(spec, taken, source, target, job, choice.master, progress)
    step.metrics.update(summary.to_metrics())
    with open_cluster(spec.target).client() as client:
        def is_empty(table: str) -> bool | None:
            if not client.table_exists(table):
                return None
            return next(iter(client.scan(table)), None) is None

        step.metrics["cloned"] = clone_snapshots(
            spec, taken, open_cluster(spec.target).admin(version), step.ledger,
            step.migration.id, step.step_id, keep, is_empty)


def copy_ranges(step: StepContext, spec: MigrationSpec, t0: int, master: str | None,
                progress: Progress | None, only: Collection[KeyRange] | None = None, *,
                bulk: bool = False) -> None:
    """Copy ``[0, T0)`` of the planned ranges (``only``: of these alone) not yet copied, on
    the range engine; each is recorded as copied. A table not yet planned is planned in a
    pass that copies its first ranges too (:func:`planning_copy_cells` cells in all), but
    for the bulk copy (``bulk``: each range bulk-loaded, :mod:`hbase_migrate.snapshot.bulk_copy`),
    whose plan copies nothing."""
    mid = step.migration.id
    first: list[RangeCopy] = []
    budget = planning_copy_cells(spec, master) if only is None and not bulk else 0
    if budget:
        plan = ThrottlePlan.of(spec, "copy")
        with step_limits(plan) as limits, task_throttle(plan) as throttle:
            for t in spec.tables:
                first += plan_copying(step.ledger, mid, step.step_id, spec, t.source,
                                      t.target, (0, t0), budget - sum(c.cells for c in first),
                                      throttle)
            step.metrics["limits"] = limits.report()
    plans = {t.source: planned_ranges(step.ledger, mid, spec, t.source, (0, t0))
             for t in spec.tables}
    mine = [(r, cells) for ranges in plans.values() for r, cells in ranges
            if only is None or r in only]
    todo = [r for r, cells in mine if cells is None]
    planned = {KeyRange(r.table_name, r.range_start, r.range_end): r.planned_cells
               for t in spec.tables for r in step.ledger.key_ranges(mid, t.source)}
    # the step's work is what it copies, the pass that planned included
    choice = choose_engine(master, spec.engine,
                           sum(planned[r] for r in todo) + sum(c.cells for c in first))
    step.metrics.update(choice.to_metrics())
    job = CopyJob(spec.source, spec.target, tuple(spec.table_mapping().items()), (0, t0),
                  spec.ledger_url, mid, step.step_id)
    step.metrics.update(ranges=len(mine), ranges_copied=len(first) + len(todo),
                        ranges_skipped=len(mine) - len(first) - len(todo),
                        copied_while_planning=len(first))
    before = len(mine) - len(todo)
    meter = runstate.meter
    meter.ranges_done, meter.ranges_total = before, len(mine)
    meter.cells_goal = meter.cells + sum(planned[r] for r in todo)

    caller = progress

    def ranges_done(done: int, total: int) -> None:
        meter.ranges_done = before + done
        if caller is not None:
            caller(before + done, len(mine))
    ranges_done(0, len(todo))
    progress = ranges_done  # the tasks' progress, after the ranges copied before
    copies = []
    task = bulk_copy_range_task if bulk else copy_range_task
    if todo:
        with range_engine(choice.master, f"hbase-migrate snapshot {spec.name}",
                          spec) as engine:
            shipped = engine.shipped(spec)  # Spark: endpoints resolved here, no ledger
            plan = ThrottlePlan.of(shipped, "copy", engine.shares(len(todo)))
            if engine.executors:
                step.metrics["executors"] = engine.executors
            recorded: list[RangeCopy] = []

            def copied(_: KeyRange, c: RangeCopy) -> None:
                if not shipped.ledger_url:  # the tasks return what they copied
                    step.ledger.record_range_copied(mid, c.range.table, c.range.start,
                                                    step.step_id, c.rows, c.cells)
                recorded.append(c)
            try:
                with step_limits(plan) as limits:
                    copies = engine.map(bind(task, replace(
                        job, source=shipped.source, target=shipped.target,
                        ledger_url=shipped.ledger_url or None, throttle=plan)), todo,
                        progress=progress, done=copied,
                        what=f"{'bulk ' if bulk else ''}copy {len(todo)} key ranges of "
                             f"migration {spec.name}")
                    step.metrics["limits"] = limits.report()
            except RangeError as exc:
                if engine.name == IN_PROCESS:
                    raise
                raise RangeError(f"{exc} ({len(recorded)} of the {len(todo)} key ranges were "
                                 "copied and recorded: run the same command again to copy "
                                 f"the other {len(todo) - len(recorded)} at the same watermark "
                                 "T0)") from exc
            finally:
                if engine.placement is not None:  # YARN: the application, its containers
                    step.metrics["yarn"] = engine.placement.to_metrics()
    order = {r: i for i, (r, _) in enumerate(mine)}  # in key order, table by table
    step.metrics["copied"] = [c.to_json() for c in sorted(
        [*first, *copies], key=lambda c: order.get(c.range, len(order)))]


def planning_copy_cells(spec: MigrationSpec, master: str | None) -> int:
    """How many cells the pass planning a table copies in-process: ``[ranges]
    plan_copy_cells`` when set; else all of them when the rest would be copied in-process
    too (:func:`~hbase_migrate.ranges.choice.only_in_process`: the table is read once,
    not counted and then read again), and as many as ``auto`` would copy in-process
    (``auto_cells``) when the rest may go to a cluster; none when a Spark master is named
    (its tasks copy every range)."""
    if (master or spec.engine.spark_master) not in (AUTO, IN_PROCESS):
        return 0
    if spec.engine.plan_copy_cells is not None:
        return spec.engine.plan_copy_cells
    return EVERY_CELL if only_in_process(master, spec.engine) else spec.engine.auto_cells


def copy_totals(step: StepContext, spec: MigrationSpec) -> dict[str, Any]:
    """What the ledger says was copied, per table and in all."""
    tables: list[dict[str, Any]] = []
    for table in spec.tables:
        records = step.ledger.key_ranges(step.migration.id, table.source)
        tables.append({"source": table.source, "target": table.target, "ranges": len(records),
                       "rows": sum(r.copied_rows or 0 for r in records),
                       "cells": sum(r.copied_cells or 0 for r in records)})
    return {"tables": tables, "rows": sum(t["rows"] for t in tables),
            "cells": sum(t["cells"] for t in tables)}
