"""Step 2: fix the watermark T0 and copy every retained cell version written before it.

The copy reads with the time range ``[0, T0)`` and keeps timestamps, so rerunning it after a
failure gives the same target; what came at or after T0 arrives by WAL replay. A migration
whose copy finished is skipped; a retry after a failure keeps the T0 (and the WAL anchors)
the first attempt fixed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hbase_migrate.audit.ledger import now_ms
from hbase_migrate.audit.records import MigrationState, Provenance, StepStatus
from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.config import MigrationSpec
from hbase_migrate.lifecycle.step import recorded_step, require, thrift2
from hbase_migrate.replay.watermark import record_watermark
from hbase_migrate.snapshot.copy import CopyStats, copy_table

OnRegion = Callable[[str, RegionDescriptor, CopyStats], None]


def snapshot(spec: MigrationSpec, *, watermark: int | None = None,
             provenance: Provenance | None = None,
             on_region: OnRegion | None = None) -> dict[str, Any]:
    """Fix T0 (``watermark``, default now) and copy ``[0, T0)`` of every table."""
    with recorded_step(spec, "snapshot", provenance) as step:
        require(step, MigrationState.SCHEMA_READY, "the snapshot copy", "prepare")
        done = [s for s in step.ledger.steps(step.migration.id, "snapshot")
                if s.status is StepStatus.SUCCEEDED]
        t0 = step.migration.watermark
        if done and t0 is not None:
            step.metrics.update(watermark=t0, skipped=[
                f"copied at watermark {t0} by step #{done[-1].id}: nothing to do"])
            return step.result()
        if t0 is None:
            t0 = now_ms() if watermark is None else watermark
            step.metrics["anchors"] = record_watermark(step.ledger, step.migration, spec, t0)
        step.advance(MigrationState.COPYING)
        step.metrics["watermark"] = t0
        tables: list[dict[str, Any]] = []
        with thrift2(spec.source) as src, thrift2(spec.target) as dst:
            for table in spec.tables:
                def region_done(region: RegionDescriptor, stats: CopyStats,
                                name: str = table.source) -> None:
                    if on_region is not None:
                        on_region(name, region, stats)

                stats = copy_table(src, dst, table.source, table.target, (0, t0),
                                   on_region=region_done)
                tables.append({"source": table.source, "target": table.target,
                               "rows": stats.rows, "cells": stats.cells})
        step.metrics.update(tables=tables, rows=sum(t["rows"] for t in tables),
                            cells=sum(t["cells"] for t in tables))
        step.advance(MigrationState.COPIED)
        return step.result()
