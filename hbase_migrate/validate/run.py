"""A validation of a migration's tables, range by range, judged by Great Expectations;
recompare what differs once replay caught up; optionally repair.

1. Bulk-loaded regions replay met (``--repair``): their key ranges are re-copied first.
2. Checksums: rows, cells and digest of every key range on both sides (one range engine task
   per range; the ranges are the migration's planned ones, planned now if none are).
3. GX validates the comparison table (every range present, rows, cells and digests equal);
   its result JSON and Data Docs go under the migration's artifact folder. GX runs in a
   process of its own started with the step (by the command, before its own imports),
   loading while the checksums run. A part of a validation run (no ``gx``) makes the same
   comparisons plainly (:func:`~hbase_migrate.validate.verdict.by_digests`): the run's judge
   (:mod:`hbase_migrate.lifecycle.judge`) validates every part's ranges with GX once.
4. Recompare: ranges that differ are compared again once a replay run that started after
   the first comparison has finished (waiting at most ``recompare_wait`` seconds; at once when
   the migration is not being replayed). Only ranges that still differ fail; their first
   differing cells are listed.
5. Repair (``repair=True``): those ranges are rewritten from the source SyncTable-style and
   compared again (GX once more); every change is a ``repairs`` row of the ledger. Cells
   a newer delete marker still hides after the repair's puts are got past by a major
   compaction of their regions (:mod:`hbase_migrate.validate.tombstones`), or with
   ``compact=False`` listed with the shell command that would; a ledger row each.

One ledger ``validations`` row per range: the first verdict, the verdict of the last
comparison (``recompare_verdict``), the GX artifacts and the differences. A match moves the
migration to ``validated``; a mismatch fails the step.

Live mode (``live=True``) is for the in-flight validations made while the source is still
written (right after the snapshot copy, after each replay run): there a range differs because
its newest writes are still on their way, not because they were lost. The verdicts are the
same exact ones, recorded the same way (ledger rows, GX artifacts), but nothing waits for a
replay (the next replay's validation compares every range again) and a mismatch does not fail
the step: the result lists the ranges still differing (``differing``). The judge stays a
strict validation after the last catch-up, as the cutover gate requires.
"""

from __future__ import annotations

import functools
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.migrations_book import OpenStep
from hbase_migrate.audit.records import Verdict
from hbase_migrate.cluster.admin import Compactor
from hbase_migrate.cluster.client import Client
from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.config import MigrationSpec, TableSpec
from hbase_migrate.hbase import open_cluster
from hbase_migrate.hbase.bigtable_target import AcceptedLosses, not_accepted, without_accepted
from hbase_migrate.limits import ThrottlePlan
from hbase_migrate.ranges.engine import Progress, RangeEngine, bind
from hbase_migrate.ranges.keyrange import KeyRange, RangeError
from hbase_migrate.ranges.planned import planned_ranges
from hbase_migrate.ranges.tasks import ChecksumJob, RangePair, checksum_range_task, task_throttle
from hbase_migrate.snapshot.read import snapshot_source_stats
from hbase_migrate.validate.compare import compare_tables
from hbase_migrate.validate.gx_process import GxProcess
from hbase_migrate.validate.repair import RangeRepair, repair_range
from hbase_migrate.validate.resume import ChecksumRecorder, Resume, side_read
from hbase_migrate.validate.tombstones import (
    DEFAULT_COMPACT_WAIT,
    TombstoneRepair,
    compact_and_put,
    hidden_cells,
)
from hbase_migrate.validate.verdict import GxVerdict, by_digests
from hbase_migrate.validate.waiting import wait_for_replay

if TYPE_CHECKING:  # happybase is imported only where a Thrift1 gateway is used
    pass

EXPLAIN_LIMIT = 10
SNAPSHOT_EXPLAIN = ("source read from a snapshot: --explain lists the differing cells (it "
                    "scans the live source)")


def accepted_losses(spec: MigrationSpec) -> AcceptedLosses | None:
    """The cells of a Bigtable target's accepted losses (``[target] accept``), left out of
    the source side of every comparison; None for an HBase target, or none accepted."""
    settings = spec.target.bigtable
    if settings is None:
        return None
    return AcceptedLosses.of(settings.accept, spec.table_mapping())


