"""Step 2, the end of a copy made in parts: the ``snapshot`` step that finishes it.

The plan (:func:`~hbase_migrate.lifecycle.snapshot.snapshot_parts`, a ``snapshot-plan``
step) fixed T0 and the planned ranges; the parts (``snapshot(spec, part=(i, n))``,
``snapshot-part`` steps) each copied their group and recorded every range copied. This step
copies nothing: it moves the migration to ``copied``, with the totals the whole copy would
record, once every planned range is copied, and refuses otherwise, naming the ranges and
the parts that hold them (nothing changes: run those parts again, then finish).

With the ``hbase`` method the copy has no parts: finishing it is the whole copy, one step
(:func:`~hbase_migrate.lifecycle.snapshot.snapshot`), as a DAG whose plan listed no parts
expects. With ``auto`` the plan's choice decides: the whole copy when it chose ``hbase``,
else the end of the scan copy.
"""

from __future__ import annotations

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import KeyRangeRecord, MigrationState, Provenance
from hbase_migrate.audit.status import SNAPSHOT_PART_STEP, SNAPSHOT_PLAN_STEP
from hbase_migrate.config import MigrationSpec
from hbase_migrate.lifecycle.result import StepResult
from hbase_migrate.lifecycle.snapshot import (
    copy_method,
    copy_totals,
    planned_copy,
    resolve_method,
    skip_copied,
    snapshot,
)
from hbase_migrate.lifecycle.step import StepContext, StepRefusedError, recorded_step, require
from hbase_migrate.ranges.engine import Progress
from hbase_migrate.ranges.groups import in_part_order, part_count, range_group
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.snapshot.choose import AUTO_METHOD


def finish_snapshot(spec: MigrationSpec, *, provenance: Provenance | None = None,
                    method: str | None = None, master: str | None = None,
                    progress: Progress | None = None, keep_snapshot: bool | None = None
                    ) -> StepResult:
    """Finish the copy made in parts (see the module's doc); ``method`` (default
    ``[snapshot] method``) ``hbase`` makes the whole copy, with ``master``, ``progress``
    and ``keep_snapshot`` as :func:`~hbase_migrate.lifecycle.snapshot.snapshot` takes
    them."""
    asked = copy_method(spec, method, None)
    if asked == "hbase" or (asked == AUTO_METHOD and planned_method(spec) == "hbase"):
        return snapshot(spec, provenance=provenance, method=asked, master=master,
                        progress=progress, keep_snapshot=keep_snapshot)
    with recorded_step(spec, "snapshot", provenance) as step:
        require(step, MigrationState.SCHEMA_READY, "the snapshot copy", "prepare")
        step.metrics.update(method="bulk" if asked == "bulk" else "scan", finish=True)
        if skip_copied(step):
            return step.result()
        if asked == AUTO_METHOD:
            resolve_method(step, spec, asked, None, parts=True)
        t0, records = planned_copy(step, spec, f"snapshot of migration {spec.name!r}")
        missing = [r for r in records if r.copied_at is None]
        if missing:
            first = missing[0]
            raise StepRefusedError(
                f"snapshot of migration {spec.name!r}: {len(missing)} of {len(records)} "
                f"planned range(s) not copied yet (e.g. "
                f"{KeyRange(first.table_name, first.range_start, first.range_end)}), in "
                f"part(s) {', '.join(missing_parts(step, spec, records))}: run them again "
                "(snapshot --part I/N), then finish")
        step.metrics.update(watermark=t0, ranges=len(records), parts=[
            {"part": s.metrics.get("part"), "step_id": s.id, "status": s.status.value,
             "ranges_copied": s.metrics.get("ranges_copied"), "host": s.host}
            for s in in_part_order(step.ledger.steps(step.migration.id, SNAPSHOT_PART_STEP))])
        step.metrics.update(copy_totals(step, spec))
        step.advance(MigrationState.COPIED)
        return step.result()


def planned_method(spec: MigrationSpec) -> str | None:
    """The method the migration's newest copy plan resolved (``scan``, ``hbase``, ``bulk``), None
    when no plan recorded one."""
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        plans = [] if record is None else [
            s for s in ledger.steps(record.id, SNAPSHOT_PLAN_STEP)
            if s.metrics.get("method") in ("scan", "hbase", "bulk")]
    return str(plans[-1].metrics["method"]) if plans else None


def missing_parts(step: StepContext, spec: MigrationSpec, records: list[KeyRangeRecord]
                  ) -> list[str]:
    """The parts (``i/n``, n as the newest plan made them, else ``[ranges] parts``) that
    hold a range not copied."""
    plans = [s.metrics.get("parts")
             for s in step.ledger.steps(step.migration.id, SNAPSHOT_PLAN_STEP)]
    n = next((len(p) for p in reversed(plans) if p), None) \
        or part_count(spec.engine.parts, len(records))
    missing = {(r.table_name, r.range_start, r.range_end) for r in records
               if r.copied_at is None}
    return [f"{i}/{n}" for i in range(1, n + 1)
            if any((k.table, k.start, k.stop) in missing
                   for k, _ in range_group(records, (i, n)))]
