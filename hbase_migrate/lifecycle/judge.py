"""Step 4, the end of a validation made in parts: judge the validation run as a whole.

The parts (``validate(spec, part=(i, n), run=KEY)``, ``validate-part`` steps) each record
their ranges' verdicts under the run ``KEY``; the judge is the run's ``validate`` step: it
reads the newest row of every range of the run, refuses a run that does not cover every
planned range of its tables (a part is missing: nothing is judged), and sets the verdict
as a whole validation would. A match of every table moves the migration to ``validated``;
a mismatch fails the step, except in live mode, where the ranges still differing are
listed (``differing``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import (
    MigrationState,
    Provenance,
    StepRecord,
    StepStatus,
    ValidationRecord,
    Verdict,
)
from hbase_migrate.config import MigrationSpec, TableSpec
from hbase_migrate.errors import ConfigError
from hbase_migrate.lifecycle.result import StepResult
from hbase_migrate.lifecycle.step import StepRefusedError, recorded_step, require
from hbase_migrate.lifecycle.validate import PART_STEP, default_run
from hbase_migrate.ranges.groups import in_part_order
from hbase_migrate.ranges.keyrange import KeyRange


def judge_validation(spec: MigrationSpec, run: str | None = None, *,
                     tables: Sequence[str] = (), live: bool = False,
                     provenance: Provenance | None = None) -> StepResult:
    """The verdict of the validation run ``run`` (default: the Airflow DAG run's) over
    ``tables`` (all by default); see the module's doc."""
    chosen = spec.select_tables(tables)
    run = run or default_run(provenance)
    if not run:
        raise ConfigError(f"validate of migration {spec.name!r}: judging a validation made "
                          "in parts needs the key of its run (--run)")
    with recorded_step(spec, "validate", provenance) as step:
        require(step, MigrationState.COPIED, "validation", "snapshot")
        ledger, mid = step.ledger, step.migration.id
        step.verdict_fails = not live
        rows = ledger.run_validations(mid, run)
        missing = uncovered(ledger, mid, spec, rows, chosen)
        if missing or not rows:
            raise StepRefusedError(
                f"validation run {run!r} of migration {spec.name!r} covers {len(rows)} "
                f"range(s); {len(missing)} planned range(s) are missing (e.g. "
                f"{missing[0] if missing else 'all'}): a part did not run or failed; run it "
                "again, then judge")
        parts = in_part_order(s for s in ledger.steps(mid, PART_STEP)
                              if s.metrics.get("run") == run)
        summary = [table_verdict(t, rows, parts) for t in chosen]
        failing = [r for r in rows if r.final_verdict is Verdict.MISMATCH]
        back = {t.target: t.source for t in spec.tables}
        step.metrics.update(
            run=run, mode="live" if live else "strict", tables=summary,
            parts=[{"part": s.metrics.get("part"), "step_id": s.id, "status": s.status.value,
                    "verdict": s.metrics.get("verdict")} for s in parts],
            differing=[str(KeyRange(back.get(r.table_name, r.table_name), r.range_start,
                                    r.range_end)) for r in failing],
            verdict=(Verdict.MISMATCH if failing else Verdict.MATCH).value)
        if not failing and len(chosen) == len(spec.tables):
            step.advance(MigrationState.VALIDATED)
        return step.result()


def uncovered(ledger: Ledger, migration_id: int, spec: MigrationSpec,
              rows: Iterable[ValidationRecord], tables: Sequence[TableSpec] | None = None
              ) -> list[KeyRange]:
    """The planned ranges of ``tables`` (all the migration's by default) that no row of
    ``rows`` (validations, named by target table) compared."""
    covered = {(r.table_name, r.range_start, r.range_end) for r in rows}
    targets = {t.source: t.target for t in (spec.tables if tables is None else tables)}
    return [KeyRange(k.table_name, k.range_start, k.range_end)
            for k in ledger.key_ranges(migration_id) if k.table_name in targets
            and (targets[k.table_name], k.range_start, k.range_end) not in covered]


def table_verdict(table: TableSpec, rows: Sequence[ValidationRecord],
                  parts: Sequence[StepRecord]) -> dict[str, Any]:
    """One table's line of the verdict, as a whole validation's metrics have it."""
    mine = [r for r in rows if r.table_name == table.target]
    bad = [r for r in mine if r.final_verdict is Verdict.MISMATCH]

    def total(field: str) -> int:
        return sum(getattr(r, field) or 0 for r in mine)

    mismatched = [{**KeyRange(table.source, r.range_start, r.range_end).to_json(),
                   "differences": list(r.differences)} for r in bad]
    return {
        "source": table.source, "target": table.target,
        "verdict": (Verdict.MISMATCH if bad else Verdict.MATCH).value,
        "ranges": len(mine), "ranges_matching": len(mine) - len(bad),
        "source_rows": total("source_rows"), "target_rows": total("target_rows"),
        "source_cells": total("source_cells"), "target_cells": total("target_cells"),
        "mismatched": mismatched,
        "repaired": [r for s in parts if s.status is StepStatus.SUCCEEDED
                     for t in s.metrics.get("tables", []) if t.get("source") == table.source
                     for r in t.get("repaired", [])],
        "examples": [f"{m['bounds']}: {d}" for m in mismatched for d in m["differences"]],
    }
