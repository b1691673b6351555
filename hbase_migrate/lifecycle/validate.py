"""Step 4: validate the target against the source, range by range, judged by Great
Expectations; recompare what differs once replay caught up; optionally repair
(:mod:`hbase_migrate.validate.run` does the work; see there).

One ledger ``validations`` row per range. A match of every table moves the migration to
``validated``; a mismatch fails the step, except in live mode (``live=True``): the
in-flight validations made while the source is still written, where a mismatch is listed
(``differing``) without failing the step, and nothing waits for a replay to recompare.

A validation can be split into parts (:func:`validation_parts`: groups of the planned
ranges, :mod:`hbase_migrate.ranges.groups`) that run and are retried on their own:
``validate(spec, part=(i, n), run=KEY)`` is a ``validate-part`` step that checksums,
recompares and repairs its own ranges, recording them under the validation run ``KEY``
(compared by their digests: a part starts no Great Expectations);
:func:`~hbase_migrate.lifecycle.judge.judge_validation` then judges the run as a whole with
GX, once.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from hbase_migrate import runstate
from hbase_migrate.audit.ledger import Ledger, now_ms
from hbase_migrate.audit.records import MigrationState, Provenance, StepStatus, Verdict
from hbase_migrate.cluster.admin import snapshot_name
from hbase_migrate.config import MigrationSpec, TableSpec
from hbase_migrate.errors import ConfigError
from hbase_migrate.hbase import open_cluster
from hbase_migrate.hbase.bigtable_target import without_accepted
from hbase_migrate.heavy_imports import fewer_collections
from hbase_migrate.lifecycle.both_snapshots import (
    readable_target,
    replay_offsets,
    target_snapshots,
)
from hbase_migrate.lifecycle.missing import check_schema
from hbase_migrate.lifecycle.result import StepResult
from hbase_migrate.lifecycle.step import StepContext, recorded_step, require
from hbase_migrate.lifecycle.validate_round import validate_round
from hbase_migrate.limits import ThrottlePlan, step_limits
from hbase_migrate.ranges.choice import check_master, choose_engine
from hbase_migrate.ranges.engine import Progress, range_engine
from hbase_migrate.ranges.groups import part_count, range_group
from hbase_migrate.ranges.keyrange import KeyRange, RangeError
from hbase_migrate.ranges.planned import plan_holes, planned_ranges
from hbase_migrate.snapshot.tail import Tail
from hbase_migrate.validate.compare import compare_tables
from hbase_migrate.validate.gx_process import GxProcess
from hbase_migrate.validate.resume import Plan, Resume, resume_point
from hbase_migrate.validate.rounds import ended_rounds, plan_round
from hbase_migrate.validate.run import EXPLAIN_LIMIT, Validation, accepted_losses
from hbase_migrate.validate.tombstones import DEFAULT_COMPACT_WAIT

DEFAULT_RECOMPARE_WAIT = 60.0
PART_STEP = "validate-part"  # the ledger kind of one part of a validation run


def validate(spec: MigrationSpec, *, provenance: Provenance | None = None,
             tables: Sequence[str] = (), master: str | None = None, repair: bool = False,
             recompare_wait: float = DEFAULT_RECOMPARE_WAIT, live: bool = False,
             compact: bool = True, compact_wait: float = DEFAULT_COMPACT_WAIT,
             progress: Progress | None = None, part: tuple[int, int] | None = None,
             run: str | None = None, gx: GxProcess | None = None,
             from_snapshot: bool | None = None, restart: bool = False,
             whole: bool = False) -> StepResult:
    """Validate (and with ``repair`` fix) every table of the migration, or those named in
    ``tables``; ``verdict`` is ``match`` only when every range matches in the end. With
    ``live`` the source is still written: no recompare, and a mismatch is listed in
    ``differing`` without failing the step (see the module's doc). A repaired cell a newer
    delete marker hides is got past by a major compaction of its regions (waiting at most
    ``compact_wait`` seconds), or with ``compact=False`` listed with the shell command
    that would (the step fails).

    A ``live`` validation after a replay compares only the replay's round: the rows the
    replay runs since the last validation wrote, on both sides, the lag (``pending``) apart
    from differences (:mod:`hbase_migrate.validate.rounds`; metrics ``round``); ``whole``,
    or where a round cannot be exact (``round.whole`` says why), every range is read.

    ``part`` ``(i, n)``: only the i-th of n groups of the planned ranges, recorded under
    the validation run ``run`` (default: the Airflow DAG run's); its verdict fails nothing,
    the run's judge decides (see the module's doc).

    ``from_snapshot`` (None: the config's ``[validate] from`` for a strict validation,
    live scans for a ``live`` one): the source side is read from
    an HBase snapshot of each table taken now, its files read where they are
    (:mod:`hbase_migrate.snapshot.read`), with the same digests as a live scan; no scan
    reaches the source's region servers, so nothing recompares, repairs or lists differing
    cells from the source (``--explain`` does, live). A target whose files can be read too
    (a real HBase root over WebHDFS) is read from a snapshot of its own, taken with the
    replay held still once it has passed the source's snapshots, the source side adding
    the WAL edits past its snapshot up to the replay's offsets: both sides then stand for
    the source after every WAL edit up to those offsets, and no scan reaches either
    cluster (:mod:`hbase_migrate.lifecycle.both_snapshots` says why they compare; the
    wait for the replay is at most ``recompare_wait``). The snapshots are deleted when the
    step ends. ``source_read``/``target_read`` in the metrics say which side was read how,
    ``source_requests``/``target_requests`` how many requests the checksums sent to each
    cluster's region servers, as the transports counted them
    (:mod:`hbase_migrate.cluster.requests`: none from a snapshot), ``point`` what both
    sides stand for.

    ``gx``: the Great Expectations process to judge with, started by the caller (a command
    starts it before its own imports, so GX loads meanwhile) and closed by it; default: one
    started here. A part uses none (its ranges are compared by their digests, the run's
    judge validates them all with GX).

    Each range's checksums are recorded as it finishes: a validation stopped before its
    verdict continues where it stopped on the next one with the same plan, ``restart``
    starts afresh (:mod:`hbase_migrate.validate.resume`); ``resumed`` in the metrics says
    how many ranges were carried over, from which step and since when."""
    check_master(master, spec.engine)
    from_snapshot = reads_snapshots(spec, from_snapshot, live)
    chosen = spec.select_tables(tables)
    if part is not None:
        run = run or default_run(provenance)
        if not run:
            raise ConfigError(f"validate of migration {spec.name!r}: part {part[0]}/"
                              f"{part[1]} needs the key of its validation run (--run)")
    check_asked(spec, from_snapshot, live, repair)
    judging: AbstractContextManager[GxProcess | None] = (
        nullcontext(None) if part is not None
        else GxProcess.reused() if gx is None else nullcontext(gx))
    with judging as judge, \
            recorded_step(spec, "validate" if part is None else PART_STEP, provenance) as step:
        # (GX loads in its own process meanwhile: about 2 s of the machine's other core)
        require(step, MigrationState.COPIED, "validation", "snapshot")
        check_schema(spec)
        if _validated_round(spec, step, chosen, judge,
                            live and not (part or from_snapshot or whole)):
            return step.result()
        compared = ended_rounds(step.ledger, step.migration.id)  # before this validation
        cells = planned_cells(step, spec, chosen, from_snapshot)
        group = None
        if part is not None:
            names = {t.source for t in chosen}
            group = range_group([r for r in step.ledger.key_ranges(step.migration.id)
                                 if r.table_name in names], part)
            cells = sum(c for _, c in group)
            step.metrics.update(part=f"{part[0]}/{part[1]}", run=run, ranges=len(group))
        choice = choose_engine(master, spec.engine, cells)
        step.verdict_fails = not live and part is None
        step.metrics.update(choice.to_metrics(), repair=repair,
                            mode="live" if live else "strict")
        if repair:
            step.metrics["compact"] = compact
        meter = runstate.meter
        meter.cells_goal = 2 * cells  # each side's cells are read

        def counted(done: int, total: int) -> None:
            meter.ranges_done, meter.ranges_total = done, total
            if progress is not None:
                progress(done, total)
        with fewer_collections(), \
                range_engine(choice.master, f"hbase-migrate validate {spec.name}",
                             spec) as engine, step_limits(ThrottlePlan.of(
                                 spec, "validate", engine.shares(engine.slots))) as limits:
            if engine.executors:
                step.metrics["executors"] = engine.executors
            ranges = [r for r, _ in group] if group is not None else [
                r for t in chosen for r, _ in planned_ranges(
                    step.ledger, step.migration.id, spec, t.source, None)]
            resume = resume_point(step.ledger, step.migration.id, Plan.of(
                "validate" if part is None else PART_STEP,
                None if part is None else f"{part[0]}/{part[1]}", run, ranges,
                step.migration.watermark, from_snapshot, live,
                None if live else newest_replay(step.ledger, step.migration.id),
                spec.target.bigtable.accept if spec.target.bigtable else ()), ranges, restart)
            with snapshot_sides(spec, step, chosen, from_snapshot, resume,
                                recompare_wait) as (snapshots, target, tail):
                step.metrics["resumed"] = resume.to_json()
                Validation(step.ledger, step.migration.id, step.step, spec, chosen, engine,
                           judge, counted, compact, compact_wait, run, snapshots,
                           now_ms(), resume,
                           target_snapshots=target, tail=tail).run(
                    repair, None if live or snapshots else recompare_wait,
                    None if group is None else ranges)
            step.metrics["limits"] = limits.report()
            if engine.placement is not None:  # YARN: the application and its containers
                step.metrics["yarn"] = engine.placement.to_metrics()
        if len(chosen) == len(spec.tables) and part is None:
            _every_range_read(step, compared)
        return step.result()


def _every_range_read(step: StepContext, rounds: Sequence[int]) -> None:
    """A validation of every range of every table: the replay's ``rounds`` that ended before
    it are compared, and a match moves the migration to ``validated``."""
    step.ledger.close_rounds(rounds, step.step_id)
    if step.metrics["verdict"] == Verdict.MATCH:
        step.advance(MigrationState.VALIDATED)


def round_planned(ledger: Ledger, migration_id: int, spec: MigrationSpec,
                  chosen: Sequence[TableSpec]) -> bool:
    """Whether a live validation of ``chosen`` now would validate a replay round."""
    return not isinstance(plan_round(ledger, migration_id, spec.table_mapping(),
                                     [t.source for t in chosen]), str)


def _validated_round(spec: MigrationSpec, step: StepContext, chosen: Sequence[TableSpec],
                     gx: GxProcess | None, wanted: bool) -> bool:
    """A live validation of the replay's round (:mod:`hbase_migrate.validate.rounds`) where
    ``wanted`` and one can be exact; False (the metrics say why) where every range is read."""
    if not wanted:
        return False
    planned = plan_round(step.ledger, step.migration.id, spec.table_mapping(),
                         [t.source for t in chosen])
    if isinstance(planned, str):
        step.metrics["round"] = {"whole": planned}
        return False
    step.verdict_fails = False
    validate_round(spec, step, planned, gx)
    return True


def reads_snapshots(spec: MigrationSpec, asked: bool | None, live: bool) -> bool:
    """Whether a validation reads snapshots' files: as ``asked``, else as the config's
    ``[validate] from`` says for a strict one (the in-flight ``live`` ones scan)."""
    if asked is not None:
        return asked
    return spec.validate.read_from == "snapshot" and not live


def check_asked(spec: MigrationSpec, from_snapshot: bool, live: bool, repair: bool) -> None:
    """Refuse what cannot be asked together, before the step."""
    if from_snapshot:
        check_snapshot_source(spec, repair)
    if live and repair:
        raise ConfigError(f"validate of migration {spec.name!r}: repair needs a strict "
                          "validation (the source still being written, its ranges differ "
                          "until replay catches up); drop live or repair")


def check_snapshot_source(spec: MigrationSpec, repair: bool = False) -> None:
    """Refuse ``--from snapshot`` before the step with ``repair``, or when the source has no
    real HBase root over WebHDFS to read snapshot files from."""
    from hbase_migrate.snapshot.hbase_method import LAYOUT_FILE

    if repair:
        raise ConfigError(f"validate of migration {spec.name!r}: repair rewrites ranges from "
                          "the live source; validate from the snapshot first, then repair "
                          "without --from snapshot")

    source = open_cluster(spec.source)
    where = f"validate --from snapshot of migration {spec.name!r}"
    root = source.file_root()
    if root is None:
        raise ConfigError(f"{where}: source cluster {source.name!r} names no webhdfs URL and "
                          "hbase_root to read the snapshot's files from: name them, or "
                          "validate from the live source (no --from snapshot)")
    if root.status(LAYOUT_FILE) is None:
        raise ConfigError(f"{where}: no {LAYOUT_FILE} under the source's HBase root "
                          f"({root.where('')}), so no HBase that writes HFiles (the embedded "
                          "cluster writes none): validate from the live source (no --from "
                          "snapshot)")


def newest_replay(ledger: Ledger, migration_id: int) -> int | None:
    """The step id of the newest replay run that finished (None: none did)."""
    return max((s.id for s in ledger.steps(migration_id, "replay")
                if s.status is StepStatus.SUCCEEDED), default=None)


@contextmanager
def snapshot_sides(spec: MigrationSpec, step: StepContext, tables: Sequence[TableSpec],
                   wanted: bool, resume: Resume, wait: float
                   ) -> Iterator[tuple[dict[str, str], Mapping[str, str], Tail | None]]:
    """With ``wanted``: the source's snapshots (:func:`source_snapshots`) and, where the
    target's files can be read, the target's (by source table) and the source's WAL tail
    (:mod:`hbase_migrate.lifecycle.both_snapshots`: the replay's offsets noted first, where
    the tail begins at the earliest; from each file's start when a kept snapshot is read
    again); else none of the target's."""
    both = wanted and readable_target(spec)
    before = {} if not both or resume.snapshots else replay_offsets(step.ledger,
                                                                    step.migration.id)
    asked = now_ms()
    with source_snapshots(spec, tables, wanted, step.metrics, resume) as snapshots:
        if not both:
            yield snapshots, {}, None
            return
        with target_snapshots(spec, step.ledger, step.migration.id, tables, before,
                              now_ms(), wait, step.metrics, asked) as target:
            yield snapshots, target.snapshots, target.tail


@contextmanager
def source_snapshots(spec: MigrationSpec, tables: Sequence[TableSpec], wanted: bool,
                     metrics: dict[str, Any], resume: Resume | None = None
                     ) -> Iterator[dict[str, str]]:
    """With ``wanted``: a snapshot of each source table (``<migration>_validate``'s), by
    table; else none. ``metrics`` get which side is read how. A validation continued
    (``resume``) reads the snapshots the stopped one read, while they exist (else its
    ranges of that table are read again from a new one). They are deleted when the block
    ends without an error; a stopped validation leaves them for the next (their TTL,
    ``[snapshot] ttl``, removes them if none comes)."""
    metrics["target_read"] = "live scan"
    if not wanted:
        metrics["source_read"] = "live scan"
        yield {}
        return
    from hbase_migrate.snapshot.export import open_root

    root = open_root(spec.source)
    admin = open_cluster(spec.source).admin(spec.snapshot.hbase_version)
    taken: dict[str, str] = {}
    kept = resume.snapshots if resume is not None else {}
    asked = now_ms()
    for table in tables:
        name = kept.get(table.source)
        if name is not None and name not in admin.snapshots(name):
            assert resume is not None
            resume.drop(table.source, f"their snapshot {name} is gone")
            name = None
        if name is None:
            name = snapshot_name(f"{spec.name}_validate", table.source, asked)
            try:
                admin.snapshot(table.source, name, spec.snapshot.ttl // 1000)
            except BaseException:  # those taken here go; those kept stay for the next
                for other in taken.values():
                    if other not in kept.values():
                        admin.delete(other)
                raise
        taken[table.source] = name
    metrics["source_read"] = (f"snapshot files {root.reads()}: "
                              + ", ".join(f"{t} from {n}" for t, n in taken.items()))
    metrics["source_snapshots"] = dict(taken)
    yield taken
    for name in taken.values():
        admin.delete(name)


def planned_cells(step: StepContext, spec: MigrationSpec, tables: Sequence[TableSpec],
                  from_snapshot: bool = False) -> int:
    """The source cells the checksums read (the target's as many again), as planned: each
    table's planned ranges (planned now when none are: ``from_snapshot``, from a snapshot's
    files, :func:`plan_from_snapshots`)."""
    mid = step.migration.id
    if from_snapshot:
        plan_from_snapshots(step, spec, tables)
    for t in tables:
        planned_ranges(step.ledger, mid, spec, t.source, None)
    return sum(r.planned_cells for t in tables for r in step.ledger.key_ranges(mid, t.source))


def plan_from_snapshots(step: StepContext, spec: MigrationSpec,
                        tables: Sequence[TableSpec]) -> None:
    """The keys of ``tables`` no range covers (a migration copied before the file copy
    planned its ranges) planned from a snapshot of each such source table taken for it,
    then deleted: a validation from snapshots sends no scan to plan either."""
    from hbase_migrate.snapshot.export import open_root
    from hbase_migrate.snapshot.plan import record_snapshot_plan

    mid = step.migration.id
    unplanned = [t for t in tables if plan_holes(step.ledger.key_ranges(mid, t.source))]
    if not unplanned:
        return
    with source_snapshots(spec, unplanned, True, {}) as taken:
        root = open_root(spec.source)
        step.metrics["ranges_planned"] = sum(
            record_snapshot_plan(step.ledger, mid, t.source, root, taken[t.source],
                                 spec.engine.max_cells) for t in unplanned)


def validation_parts(spec: MigrationSpec, *, parts: int | None = None,
                     tables: Sequence[str] = (), rounds: bool = False) -> list[list[int]]:
    """The parts of a validation of ``tables`` (all by default) split ``parts`` ways
    (default ``[ranges] parts``; never more than the planned ranges): ``[i, n]`` each, for
    ``validate(spec, part=(i, n), run=...)``. Plans the ranges when none are; records no
    step. ``rounds``: none where the live validation of a replay round can be exact (the
    run's judge validates the round, :func:`~hbase_migrate.lifecycle.judge_validation`)."""
    chosen = spec.select_tables(tables)
    with Ledger.open(spec.ledger_url) as ledger:
        mid = ledger.ensure_spec(spec).id
        if rounds and round_planned(ledger, mid, spec, chosen):
            return []
        count = 0
        for t in chosen:
            count += len(planned_ranges(ledger, mid, spec, t.source, None))
    n = part_count(parts or spec.engine.parts, count)
    return [[i, n] for i in range(1, n + 1)]


def default_run(provenance: Provenance | None) -> str | None:
    """The validation run of an Airflow DAG run (its parts and its judge share it)."""
    if provenance is None or not provenance.dag_id or not provenance.run_id:
        return None
    return f"{provenance.dag_id}/{provenance.run_id}"


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
    with open_cluster(spec.source).client() as src, open_cluster(spec.target).client() as dst:
        # a Bigtable target's accepted losses are not differences (validate.run)
        result = compare_tables(without_accepted(src, accepted_losses(spec)), dst, r.table,
                                target, r.start, r.stop, limit)
    return {"migration": spec.name, **r.to_json(), **result.to_json()}
