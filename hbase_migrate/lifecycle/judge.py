"""Step 4, the end of a validation made in parts: judge the validation run as a whole.

The parts (``validate(spec, part=(i, n), run=KEY)``, ``validate-part`` steps) each record
their ranges' counts and digests (compared plainly, no Great Expectations) under the run
``KEY``; the judge is the run's ``validate`` step: it reads the newest row of every range of
the run and refuses (naming the ranges) a run whose newest try of a part failed, that does
not cover every planned range of its tables, or that has a range without its digests:
nothing is judged. Then Great Expectations validates the comparison of every range of the
run once (one result and one Data Docs site per run, linked from each range's row), and
its verdict is the run's, as a whole validation's would be. A match of every table moves
the migration to ``validated``; a mismatch fails the step, except in live mode, where the
ranges still differing are listed (``differing``). A live run whose parts were planned as
none, a replay round's validation being exact (``validation_parts(rounds=True)``), is that
round's validation (:mod:`hbase_migrate.validate.rounds`) instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
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
from hbase_migrate.lifecycle.validate import PART_STEP, default_run, round_planned, validate
from hbase_migrate.ranges.groups import in_part_order, parse_part, range_group
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.stats import RangeStats
from hbase_migrate.ranges.tasks import RangePair
from hbase_migrate.validate.gx_process import GxProcess
from hbase_migrate.validate.rounds import ended_rounds


def _a_round(spec: MigrationSpec, run: str, chosen: Sequence[TableSpec]) -> bool:
    """A run no part recorded, where a replay round's validation can be exact: the parts
    were planned as none for it (``validation_parts(rounds=True)``)."""
    with Ledger.open(spec.ledger_url) as ledger:
        mid = ledger.ensure_spec(spec).id
        return not any(s.metrics.get("run") == run for s in ledger.steps(mid, PART_STEP)) \
            and round_planned(ledger, mid, spec, chosen)


def judge_validation(spec: MigrationSpec, run: str | None = None, *,
                     tables: Sequence[str] = (), live: bool = False,
                     provenance: Provenance | None = None, gx: GxProcess | None = None
                     ) -> StepResult:
    """The verdict of the validation run ``run`` (default: the Airflow DAG run's) over
    ``tables`` (all by default); see the module's doc. ``gx``: the Great Expectations
    process to judge with, started and closed by the caller (default: one started here)."""
    chosen = spec.select_tables(tables)
    run = run or default_run(provenance)
    if not run:
        raise ConfigError(f"validate of migration {spec.name!r}: judging a validation made "
                          "in parts needs the key of its run (--run)")
    if live and _a_round(spec, run, chosen):
        return validate(spec, provenance=provenance, tables=tables, live=True, gx=gx)
    judging: AbstractContextManager[GxProcess] = (
        GxProcess.reused() if gx is None else nullcontext(gx))
    with judging as judge, recorded_step(spec, "validate", provenance) as step:
        require(step, MigrationState.COPIED, "validation", "snapshot")
        ledger, mid = step.ledger, step.migration.id
        step.verdict_fails = not live
        targets = {t.target for t in chosen}
        rows = [r for r in ledger.run_validations(mid, run) if r.table_name in targets]
        parts = in_part_order(s for s in ledger.steps(mid, PART_STEP)
                              if s.metrics.get("run") == run)
        refuse_unjudgeable(ledger, mid, spec, run, chosen, rows, parts)
        back = {t.target: t.source for t in spec.tables}
        pairs = [pair_of(r, back) for r in rows]
        planned = [KeyRange(k.table_name, k.range_start, k.range_end)
                   for k in ledger.key_ranges(mid) if k.table_name in back.values()
                   and spec.table_mapping()[k.table_name] in targets]
        verdict = judge.judge(pairs, planned, spec.artifact_dir,
                              f"{spec.name}-step-{step.step.id}")
        assert verdict.result_path is not None
        ledger.record_artifacts([r.id for r in rows], str(verdict.result_path),
                                str(verdict.docs_path) if verdict.docs_path else None)
        known = {r.id for r in planned}
        failing = [r for r in rows if range_of(r, back).id in verdict.mismatched
                   or range_of(r, back).id not in known]
        bad = {r.id for r in failing}
        summary = [table_verdict(t, rows, parts, bad) for t in chosen]
        lost: Counter[str] = Counter()
        for t in summary:
            lost.update(t["accepted_losses"])
        step.metrics.update(
            accepted_losses=dict(sorted(lost.items())),
            run=run, mode="live" if live else "strict", tables=summary, gx=verdict.to_json(),
            parts=[{"part": s.metrics.get("part"), "step_id": s.id, "status": s.status.value,
                    "verdict": s.metrics.get("verdict")} for s in parts],
            differing=[str(range_of(r, back)) for r in failing],
            verdict=(Verdict.MISMATCH if failing or not verdict.success
                     else Verdict.MATCH).value)
        if len(chosen) == len(spec.tables):
            # every range of every table read since its first part began
            ledger.close_rounds(ended_rounds(ledger, mid, min(s.started_at for s in parts)),
                                step.step_id)
            if step.metrics["verdict"] == Verdict.MATCH:
                step.advance(MigrationState.VALIDATED)
        return step.result()


def refuse_unjudgeable(ledger: Ledger, migration_id: int, spec: MigrationSpec, run: str,
                       tables: Sequence[TableSpec], rows: Sequence[ValidationRecord],
                       parts: Sequence[StepRecord]) -> None:
    """Refuse to judge the run when the newest try of one of its parts failed, a planned
    range has no row, or a row has no digests (a range never read): each named."""
    where = f"validation run {run!r} of migration {spec.name!r}"
    newest = {str(s.metrics.get("part")): s for s in parts}  # in part order, tries in order
    failed = [s for s in newest.values() if s.status is StepStatus.FAILED]
    if failed:
        names = {t.source for t in tables}
        ranges = {s.id: [str(r) for r, _ in range_group(
            [k for k in ledger.key_ranges(migration_id) if k.table_name in names],
            parse_part(str(s.metrics["part"])))] for s in failed}
        raise StepRefusedError(
            f"{where}: part(s) failed, their ranges unjudged: " + "; ".join(
                f"part {s.metrics['part']} (step {s.id}: {s.error or 'failed'}) ranges "
                f"{', '.join(ranges[s.id])}" for s in failed)
            + ": run those parts again, then judge")
    missing = uncovered(ledger, migration_id, spec, rows, tables)
    if missing or not rows:
        raise StepRefusedError(
            f"{where} covers {len(rows)} range(s); {len(missing)} planned range(s) are "
            f"missing (e.g. {missing[0] if missing else 'all'}): a part did not run or "
            "failed; run it again, then judge")
    back = {t.target: t.source for t in spec.tables}
    unread = [str(range_of(r, back)) for r in rows if None in (
        r.source_rows, r.target_rows, r.source_cells, r.target_cells, r.source_digest,
        r.target_digest)]
    if unread:
        raise StepRefusedError(
            f"{where}: {len(unread)} range(s) have no recorded digest ({', '.join(unread)}): "
            "their part did not read them; run that part again, then judge")


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


def range_of(row: ValidationRecord, back: Mapping[str, str]) -> KeyRange:
    """The key range of a validation row (named by its source table)."""
    return KeyRange(back.get(row.table_name, row.table_name), row.range_start, row.range_end)


def pair_of(row: ValidationRecord, back: dict[str, str]) -> RangePair:
    """A row's range and its recorded statistics of both sides."""
    source, target = sides(row)
    where = range_of(row, back)
    return RangePair(RangeStats(where, *source), RangeStats(where, *target))


def sides(row: ValidationRecord) -> tuple[tuple[int, int, str], tuple[int, int, str]]:
    """A row's (rows, cells, digest) of the source and of the target (all recorded)."""
    assert row.source_digest is not None and row.target_digest is not None
    return ((row.source_rows or 0, row.source_cells or 0, row.source_digest),
            (row.target_rows or 0, row.target_cells or 0, row.target_digest))


def table_verdict(table: TableSpec, rows: Sequence[ValidationRecord],
                  parts: Sequence[StepRecord], bad_ids: set[int]) -> dict[str, Any]:
    """One table's line of the verdict, as a whole validation's metrics have it
    (``bad_ids``: the rows GX found differing)."""
    mine = [r for r in rows if r.table_name == table.target]
    bad = [r for r in mine if r.id in bad_ids]

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
        "accepted_losses": part_losses(parts, table.source),
    }


def part_losses(parts: Sequence[StepRecord], table: str) -> dict[str, int]:
    """The source's cells of ``table`` the newest try of each part left out as accepted
    losses to a Bigtable target (``bigtable.accepted``), by name."""
    newest = {str(s.metrics.get("part")): s for s in parts}  # tries in order: newest last
    found: Counter[str] = Counter()
    for step in newest.values():
        for t in step.metrics.get("tables", []):
            if t.get("source") == table:
                found.update(t.get("accepted_losses", {}))
    return dict(sorted(found.items()))
