"""Step 2: fix the watermark T0 and copy every retained cell version written before it.

The copy runs on the range engine (:mod:`hbase_migrate.ranges`): each table's key ranges are
planned once (region boundaries split to the cell budget) and kept in the ledger; one task
per range reads ``[0, T0)`` with timestamps and writes the target, and records the range as
copied when it is done. A rerun after a failure keeps the T0 (and the WAL anchors) and the
ranges the first attempt fixed, and copies only the ranges not yet done. A migration whose
copy finished is skipped.

With ``[snapshot] method = "hbase"`` (or ``method="hbase"``) the copy is an HBase snapshot
of each table instead (:mod:`hbase_migrate.snapshot.hbase_method`): T0 is the earliest
snapshot's creation time, the snapshots' files are exported one task per file, and each is
cloned into its target table. A rerun uses the same snapshots and copies only the files the
target lacks or holds different.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hbase_migrate.audit.ledger import now_ms
from hbase_migrate.audit.records import MigrationState, Provenance, StepStatus
from hbase_migrate.config import AUTO, IN_PROCESS, SNAPSHOT_METHODS, MigrationSpec
from hbase_migrate.errors import ConfigError
from hbase_migrate.lifecycle.result import StepResult
from hbase_migrate.lifecycle.step import (
    StepContext,
    StepRefusedError,
    recorded_step,
    require,
    thrift2,
)
from hbase_migrate.limits import ThrottlePlan, step_limits
from hbase_migrate.ranges.choice import EngineChoice, choose_engine
from hbase_migrate.ranges.engine import Progress, bind, range_engine
from hbase_migrate.ranges.planned import planned_ranges
from hbase_migrate.ranges.tasks import CopyJob, copy_range_task
from hbase_migrate.replay.watermark import record_watermark
from hbase_migrate.snapshot.export import ExportJob
from hbase_migrate.snapshot.hbase_method import (
    SnapshotMethodError,
    admin_channel,
    clone_snapshots,
    export_snapshots,
    hdfs_root,
    take_snapshots,
)


def snapshot(spec: MigrationSpec, *, watermark: int | None = None,
             provenance: Provenance | None = None, master: str | None = None,
             progress: Progress | None = None, method: str | None = None,
             keep_snapshot: bool | None = None) -> StepResult:
    """Fix T0 (``watermark``, default now) and copy ``[0, T0)`` of every table, one task per
    key range on ``master`` (default: the spec's Spark master; ``auto`` chooses by the
    planned cells, :mod:`hbase_migrate.ranges.choice`); ``progress(done, total)`` as
    ranges finish. ``method`` (default ``[snapshot] method``): ``scan``, or ``hbase`` (T0
    is the snapshots' creation time; ``keep_snapshot`` keeps them, default
    ``[snapshot] keep``)."""
    method = method or spec.snapshot.method
    if method not in SNAPSHOT_METHODS:
        raise ConfigError(f"snapshot method must be one of {', '.join(SNAPSHOT_METHODS)}, "
                          f"got {method!r}")
    if method == "hbase" and watermark is not None:
        raise ConfigError("the hbase snapshot method takes T0 from the snapshot's creation "
                          "time: give no watermark")
    keep = spec.snapshot.keep if keep_snapshot is None else keep_snapshot
    with recorded_step(spec, "snapshot", provenance) as step:
        require(step, MigrationState.SCHEMA_READY, "the snapshot copy", "prepare")
        step.metrics.update(method=method, keep_snapshot=keep)
        done = [s for s in step.ledger.steps(step.migration.id, "snapshot")
                if s.status is StepStatus.SUCCEEDED]
        t0 = step.migration.watermark
        if done and t0 is not None:
            step.metrics.update(watermark=t0, skipped=[
                f"copied at watermark {t0} by step #{done[-1].id}: nothing to do"])
            return step.result()
        if method == "hbase":
            _hbase_copy(step, spec, t0, master, progress, keep)
            step.advance(MigrationState.COPIED)
            return step.result()
        if t0 is None:
            t0 = now_ms() if watermark is None else watermark
            step.metrics["anchors"] = record_watermark(step.ledger, step.migration, spec, t0)
        step.advance(MigrationState.COPYING)
        step.metrics["watermark"] = t0
        _copy(step, spec, t0, master, progress)
        step.advance(MigrationState.COPIED)
        return step.result()


def _hbase_copy(step: StepContext, spec: MigrationSpec, t0: int | None, master: str | None,
                progress: Progress | None, keep: bool) -> None:
    """Snapshot, export, clone (:mod:`hbase_migrate.snapshot.hbase_method`)."""
    try:
        source, target = hdfs_root(spec.source), hdfs_root(spec.target)
    except SnapshotMethodError as exc:  # no real HBase there: nothing done, state kept
        raise StepRefusedError(str(exc)) from None
    version = spec.snapshot.hbase_version
    taken = take_snapshots(spec, source, admin_channel(spec.source, version))
    if t0 is None:
        t0 = min(s.description.creation_time for s in taken)
        step.metrics["anchors"] = record_watermark(step.ledger, step.migration, spec, t0)
    step.advance(MigrationState.COPYING)
    step.metrics["watermark"] = t0
    choice = choose_engine(master, spec.engine, 0)
    if choice.master == IN_PROCESS and (master or spec.engine.spark_master) == AUTO:
        choice = EngineChoice(IN_PROCESS, "auto: a file export runs in-process unless a Spark "
                              "master is named", 0)
    step.metrics.update(choice.to_metrics())
    job = ExportJob(spec.source, spec.target, spec.ledger_url, step.migration.id,
                    step.step_id)
    summary = export_snapshots(spec, taken, source, target, job, choice.master, progress)
    step.metrics.update(summary.to_metrics())
    with thrift2(spec.target) as client:
        def is_empty(table: str) -> bool | None:
            if not client.table_exists(table):
                return None
            return next(iter(client.scan(table)), None) is None

        step.metrics["cloned"] = clone_snapshots(
            spec, taken, admin_channel(spec.target, version), step.ledger,
            step.migration.id, step.step_id, keep, is_empty)


def _copy(step: StepContext, spec: MigrationSpec, t0: int, master: str | None,
          progress: Progress | None) -> None:
    plans = {t.source: planned_ranges(step.ledger, step.migration.id, spec, t.source, (0, t0))
             for t in spec.tables}
    todo = [r for ranges in plans.values() for r, cells in ranges if cells is None]
    estimate = sum(r.planned_cells for t in spec.tables for r in step.ledger.key_ranges(
        step.migration.id, t.source) if r.copied_at is None)
    choice = choose_engine(master, spec.engine, estimate)
    master = choice.master
    step.metrics.update(choice.to_metrics())
    job = CopyJob(spec.source, spec.target, tuple(spec.table_mapping().items()), (0, t0),
                  spec.ledger_url, step.migration.id, step.step_id)
    total = sum(len(r) for r in plans.values())
    step.metrics.update(ranges=total, ranges_copied=len(todo),
                        ranges_skipped=total - len(todo))
    copies = []
    if todo:
        with range_engine(master, f"hbase-migrate snapshot {spec.name}") as engine:
            plan = ThrottlePlan.of(spec, "copy", min(len(todo), engine.slots))
            with step_limits(plan) as limits:
                copies = engine.map(bind(copy_range_task, replace(job, throttle=plan)), todo,
                                    progress=progress,
                                    what=f"copy {len(todo)} key ranges of migration {spec.name}")
                step.metrics["limits"] = limits.report()
    step.metrics["copied"] = [c.to_json() for c in copies]
    tables: list[dict[str, Any]] = []
    for table in spec.tables:
        records = step.ledger.key_ranges(step.migration.id, table.source)
        tables.append({"source": table.source, "target": table.target, "ranges": len(records),
                       "rows": sum(r.copied_rows or 0 for r in records),
                       "cells": sum(r.copied_cells or 0 for r in records)})
    step.metrics.update(tables=tables, rows=sum(t["rows"] for t in tables),
                        cells=sum(t["cells"] for t in tables))
