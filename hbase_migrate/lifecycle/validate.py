"""Step 4: validate the target against the source, range by range, judged by Great
Expectations; recompare what differs once replay caught up; optionally repair
(:mod:`hbase_migrate.validate.run` does the work; see there).

One ledger ``validations`` row per range. A match of every table moves the migration to
``validated``; a mismatch fails the step, except in live mode (``live=True``): the
in-flight validations made while the source is still written, where a mismatch is listed
(``differing``) without failing the step, and nothing waits for a replay to recompare.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hbase_migrate.audit.records import MigrationState, Provenance, Verdict
from hbase_migrate.config import MigrationSpec, TableSpec
from hbase_migrate.errors import ConfigError
from hbase_migrate.lifecycle.result import StepResult
from hbase_migrate.lifecycle.step import StepContext, recorded_step, require, thrift2
from hbase_migrate.limits import ThrottlePlan, step_limits
from hbase_migrate.ranges.choice import choose_engine
from hbase_migrate.ranges.engine import Progress, range_engine
from hbase_migrate.ranges.keyrange import KeyRange, RangeError
from hbase_migrate.ranges.planned import planned_ranges
from hbase_migrate.validate.compare import compare_tables
from hbase_migrate.validate.run import EXPLAIN_LIMIT, Validation
from hbase_migrate.validate.tombstones import DEFAULT_COMPACT_WAIT

DEFAULT_RECOMPARE_WAIT = 60.0


def validate(spec: MigrationSpec, *, provenance: Provenance | None = None,
             tables: Sequence[str] = (), master: str | None = None, repair: bool = False,
             recompare_wait: float = DEFAULT_RECOMPARE_WAIT, live: bool = False,
             compact: bool = True, compact_wait: float = DEFAULT_COMPACT_WAIT,
             progress: Progress | None = None) -> StepResult:
    """Validate (and with ``repair`` fix) every table of the migration, or those named in
    ``tables``; ``verdict`` is ``match`` only when every range matches in the end. With
    ``live`` the source is still written: no recompare, and a mismatch is listed in
    ``differing`` without failing the step (see the module's doc). A repaired cell a newer
    delete marker hides is got past by a major compaction of its regions (waiting at most
    ``compact_wait`` seconds), or with ``compact=False`` listed with the shell command
    that would (the step fails)."""
    chosen = spec.select_tables(tables)
    if live and repair:
        raise ConfigError(f"validate of migration {spec.name!r}: repair needs a strict "
                          "validation (the source still being written, its ranges differ "
                          "until replay catches up); drop live or repair")
    with recorded_step(spec, "validate", provenance) as step:
        require(step, MigrationState.COPIED, "validation", "snapshot")
        choice = choose_engine(master, spec.engine, planned_cells(step, spec, chosen))
        step.verdict_fails = not live
        step.metrics.update(choice.to_metrics(), repair=repair,
                            mode="live" if live else "strict")
        if repair:
            step.metrics["compact"] = compact
        with range_engine(choice.master, f"hbase-migrate validate {spec.name}") as engine, \
                step_limits(ThrottlePlan.of(spec, "validate", engine.slots)) as limits:
            Validation(step.ledger, step.migration.id, step.step, spec, chosen, engine,
                       progress, compact, compact_wait).run(repair,
                                                            None if live else recompare_wait)
            step.metrics["limits"] = limits.report()
        if step.metrics["verdict"] == Verdict.MATCH and len(chosen) == len(spec.tables):
            step.advance(MigrationState.VALIDATED)
        return step.result()


def planned_cells(step: StepContext, spec: MigrationSpec, tables: Sequence[TableSpec]) -> int:
    """The source cells the checksums read (the target's as many again), as planned: each
    table's planned ranges (planned now when none are)."""
    mid = step.migration.id
    for t in tables:
        planned_ranges(step.ledger, mid, spec, t.source, None)
    return sum(r.planned_cells for t in tables for r in step.ledger.key_ranges(mid, t.source))


def explain(spec: MigrationSpec, key_range: str, *, limit: int = EXPLAIN_LIMIT,
            ) -> dict[str, Any]:
    """The first differing cells of one key range (``table:starthex-stophex``, or
    ``starthex-stophex`` when the migration has one table): read-only, no ledger step."""
    only = spec.tables[0].source if len(spec.tables) == 1 else None
    r = KeyRange.parse(key_range, only)
    spec.select_tables([r.table])
    target = spec.table_mapping().get(r.table)
    if target is None:
        raise RangeError(f"range {r}: {r.table} is not a source table of migration "
                         f"{spec.name!r}")
    with thrift2(spec.source) as src, thrift2(spec.target) as dst:
        result = compare_tables(src, dst, r.table, target, r.start, r.stop, limit)
    return {"migration": spec.name, **r.to_json(), **result.to_json()}
