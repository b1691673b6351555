"""Step 3: replay the source's WAL edits into the target: catch-up since T0, or a window.

The replay run records its own ledger step (``replay``, or ``backfill`` for a window) with
the caller's provenance, and only offsets the target acknowledged; a catch-up moves the
migration to ``replaying``. A rerun continues from the recorded offsets: nothing is applied
twice that was acknowledged, and finished files are skipped.

A run can be split into parts (:func:`replay_parts`: one per WAL chain, chains a region move
ties together in one) that run and are retried on their own: ``replay(spec,
chains=part)``. Parts take the migration's lock one after the other (the listing and the
gap checks are the migration's); each records its own step.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from hbase_migrate import runstate
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import MigrationState, Provenance
from hbase_migrate.config import IN_PROCESS, MigrationSpec
from hbase_migrate.errors import StepInterrupted
from hbase_migrate.ranges.choice import check_master
from hbase_migrate.replay.job import CATCH_UP, DEFAULT_LOCK_TIMEOUT, FileTask, ReplayJob
from hbase_migrate.replay.parts import split_parts

if TYPE_CHECKING:  # the replay engine is imported when a replay runs, not with the package
    from hbase_migrate.replay.run import Executor
    from hbase_migrate.replay.summary import FollowSummary, Observer, RunSummary
    from hbase_migrate.wal.selection import Manifest


def replay_job(spec: MigrationSpec, *, tables: Sequence[str] = (), start: int | None = None,
               end: int | None = None, dry_run: bool = False, force_thrift1: bool = False,
               lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
               provenance: Provenance | None = None,
               chains: Sequence[str] | None = None) -> ReplayJob:
    """The replay job of ``spec``: catch-up without ``end``, else the window (a backfill);
    ``chains``: a part of it (:func:`replay_parts`)."""
    return ReplayJob.from_spec(spec, tables=tables, start=start, end=end, dry_run=dry_run,
                               force_thrift1=force_thrift1, lock_timeout=lock_timeout,
                               step_kind="replay" if end is None else "backfill",
                               provenance=provenance or Provenance(),
                               chains=None if chains is None else tuple(sorted(chains)))


def run(job: ReplayJob, *, observer: Observer | None = None,
        executor: Executor | None = None) -> RunSummary:
    """One run of ``job``; a catch-up that replayed moves the migration to ``replaying``.
    Ctrl-C (or a stop asked through :mod:`hbase_migrate.runstate`, which a replay on Spark
    heeds) ends it as :class:`~hbase_migrate.errors.StepInterrupted` once what the target
    acknowledged is recorded, saying where the WAL files stand."""
    from hbase_migrate.replay.run import run_replay

    runstate.reset()  # a new step: a stop asked for an earlier one is not this one's
    with Ledger.open(job.ledger_url) as ledger:  # once: the run's, handed down
        try:
            summary = run_replay(job, observer, executor=executor, ledger=ledger)
        except (KeyboardInterrupt, runstate.Stopped):
            raise _interrupted(job, ledger) from None
        if job.mode == CATCH_UP and not job.dry_run:
            _mark_replaying(job, ledger)
    return summary


def _interrupted(job: ReplayJob, ledger: Ledger) -> StepInterrupted:
    record = ledger.migration(job.name)
    counts = ledger.counts(record.id) if record is not None else {}
    files = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "none yet"
    return StepInterrupted(
        f"{job.step_kind} of migration {job.name!r} stopped: every edit the target "
        f"acknowledged is recorded (WAL files: {files}); run the same command again to go on "
        "from there")


def _mark_replaying(job: ReplayJob, ledger: Ledger) -> None:
    record = ledger.migration(job.name)
    if record is not None:
        state = MigrationState(record.state)
        if state is MigrationState.FAILED or state.rank < MigrationState.REPLAYING.rank:
            ledger.update_migration(record.id, state=MigrationState.REPLAYING)


def follow(job: ReplayJob, interval: float, stop: threading.Event, *,
           observer: Observer | None = None,
           on_run: Callable[[RunSummary], None] | None = None, force: bool = False
           ) -> FollowSummary:
    """Catch-up runs every ``interval`` seconds until ``stop`` is set (``--follow``); the
    migration moves to ``replaying``. Returns what the follow did (``exit_code``: the worst
    of its runs)."""
    from hbase_migrate.replay.run import follow_replay

    with Ledger.open(job.ledger_url) as ledger:  # once: the follow's, handed down
        _mark_replaying(job, ledger)
        return follow_replay(job, interval, stop, observer, on_run, force=force,
                             ledger=ledger)


def replay_parts(spec: MigrationSpec, *, tables: Sequence[str] = (), start: int | None = None,
                 end: int | None = None) -> list[list[str]]:
    """The parts of the run ``replay`` would make now (nothing is recorded): lists of chain
    ids, each for ``replay(spec, chains=part)``; empty when no file waits."""
    from hbase_migrate.replay.run import run_replay
    from hbase_migrate.replay.summary import Observer

    planned: list[FileTask] = []

    class Planner(Observer):
        def planned(self, manifest: Manifest, tasks: Sequence[FileTask]) -> None:
            planned.extend(tasks)

    run_replay(replay_job(spec, tables=tables, start=start, end=end, dry_run=True), Planner())
    return [list(part) for part in split_parts(planned)]


def replay(spec: MigrationSpec, *, tables: Sequence[str] = (), start: int | None = None,
           end: int | None = None, provenance: Provenance | None = None,
           observer: Observer | None = None, executor: Executor | None = None,
           master: str | None = None, **options: Any) -> RunSummary:
    """Replay once and return the run's summary (``exit_code``: 0 ok, 1 a file failed, 3 a
    gap). The files are replayed by ``executor``, or where the Spark ``master`` says
    (default the migration's ``[spark] master``; ``auto``: on Spark only for a run of
    ``[spark] auto_cells`` cells or more, else in this process)."""
    check_master(master, spec.engine)
    job = replay_job(spec, tables=tables, start=start, end=end, provenance=provenance,
                     **options)
    master = spec.engine.spark_master if master is None else master
    if master == IN_PROCESS or executor is not None or job.dry_run:
        return run(job, observer=observer, executor=executor)
    from hbase_migrate.replay.spark import SparkReplay

    with SparkReplay(spec, master) as spark:
        return run(job, observer=observer, executor=spark)