class Validation:
    """One validation of ``tables``, recorded in the open ledger step ``step`` of migration
    ``migration_id``: checksums on ``engine``, GX's judgement (by ``gx``; None: a part of a
    run, compared by digests), recompare and repair (see the module's doc); :meth:`run`
    fills the step's metrics, ``verdict`` included."""

    def __init__(self, ledger: Ledger, migration_id: int, step: OpenStep, spec: MigrationSpec,
                 tables: Sequence[TableSpec], engine: RangeEngine, gx: GxProcess | None,
                 progress: Progress | None, compact: bool = True,
                 compact_wait: float = DEFAULT_COMPACT_WAIT, run_key: str | None = None,
                 source_snapshots: Mapping[str, str] | None = None, now_ms: int = 0,
                 resume: Resume | None = None,
                 target_snapshots: Mapping[str, str] | None = None, tail: Any = None) -> None:
        self.ledger, self.migration_id, self.step = ledger, migration_id, step
        self.run_key = run_key  # the run the ranges belong to (None: the step's own)
        self.partial = False
        self.compact, self.compact_wait = compact, compact_wait
        self.spec, self.tables, self.engine, self.progress = spec, tables, engine, progress
        self.gx = gx
        shipped = engine.shipped(spec)  # Spark: endpoints resolved here, no ledger
        # from snapshots: the source side read from their files, never scanned
        self.from_snapshots = dict(source_snapshots or {})
        # a Bigtable target: the cells whose loss was accepted are left out of the source
        self.accepted = accepted_losses(spec)
        self.job = ChecksumJob(shipped.source, shipped.target,
                               tuple(spec.table_mapping().items()),
                               source_snapshots=tuple(sorted(self.from_snapshots.items())),
                               now_ms=now_ms, snapshot_reader=snapshot_source_stats
                               if self.from_snapshots else None, accepted=self.accepted,
                               # both from snapshots: the target's too, and the source's
                               # WAL tail up to the point both stand for
                               target_snapshots=tuple(sorted((target_snapshots or {}).items())),
                               tail=tail)
        self.label = f"{spec.name}-step-{step.id}"
        self.source_requests = 0  # sent to the source's region servers, as counted
        self.target_requests = 0  # and to the target's
        self.resume = resume
        self.recorder = None if resume is None else ChecksumRecorder(
            ledger.url, migration_id, step.id, resume.plan.key,
            tuple(sorted(resume.plan.to_json().items())),
            tuple((t, side_read(n)) for t, n in sorted(self.from_snapshots.items())),
            tuple((t, side_read(n)) for t, n in sorted((target_snapshots or {}).items())))
        # tasks that reach the ledger record their ranges as they finish (else the caller)
        self.tasks_record = bool(shipped.ledger_url)

    def checksums(self, ranges: Sequence[KeyRange], label: str, first: bool = False
                  ) -> tuple[list[RangePair], GxVerdict]:
        """Both sides' statistics of ``ranges``, judged by GX (by digests without it). The
        ``first`` pass records each range as it finishes and reads only the ranges a stopped
        validation has not recorded (:mod:`hbase_migrate.validate.resume`)."""
        recorder = self.recorder if first else None
        carried = self.carry_over() if recorder is not None else {}
        todo = [r for r in ranges if r.id not in carried]
        plan = ThrottlePlan.of(self.engine.shipped(self.spec), "validate",
                               self.engine.shares(len(todo)))
        job = replace(self.job, throttle=plan, recorder=self.task_recorder(recorder))
        record = None  # (the tasks record their ranges; else this, each as it arrives)
        if recorder is not None and not self.tasks_record:
            record = functools.partial(recorded_pair, recorder, self.ledger)
        read = self.engine.map(bind(checksum_range_task, job), todo, progress=self.progress,
                               done=record,
                               what=f"checksums of {len(todo)} key ranges ({label})")
        self.source_requests += sum(p.source_requests for p in read)
        self.target_requests += sum(p.target_requests for p in read)
        found = {**carried, **{p.range.id: p for p in read}}
        pairs = [found[r.id] for r in ranges]
        if self.gx is None:
            return pairs, by_digests(pairs, ranges)
        return pairs, self.gx.judge(pairs, ranges, self.spec.artifact_dir, label)

    def task_recorder(self, recorder: ChecksumRecorder | None
                      ) -> Callable[[RangePair], None] | None:
        """What a range task records its range with: on a ledger of its own (opened per
        range) where the tasks are shipped elsewhere, on this step's where they run here
        (about 14 ms a range less on SQLite); None where they cannot reach the ledger."""
        if recorder is None or not self.tasks_record:
            return None
        if self.engine.shipped(self.spec) is self.spec:  # tasks in this process
            return functools.partial(recorder.record, ledger=self.ledger)
        return recorder

    def carry_over(self) -> dict[str, RangePair]:
        """The ranges the stopped validation recorded, recorded again under this step."""
        assert self.resume is not None and self.recorder is not None
        pairs = self.resume.pairs()
        for rid, row in self.resume.carried.items():
            self.recorder.record(pairs[rid], self.ledger, resumed=row)
        return pairs

    def run(self, repair: bool, recompare_wait: float | None,
            part: Sequence[KeyRange] | None = None) -> None:
        """``recompare_wait`` None: no recompare (live mode); ``part``: only these planned
        ranges (one part of a validation run; bulk loads into them only)."""
        step = self.step
        self.partial = part is not None
        ranges = list(part) if part is not None else [
            r for t in self.tables for r, _ in planned_ranges(
                self.ledger, self.migration_id, self.spec, t.source, None)]
        if repair:
            step.metrics["bulk_loads_recopied"] = self.repair_bulk_loads(part)
        began = int(time.time() * 1000)
        pairs, verdict = self.checksums(ranges, self.label, first=True)
        last = {p.range: p for p in pairs}
        failing = [r for r in ranges if r.id in verdict.mismatched or r.id in verdict.missing]
        artifacts = {r: verdict for r in ranges}
        recompared: set[KeyRange] = set()
        if failing and recompare_wait is not None:
            step.metrics["recompare"] = wait_for_replay(self.ledger, self.migration_id, began,
                                                        recompare_wait, failing)
            again, verdict2 = self.checksums(failing, f"{self.label}-recompare")
            last.update({p.range: p for p in again})
            artifacts.update({r: verdict2 for r in failing})
            recompared = set(failing)
            failing = [r for r in failing if r.id in verdict2.mismatched
                       or r.id in verdict2.missing]
        differences = {r: [SNAPSHOT_EXPLAIN] if self.from_snapshots else self.explain(r)
                       for r in failing}
        repairs: dict[KeyRange, RangeRepair] = {}
        if repair and failing:
            repairs = self.repair(failing)
            again, verdict3 = self.checksums(failing, f"{self.label}-repair")
            last.update({p.range: p for p in again})
            artifacts.update({r: verdict3 for r in failing})
            recompared |= set(failing)
            fixed = [r for r in failing if r.id not in verdict3.mismatched
                     and r.id not in verdict3.missing]
            for r in failing:
                self.ledger.record_repair(
                    self.migration_id, step.id, r.table, r.start, r.stop,
                    reason="mismatch", puts=repairs[r].puts, deletes=repairs[r].deletes,
                    verdict=Verdict.MATCH if r in fixed else Verdict.MISMATCH,
                    detail={"changes": repairs[r].changes})
                self.record_tombstones(r, repairs[r].tombstones, r in fixed)
            failing = [r for r in failing if r not in fixed]
        self.record(ranges, pairs, last, recompared, failing, differences, artifacts)
        self.summarise(ranges, last, failing, differences, repairs, verdict)

    def record(self, ranges: list[KeyRange], first: list[RangePair],
               last: dict[KeyRange, RangePair], recompared: set[KeyRange],
               failing: list[KeyRange], differences: dict[KeyRange, list[str]],
               artifacts: dict[KeyRange, GxVerdict]) -> None:
        ledger, step = self.ledger, self.step
        firsts = {p.range: p for p in first}
        for r in ranges:
            pair = last.get(r)
            initial = firsts.get(r)
            verdict = artifacts[r]
            row_id = ledger.record_validation(
                self.migration_id, step.id, self.target_of(r), r.start, r.stop,
                source_rows=pair.source.rows if pair else None,
                target_rows=pair.target.rows if pair else None,
                source_cells=pair.source.cells if pair else None,
                target_cells=pair.target.cells if pair else None,
                source_digest=pair.source.digest if pair else None,
                target_digest=pair.target.digest if pair else None,
                verdict=Verdict.MATCH if initial is not None and initial.equal and r not in
                recompared else Verdict.MISMATCH,
                gx_result=str(verdict.result_path) if verdict.result_path else None,
                data_docs=str(verdict.docs_path) if verdict.docs_path else None,
                differences=differences.get(r, ()), run_key=self.run_key)
            if r in recompared:
                ledger.record_recompare(row_id, Verdict.MISMATCH if r in failing
                                        else Verdict.MATCH)

    def target_of(self, key_range: KeyRange) -> str:
        return self.job.target_table(key_range)

    def summarise(self, ranges: list[KeyRange], last: dict[KeyRange, RangePair],
                  failing: list[KeyRange], differences: dict[KeyRange, list[str]],
                  repairs: dict[KeyRange, Any], first: GxVerdict) -> None:
        tables = []
        lost: Counter[str] = Counter()
        for t in self.tables:
            mine = [r for r in ranges if r.table == t.source]
            pairs = [last[r] for r in mine if r in last]
            bad = [r for r in failing if r.table == t.source]
            if not mine and self.partial:  # a part lists the tables it has ranges of
                continue
            accepted: Counter[str] = Counter()
            for p in pairs:
                accepted.update(dict(p.accepted_losses))
            lost.update(accepted)
            tables.append({
                # the source's cells left out as accepted losses (a Bigtable target), by name
                "accepted_losses": dict(sorted(accepted.items())),
                "source": t.source, "target": t.target,
                "verdict": (Verdict.MISMATCH if bad else Verdict.MATCH).value,
                "ranges": len(mine), "ranges_matching": len(mine) - len(bad),
                "source_rows": sum(p.source.rows for p in pairs),
                "target_rows": sum(p.target.rows for p in pairs),
                "source_cells": sum(p.source.cells for p in pairs),
                "target_cells": sum(p.target.cells for p in pairs),
                "mismatched": [{**r.to_json(), "differences": differences.get(r, [])}
                               for r in bad],
                "repaired": [repairs[r].to_json() for r in repairs if r.table == t.source],
                "examples": [f"{r.bounds}: {d}" for r in bad for d in differences.get(r, [])],
            })
        self.step.metrics.update(
            tables=tables, gx=first.to_json(), differing=[str(r) for r in failing],
            accepted_losses=dict(sorted(lost.items())),
            source_requests=self.source_requests, target_requests=self.target_requests,
            verdict=(Verdict.MISMATCH if failing else Verdict.MATCH).value)

    def explain(self, key_range: KeyRange) -> list[str]:
        with open_cluster(self.spec.source).client() as src, \
                open_cluster(self.spec.target).client() as dst, \
                task_throttle(ThrottlePlan.of(self.spec, "validate")) as throttle:
            source = without_accepted(src, self.accepted)
            result = compare_tables(source, dst, key_range.table, self.target_of(key_range),
                                    key_range.start, key_range.stop, EXPLAIN_LIMIT, throttle)
        return result.examples + not_accepted(source)  # and what to accept, if anything

    def repair(self, ranges: Sequence[KeyRange]) -> dict[KeyRange, RangeRepair]:
        """Rewrite ``ranges`` from the source; then get past the delete markers hiding cells
        the repair put (or, without ``compact``, only list them). Every range is repaired
        before any compaction is asked, so each range's hidden cells are known exactly."""
        with open_cluster(self.spec.source).client() as opened, \
                open_cluster(self.spec.target).client() as dst:
            src = without_accepted(opened, self.accepted)  # accepted losses stay lost
            done = {r: repair_range(src, dst, r, self.target_of(r)) for r in ranges}
            hidden = {r: cells for r in ranges if done[r].puts
                      if (cells := hidden_cells(src, dst, r, self.target_of(r)))}
            if not hidden:
                return done
            if not self.compact:
                for r, cells in hidden.items():
                    done[r].tombstones = TombstoneRepair(self.target_of(r), cells,
                                                         refused=True)
                return done
            asked: set[bytes] = set()
            deadline = time.monotonic() + self.compact_wait
            with self.compactor(dst, hidden) as admin:
                for r, cells in hidden.items():
                    done[r].tombstones = compact_and_put(
                        dst, admin, self.target_of(r), cells,
                        max(0.0, deadline - time.monotonic()), asked=asked,
                        shell=self.spec.target.admin_shell)
        return done

    def compactor(self, dst: Client, hidden: Mapping[KeyRange, Any]
                  ) -> AbstractContextManager[Compactor]:
        """What major-compacts the target (``dst`` lists its regions): HBase's own RPC for
        a native target, else its Thrift1 gateway (HBase's Thrift2 has no compaction
        call)."""
        why = (f"a repair asks it to major-compact the regions where delete markers hide "
               f"repaired cells (ranges {', '.join(map(str, hidden))}); HBase's Thrift2 "
               "has no compaction call")
        return open_cluster(self.spec.target).compactor(dst, why)

    def record_tombstones(self, key_range: KeyRange, done: TombstoneRepair | None,
                          matched: bool) -> None:
        """A ledger row per action taken against delete markers: the compaction asked and
        the puts after it, or the refusal."""
        if done is None:
            return
        detail = done.to_json()
        rows = ([("refused", 0)] if done.refused
                else [("compact", 0), ("put-after-compaction", done.puts)])
        for action, puts in rows:
            self.ledger.record_repair(
                self.migration_id, self.step.id, key_range.table, key_range.start,
                key_range.stop, reason="mismatch", puts=puts, deletes=0,
                verdict=None if action == "compact" else
                Verdict.MATCH if matched else Verdict.MISMATCH,
                detail={"action": action, **detail})

    def repair_bulk_loads(self, part: Sequence[KeyRange] | None = None
                          ) -> list[dict[str, Any]]:
        """Re-copy the key ranges of the source regions replay saw bulk loads into (each
        bulk load once: those already repaired are skipped); with ``part``, only those
        whose region starts in one of its ranges (each part re-copies its own)."""
        step, ledger = self.step, self.ledger
        done = {(r.detail.get("table"), r.detail.get("region"), r.detail.get("file"),
                 r.detail.get("offset")) for r in ledger.repairs(self.migration_id)
                if r.reason == "bulk_load"}
        names = {t.source for t in self.tables}
        loads = [b for s in ledger.steps(self.migration_id) if s.kind in ("replay", "backfill")
                 for b in s.metrics.get("bulk_loads", []) if b.get("table") in names]
        out = []
        with open_cluster(self.spec.source).client() as opened, \
                open_cluster(self.spec.target).client() as dst:
            src = without_accepted(opened, self.accepted)
            regions = {t: src.regions(t) for t in names}
            for load in loads:
                key = (load["table"], load["region"], load.get("file"), load.get("offset"))
                if key in done:
                    continue
                done.add(key)
                region = bulk_loaded_region(regions[load["table"]], load)
                if part is not None and not any(r.table == load["table"]
                                                and r.contains(region.start_key) for r in part):
                    continue
                key_range = KeyRange(load["table"], region.start_key, region.end_key)
                fixed = repair_range(src, dst, key_range, self.target_of(key_range))
                ledger.record_repair(self.migration_id, step.id, key_range.table,
                                     key_range.start, key_range.stop, reason="bulk_load",
                                     puts=fixed.puts, deletes=fixed.deletes, verdict=None,
                                     detail={**load, "changes": fixed.changes})
                out.append(fixed.to_json())
        return out


def bulk_loaded_region(regions: Sequence[RegionDescriptor],
                       load: dict[str, Any]) -> RegionDescriptor:
    """The source region a bulk load went into, found by its start key (the marker's row):
    HBase's Thrift2 region locations carry no region id, so encoded names cannot be matched
    (they still are for loads recorded without a start key). A region split since then is
    found by its first daughter; the checksums that follow catch the others."""
    start = load.get("start_key")
    found = [r for r in regions if (r.start_key == bytes.fromhex(start) if start is not None
                                    else r.encoded_name == load["region"])]
    if not found:
        raise RangeError(f"bulk load into region {load['region']} (start key "
                         f"{start or '?'}) of table {load['table']} (WAL {load.get('file')} at "
                         f"byte offset {load.get('offset')}): the source has no such region "
                         "now; validate and repair the whole table")
    return found[0]


def recorded_pair(recorder: ChecksumRecorder, ledger: Ledger, _: KeyRange, pair: RangePair
                  ) -> None:
    """``pair`` recorded by the driver as its task's result arrives."""
    recorder.record(pair, ledger)
