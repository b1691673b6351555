"""One replay run of a migration, and ``--follow`` (repeated runs until stopped).

A run holds the migration's lock (:mod:`lock`), lists the source's WAL files and reconciles
them with the ledger (:mod:`discovery`: moves, gaps, files seen), plans the files to read
(:mod:`plan`: manifest and tasks), replays each one (:mod:`worker`) recording in the ledger
only the offsets the target acknowledged, and ends with a ledger step holding the manifest,
the counters, the bulk loads to re-copy, gaps and failures. A dry run only lists and plans.

Files are replayed one after the other in this process, or handed to an ``executor`` (a
Spark job, :mod:`hbase_migrate.replay.spark`) that returns their outcomes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from hbase_migrate.audit.ledger import Ledger, now_ms
from hbase_migrate.audit.records import WalFileRecord, WalStatus
from hbase_migrate.audit.status import replay_lag
from hbase_migrate.cluster.storage.walstore import WalStore
from hbase_migrate.errors import ConfigError
from hbase_migrate.hbase import open_cluster
from hbase_migrate.limits import ThrottlePlan, lending, step_limits, throttle_for
from hbase_migrate.ranges.choice import EngineChoice
from hbase_migrate.ranges.lent import lent_client
from hbase_migrate.replay.apply import ReplayTarget
from hbase_migrate.replay.bulkrun import Books, BulkReplay, PathChoice, choose_path, path_metrics
from hbase_migrate.replay.client_target import ClientTarget
from hbase_migrate.replay.coverage import Gap, check_coverage
from hbase_migrate.replay.discovery import open_wal_store, reconcile, record_vanished
from hbase_migrate.replay.file_replay import FileProgress, ReplaySpec
from hbase_migrate.replay.job import CATCH_UP, FileOutcome, FileTask, ReplayJob, Totals
from hbase_migrate.replay.lock import migration_lock, run_lease
from hbase_migrate.replay.ordering import chain_id
from hbase_migrate.replay.outage import (
    Outage,
    OutageRider,
    RiddenOutage,
    close_stale_outages,
    outage_of,
)
from hbase_migrate.replay.partitioned import RowPartitionedTarget
from hbase_migrate.replay.parts import HeldBack, chain_server
from hbase_migrate.replay.plan import plan
from hbase_migrate.replay.recall import recall_markers
from hbase_migrate.replay.retention import AT_RISK, Retention, assess, read_replication
from hbase_migrate.replay.targets import open_target
from hbase_migrate.replay.throttled import ThrottledTarget
from hbase_migrate.replay.touched import ROUND_STEPS, TouchedRows
from hbase_migrate.replay.worker import CLOSED_STATES, replay_task
from hbase_migrate.timeutil import format_duration
from hbase_migrate.wal.selection import Manifest

log = logging.getLogger(__name__)

EXIT_OK, EXIT_FAILURES, EXIT_GAPS = 0, 1, 3
# How long a one-shot run tries a WAL storage that has not answered once (a wrong
# endpoint, said at once) before giving up; a follow waits [replay] outage_tolerance.
FIRST_ANSWER_MS = 30_000
# Replays a run's planned files elsewhere (Spark) and returns their outcomes, or None to
# have them replayed here; one that chose (``choice``: an EngineChoice) has it recorded.
Executor = Callable[[ReplayJob, int, Sequence[FileTask]], Iterable[FileOutcome] | None]
# Opens where a run's mutations go (default: the migration's target cluster); the run
# closes it. Another sink (the CDC stream) gives its own, with a job of its own stream.
SinkFactory = Callable[[ReplayJob], ReplayTarget]


class Observer:
    """Hooks for a progress display; every method does nothing by default."""

    def planned(self, manifest: Manifest, tasks: Sequence[FileTask]) -> None:
        """The run's selection is known."""

    def file_started(self, task: FileTask) -> None:
        """A file's replay starts at ``task.start_offset``."""

    def file_advanced(self, task: FileTask, offset: int) -> None:
        """The target acknowledged ``task``'s file up to ``offset``."""

    def file_finished(self, task: FileTask, outcome: FileOutcome) -> None:
        """A file's replay ended (``outcome.error`` when it failed)."""

    def waiting(self, outage: RiddenOutage, retry_in: float, lag: int | None) -> None:
        """A service does not answer: the run waits ``retry_in`` s before asking again
        (``lag``: the replay lag as the ledger has it, None when unknown)."""

    def resumed(self, outage: RiddenOutage) -> None:
        """The service answers again; the run goes on."""

    def follow_started(self, summary: FollowSummary) -> None:
        """A ``--follow`` started; ``summary`` grows as it runs (live figures)."""

    def follow_ended(self, summary: FollowSummary) -> None:
        """A ``--follow`` ended: stopped, or by the error in ``summary.error``."""


@dataclass
class RunSummary:
    """What one run did; :attr:`exit_code` is 3 with open gaps, 1 with failures, else 0."""

    migration: str
    mode: str
    start: int
    end: int | None
    dry_run: bool
    listed: int = 0
    manifest: Manifest | None = None
    outcomes: list[FileOutcome] = field(default_factory=list)
    moves: list[tuple[str, str]] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    open_gaps: int = 0

    retention: Retention | None = None
    lag: int | None = None  # a catch-up's replay lag (ms) as it ended (status.replay_lag)
    outages: list[dict[str, Any]] = field(default_factory=list)  # waited out before it ran
    limits: dict[str, Any] | None = None  # the replay limit in force as the run ended
    engine: dict[str, Any] | None = None  # where the files ran and why, when it was chosen
    # a Bigtable target: what its writes left out (``Cluster.recorded_losses``: the accepted
    # losses by name, the masked puts), as the step's metrics hold it
    bigtable: dict[str, Any] | None = None
    # how the run wrote the target (bulk load or write path), why, and what its loads did
    replay_path: dict[str, Any] | None = None

    @property
    def failures(self) -> list[FileOutcome]:
        """Files that failed (a file that vanished is a gap, not a failure)."""
        return [o for o in self.outcomes if o.error is not None and not o.vanished]

    @property
    def exit_code(self) -> int:
        if self.gaps or self.open_gaps:
            return EXIT_GAPS
        return EXIT_FAILURES if self.failures else EXIT_OK

    def cells(self) -> dict[str, int]:
        """Cells written in this run, by type."""
        total: Counter[str] = Counter()
        for outcome in self.outcomes:
            total.update(outcome.run.cells)
        return dict(total)

    def markers(self) -> dict[str, int]:
        total: Counter[str] = Counter()
        for outcome in self.outcomes:
            total.update(outcome.run.markers)
        return dict(total)

    def touched(self) -> dict[str, frozenset[bytes] | None]:
        """The rows this run wrote, by target table (None: more than could be listed)."""
        rows = TouchedRows()
        for outcome in self.outcomes:
            rows.merge(outcome.touched)
        return rows.frozen()

    def to_json(self) -> dict[str, Any]:
        """The stable shape of ``--json`` and of the ledger step's metrics."""
        return {
            "migration": self.migration, "mode": self.mode, "dry_run": self.dry_run,
            "window": {"start": self.start, "end": self.end}, "files_listed": self.listed,
            "files_selected": len(self.manifest.included) if self.manifest else 0,
            "files_read": len(self.outcomes),
            "files_completed": sum(o.complete for o in self.outcomes),
            "bytes": sum(o.bytes_read for o in self.outcomes),
            "entries": sum(o.run.entries for o in self.outcomes),
            "cells": self.cells(), "markers": self.markers(),
            "calls": sum(o.run.calls for o in self.outcomes),
            "approximated_deletes": sum(o.run.approximated for o in self.outcomes),
            "bulk_loads": [vars(b) for o in self.outcomes for b in o.bulk_loads],
            "moves": [{"from": a, "to": b} for a, b in self.moves],
            "gaps": [vars(g) for g in self.gaps], "open_gaps": self.open_gaps,
            "retention": self.retention.to_json() if self.retention else None,
            "failures": [{"path": o.path, "error": o.error} for o in self.failures],
            "files": [o.to_json() for o in self.outcomes],
            "manifest": self.manifest.to_dict() if self.manifest else None,
            "lag": self.lag, "outages": self.outages, "limits": self.limits,
            "engine": self.engine, "replay_path": self.replay_path,
            "exit_code": self.exit_code,
            **({"bigtable": self.bigtable} if self.bigtable is not None else {}),
        }

    def to_metrics(self) -> dict[str, Any]:
        """The ledger step's metrics: :meth:`to_json` without its per-file lists (each file's
        facts live once, in its WAL-file row), so a step stays small whatever the number of
        files and a long ``--follow`` grows the ledger linearly. A window run (a backfill)
        writes no WAL-file rows: its manifest is kept as its record of the selection."""
        data = self.to_json()
        del data["files"]
        if self.end is None:
            del data["manifest"]
        data["moves"], data["failures"] = len(self.moves), len(self.failures)
        return data


def run_replay(job: ReplayJob, observer: Observer | None = None, *,
               executor: Executor | None = None, sink: SinkFactory | None = None,
               ledger: Ledger | None = None) -> RunSummary:
    """One run: lock (not for a dry run), reconcile, plan, replay, record. An outage (a
    gateway, WebHDFS, ZooKeeper or the ledger not answering) is waited out for up to
    ``[replay] outage_tolerance`` and the run started again. ``ledger``: the job's, open
    (else opened for the run): the run's lock, lease, limits and records all use it."""
    store = open_wal_store(job.source)
    watcher = observer or Observer()
    with _held(job, ledger) as held:
        if job.dry_run:
            return _dry_run(job, held, store, watcher)
        with migration_lock(job, held):
            loop = _Runs(job, held, store, watcher, threading.Event(), sink, one_shot=True)
            summary = loop.next(lambda: _run_once(job, held, store, watcher, executor,
                                                  sink=sink))
    assert summary is not None  # nothing sets the stop event of a single run
    summary.outages = [o.to_json() for o in loop.rider.ridden]
    return summary


def follow_replay(job: ReplayJob, interval: float, stop: threading.Event,
                  observer: Observer | None = None,
                  on_run: Callable[[RunSummary], None] | None = None, *,
                  force: bool = False, sink: SinkFactory | None = None,
                  ledger: Ledger | None = None) -> FollowSummary:
    """Catch-up runs every ``interval`` seconds under one lock until ``stop`` is set, riding
    out outages of up to ``[replay] outage_tolerance`` each; returns what the whole follow
    did (its ``exit_code``: the worst of its runs). An interval at or above half the archive
    TTL, with no replication peer pinning the WALs, is refused unless ``force``. ``ledger``:
    as :func:`run_replay`'s, for every run of the follow."""
    if job.mode != CATCH_UP or job.dry_run:
        raise ConfigError("--follow needs a catch-up replay (no --end, no --dry-run)")
    retention = source_retention(job, interval)
    if retention.kind == AT_RISK and not force:
        raise ConfigError(f"--interval {format_duration(int(interval * 1000))} is too long "
                          f"for migration {job.name!r}: {retention.detail}; list more often "
                          "(below half the archive TTL), pin the WALs with a disabled "
                          "replication peer, or pass --force")
    watcher = observer or Observer()
    done = FollowSummary(job.name, job.stream, now_ms())
    store = open_wal_store(job.source)
    with _held(job, ledger) as held, migration_lock(job, held) as lock:
        loop = _Runs(job, held, store, watcher, stop, sink)
        done.outages = loop.rider.ridden
        watcher.follow_started(done)

        def run() -> RunSummary:
            lock.check()  # a lock lost with an expired ZooKeeper session is taken again
            return _run_once(job, held, store, watcher, None, interval=interval, sink=sink,
                             stop=stop)

        try:
            while not stop.is_set():
                summary = loop.next(run)
                if summary is None:
                    break
                done.add(summary)
                if on_run is not None:
                    on_run(summary)
                stop.wait(interval)
        except BaseException as exc:
            done.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise
        finally:
            done.ended = now_ms()
            watcher.follow_ended(done)
    return done


@contextmanager
def _held(job: ReplayJob, ledger: Ledger | None) -> Iterator[Ledger]:
    """The runs' ledger (``ledger``, else the job's opened for the block), which the
    limits' reads use too meanwhile."""
    with Ledger.open(job.ledger_url) if ledger is None else nullcontext(ledger) as held, \
            lending(job.ledger_url, held):
        yield held


@dataclass
class FollowSummary:
    """What a whole ``--follow`` did: its runs added up, and the outages it rode out."""

    migration: str
    stream: str
    started: int
    ended: int | None = None
    runs: int = 0
    files_read: int = 0
    files_completed: int = 0
    bytes: int = 0
    entries: int = 0
    cells: Counter[str] = field(default_factory=Counter)
    outages: list[RiddenOutage] = field(default_factory=list)
    exit_code: int = EXIT_OK
    error: str | None = None  # what ended it, when not a stop
    lag: int | None = None  # as the newest run ended

    def add(self, summary: RunSummary) -> None:
        self.runs += 1
        self.files_read += len(summary.outcomes)
        self.files_completed += sum(o.complete for o in summary.outcomes)
        self.bytes += sum(o.bytes_read for o in summary.outcomes)
        self.entries += sum(o.run.entries for o in summary.outcomes)
        self.cells.update(summary.cells())
        self.exit_code = max(self.exit_code, summary.exit_code)
        self.lag = summary.lag

    def to_json(self) -> dict[str, Any]:
        return {"migration": self.migration, "stream": self.stream, "started": self.started,
                "ended": self.ended, "runs": self.runs, "files_read": self.files_read,
                "files_completed": self.files_completed, "bytes": self.bytes,
                "entries": self.entries, "cells": dict(self.cells),
                "outages": [o.to_json() for o in self.outages], "lag": self.lag,
                "exit_code": self.exit_code, "error": self.error}


class _Runs:
    """Runs one after the other, each outage between them waited out (:mod:`outage`)."""

    def __init__(self, job: ReplayJob, ledger: Ledger, store: WalStore, observer: Observer,
                 stop: threading.Event, sink: SinkFactory | None, *,
                 one_shot: bool = False) -> None:
        """``one_shot``: a single run, which gives up on a storage that never answered
        after :data:`FIRST_ANSWER_MS` (a wrong endpoint) instead of waiting it out."""
        self.job, self.ledger, self.store, self.sink = job, ledger, store, sink
        self.one_shot = one_shot
        self.observer = observer
        migration = ledger.ensure_spec(job.spec)
        self.migration_id = migration.id
        close_stale_outages(ledger, migration.id, job.stream)
        self.rider = OutageRider(
            tolerance_ms=job.spec.replay.outage_tolerance, stop=stop, ledger=ledger,
            migration_id=migration.id, stream=job.stream, on_wait=self._waiting,
            on_resume=observer.resumed)

    def next(self, run: Callable[[], RunSummary]) -> RunSummary | None:
        """``run()``, again after each outage it met; None when stopped while waiting."""
        while True:
            try:
                summary = run()
            except Exception as exc:
                outage = outage_of(exc, ledger_url=self.job.ledger_url)
                if outage is None or self.job.spec.replay.outage_tolerance <= 0:
                    self.rider.settle(str(exc).splitlines()[0] if str(exc) else repr(exc))
                    raise
                log.warning("%s does not answer (%s); waiting for it", outage.describe(),
                            outage.error)
                if not self.rider.ride(outage, self._probe(outage), self.job.ledger_url,
                                       self._unanswered(outage)):
                    return None
            else:
                self.rider.settle()
                return summary

    def _unanswered(self, outage: Outage) -> tuple[int, str] | None:
        """For a one-shot run whose WAL storage has not answered once: how long to try it,
        and what to check (the setting naming it)."""
        if not self.one_shot or not outage.service.endswith("WebHDFS") or self.store.answered:
            return None
        cluster = self.job.source
        setting = (f"webhdfs in {cluster.cluster_json} ([{cluster.role}] cluster_json)"
                   if cluster.cluster_json is not None
                   else f"[{cluster.role}] webhdfs in the migration config")
        tolerance = format_duration(self.job.spec.replay.outage_tolerance)
        return (min(FIRST_ANSWER_MS, self.job.spec.replay.outage_tolerance),
                f"check {setting}: a wrong host or port? (replay --follow waits out "
                f"outages of up to [replay] outage_tolerance, {tolerance})")

    def _probe(self, outage: Outage) -> Callable[[], object]:
        """A cheap call that fails the same way while the service is down."""
        job = self.job
        if outage.service == "ledger":
            return lambda: self.ledger.migration(job.name)
        if outage.service.endswith("WebHDFS"):
            return self.store.probe
        if outage.service.endswith("ZooKeeper"):
            return lambda: read_replication(open_cluster(job.source).endpoints)
        return lambda: _probe_sink(self.sink or open_job_target, job)

    def _waiting(self, outage: RiddenOutage, retry_in: float) -> None:
        lag = None
        if outage.outage.service != "ledger":
            try:
                lag = replay_lag(self.ledger.wal_files(self.migration_id, self.job.stream),
                                 now_ms())
            except Exception:  # the ledger may be down too: lag unknown
                lag = None
        self.observer.waiting(outage, retry_in, lag)


def _probe_sink(factory: SinkFactory, job: ReplayJob) -> None:
    target = factory(job)  # the Thrift targets ask their gateway as they open
    try:
        probe = getattr(target, "probe", None)
        if probe is not None:
            probe()
    finally:
        target.close()


def _start_of(job: ReplayJob, watermark: int | None) -> int:
    if job.start is not None:
        return job.start
    if watermark is None:
        raise ConfigError(f"migration {job.name!r} has no watermark in the ledger yet (the "
                          "snapshot copy records it); give --start TIME")
    return watermark - job.spec.replay.margin


def _dry_run(job: ReplayJob, ledger: Ledger, store: WalStore, observer: Observer
             ) -> RunSummary:
    record = ledger.migration(job.name)
    start = _start_of(job, record.watermark if record else None)
    listed = store.list_wal_files()
    rows = _rows(ledger, record.id, job.stream) if record else {}
    manifest, tasks = plan(job, listed, rows, start, now_ms())
    observer.planned(manifest, tasks)
    return RunSummary(job.name, job.mode, start, job.end, True, len(listed), manifest)


def _rows(ledger: Ledger, migration_id: int, stream: str) -> dict[str, WalFileRecord]:
    return {r.path: r for r in ledger.wal_files(migration_id, stream)}


def source_retention(job: ReplayJob, interval: float | None) -> Retention:
    """How safe the source's archived WALs are for runs ``interval`` seconds apart."""
    view = read_replication(open_cluster(job.source).endpoints)
    return assess(view, job.spec.replay.archive_ttl,
                  None if interval is None else int(interval * 1000))


def _run_once(job: ReplayJob, ledger: Ledger, store: WalStore, observer: Observer,
              executor: Executor | None, *, interval: float | None = None,
              sink: SinkFactory | None = None,
              stop: threading.Event | None = None) -> RunSummary:
    migration = ledger.ensure_spec(job.spec)
    start = _start_of(job, migration.watermark)
    summary = RunSummary(job.name, job.mode, start, job.end, False)
    # a validation from both snapshots holds the replay still between two runs (lock.py)
    with run_lease(job, ledger), ledger.step(migration.id, job.step_kind,
                                             job.provenance) as step:
        rounds = job.step_kind in ROUND_STEPS  # writes the target: its rows are recorded
        if rounds:
            ledger.begin_round(migration.id, step.id)
        with open_cluster(job.target).recorded_losses(step.metrics):
            try:
                _replay_run(job, ledger, migration.id, store, observer, executor, summary,
                            start, watermark=migration.watermark, interval=interval,
                            sink=sink, stop=stop)
            finally:
                step.metrics.update(summary.to_metrics())
                if rounds:
                    ledger.record_round(step.id, summary.touched())
        summary.bigtable = step.metrics.get("bigtable")
        if summary.exit_code != EXIT_OK:
            step.fail(_problems(summary))
    return summary


def _replay_run(job: ReplayJob, ledger: Ledger, migration_id: int, store: WalStore,
                observer: Observer, executor: Executor | None, summary: RunSummary,
                start: int, *, watermark: int | None, interval: float | None,
                sink: SinkFactory | None, stop: threading.Event | None = None) -> None:
    """Reconcile, plan, replay and record into ``summary`` (what the step holds); once
    ``stop`` is set, no further file is begun (the next run goes on from there). A single
    run replaying here opens its target while it reconciles and plans."""
    opening = _Opening(partial(sink or open_job_target, job)) if (
        executor is None and interval is None) else None
    try:
        _plan_and_replay(job, ledger, migration_id, store, observer, executor, summary, start,
                         watermark=watermark, interval=interval, sink=sink, stop=stop,
                         opening=opening)
    finally:
        if opening is not None:
            opening.abandon()


def _plan_and_replay(job: ReplayJob, ledger: Ledger, migration_id: int, store: WalStore,
                     observer: Observer, executor: Executor | None, summary: RunSummary,
                     start: int, *, watermark: int | None, interval: float | None,
                     sink: SinkFactory | None, stop: threading.Event | None,
                     opening: _Opening | None) -> None:
    view = read_replication(open_cluster(job.source).endpoints)
    summary.retention = assess(view, job.spec.replay.archive_ttl,
                               None if interval is None else int(interval * 1000))
    since = watermark if job.mode == CATCH_UP and job.start is None else start
    assert since is not None
    ttl = job.spec.replay.archive_ttl
    found = reconcile(ledger, migration_id, store, since=since, stream=job.stream,
                      archive_ttl=ttl)
    summary.listed, summary.moves, summary.gaps = len(found.listed), found.moves, found.gaps
    summary.gaps += check_coverage(ledger, migration_id, since, job.end,
                                   job.spec.replay.roll_period, view, job.stream, ttl)
    manifest, tasks = plan(job, found.listed, _rows(ledger, migration_id, job.stream), start,
                           now_ms())
    if job.chains is not None:  # a part: its chains' files only (and gaps, below)
        tasks = [t for t in tasks if chain_id(t.path) in job.chains]
    summary.manifest = manifest
    if job.mode == CATCH_UP:
        _skip_excluded(ledger, migration_id, manifest, job.stream)
    recalled = recall_markers(job, found.listed, tasks)  # a Bigtable target's only
    if recalled:
        log.info("migration %s: %d delete markers met again before the replay", job.name,
                 recalled)
    observer.planned(manifest, tasks)
    books = _Books(ledger, migration_id, job.mode == CATCH_UP, observer, since, job.stream)
    try:
        with step_limits(ThrottlePlan.of(job.spec, "replay")) as limits:
            elsewhere = None if executor is None else executor(job, start, tasks)
            if elsewhere is None:
                _engine_of(executor, summary)
                opened = (opening.take if opening is not None
                          else partial(sink or open_job_target, job))
                choice = choose_path(job, tasks) if sink is None and tasks else None
                if choice is not None:
                    log.info("migration %s: %s", job.name, choice.line)
                    summary.replay_path = path_metrics(choice, None)
                summary.outcomes = _replay_here(job, store, tasks, books, start, opened, stop,
                                                bulk=choice if choice and choice.bulk else None,
                                                summary=summary)
            else:  # recorded as they arrive; a stop or failure ends (closes) the executor
                with _closed_after(elsewhere) as outcomes:
                    try:
                        summary.outcomes = books.record_all(tasks, outcomes)
                    finally:
                        _engine_of(executor, summary)
            summary.limits = limits.report()
    finally:
        summary.gaps += books.gaps
    summary.gaps = [g for g in summary.gaps if _ours(job, g.server)]
    summary.open_gaps = sum(_ours(job, g.server)
                            for g in ledger.gaps(migration_id, stream=job.stream))
    if job.mode == CATCH_UP:
        summary.lag = replay_lag(ledger.wal_files(migration_id, job.stream), now_ms())


def _engine_of(executor: Executor | None, summary: RunSummary) -> None:
    """The engine choice of an executor that chose (Spark's, known once it ran)."""
    choice = getattr(executor, "choice", None)
    if isinstance(choice, EngineChoice):
        summary.engine = choice.to_metrics()


@contextmanager
def _closed_after(items: Iterable[FileOutcome]) -> Iterator[Iterable[FileOutcome]]:
    """``items``, closed after the block when it can be (a generator left early)."""
    try:
        yield items
    finally:
        close = getattr(items, "close", None)
        if close is not None:
            close()


def _ours(job: ReplayJob, server: str) -> bool:
    """Whether a gap of ``server`` is this run's to answer for (a part answers for its
    chains' servers)."""
    return job.chains is None or server in {chain_server(c) for c in job.chains}


def _problems(summary: RunSummary, shown: int = 3) -> str | None:
    """The step's error: gaps, and the first ``shown`` failures (each file's own error is in
    its WAL-file row)."""
    parts = [f"{len(summary.gaps)} new gap(s), {summary.open_gaps} open"] if (
        summary.gaps or summary.open_gaps) else []
    errors = [o.error for o in summary.failures if o.error]
    parts += errors[:shown]
    if len(errors) > shown:
        parts.append(f"and {len(errors) - shown} more failed file(s)")
    return "; ".join(parts) or None


def _skip_excluded(ledger: Ledger, migration_id: int, manifest: Manifest, stream: str
                   ) -> None:
    """Catch-up: an archived file with no edit in the window will never get one."""
    for item in manifest.items:
        if not item.included and item.state in CLOSED_STATES:
            ledger.mark_wal_skipped(migration_id, stream, item.path, item.reason)


def open_job_target(job: ReplayJob, tasks: int = 1) -> ReplayTarget:
    """The migration's target cluster (its endpoints re-read on reconnect: a restart may
    move the ports) over ``[replay] writers`` connections, paced by the replay limit (of
    which this is one of ``tasks``)."""
    targets: list[ReplayTarget] = []
    try:
        for _ in range(job.spec.replay.writers):
            targets.append(open_target(
                job.target, allow_lossy_deletes=job.spec.replay.allow_lossy_deletes,
                force_thrift1=job.force_thrift1, probe=not targets))
    except BaseException:
        for opened in targets:
            opened.close()
        raise
    return _paced(job, targets, tasks)


def _paced(job: ReplayJob, targets: list[ReplayTarget], tasks: int) -> ReplayTarget:
    target = targets[0] if len(targets) == 1 else RowPartitionedTarget(targets)
    return ThrottledTarget(target, throttle_for(ThrottlePlan.of(job.spec, "replay", tasks)))


@contextmanager
def lent_job_target(job: ReplayJob, tasks: int = 1) -> Iterator[ReplayTarget]:
    """:func:`open_job_target` over clients lent by this process
    (:mod:`hbase_migrate.ranges.lent`), for a task of a process that runs many (a Spark
    worker): connected once per process, not once per WAL file. A Thrift1 target (no client
    to lend) is opened and closed as before."""
    cluster = open_cluster(job.target)
    if not cluster.writes_exactly(job.force_thrift1):
        target = open_job_target(job, tasks)
        try:
            yield target
        finally:
            target.close()
        return
    with ExitStack() as clients:
        name = cluster.name
        targets: list[ReplayTarget] = [
            ClientTarget(clients.enter_context(lent_client(job.target)), cluster=name,
                         owned=False) for _ in range(job.spec.replay.writers)]
        target = _paced(job, targets, tasks)
        try:
            yield target
        finally:
            target.close()  # the throttle and the writers' threads; the clients go back


class _Opening:
    """A run's target, opened on a thread of its own from the start of the run, so that
    the target's ZooKeeper and ``hbase:meta`` answer while the source's WALs are listed
    and read for planning. Taken by the replay, or abandoned (closed as soon as it is
    open; a failure to open is then nobody's business: no file needed the target)."""

    def __init__(self, opener: Callable[[], ReplayTarget]) -> None:
        self._lock = threading.Lock()
        self._target: ReplayTarget | None = None
        self._error: BaseException | None = None
        self._abandoned = False
        self._thread = threading.Thread(target=self._open, args=(opener,),
                                        name="replay target", daemon=True)
        self._thread.start()

    def _open(self, opener: Callable[[], ReplayTarget]) -> None:
        try:
            target = opener()
        except BaseException as exc:  # raised by take()
            self._error = exc
            return
        with self._lock:
            self._target = target
            if not self._abandoned:
                return
        target.close()

    def take(self) -> ReplayTarget:
        """The target (waits for it to open), or what opening it raised."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        with self._lock:
            target, self._target = self._target, None
        assert target is not None, "a run's target is taken once"
        return target

    def abandon(self) -> None:
        """Not needed (or needed no longer): closed once open, without waiting for it."""
        with self._lock:
            self._abandoned = True
            target, self._target = self._target, None
        if target is not None:
            target.close()


def _replay_here(job: ReplayJob, store: WalStore, tasks: Sequence[FileTask], books: Books,
                 start: int, opened: Callable[[], ReplayTarget],
                 stop: threading.Event | None = None, *, bulk: PathChoice | None = None,
                 summary: RunSummary | None = None) -> list[FileOutcome]:
    """The files replayed here in order; with ``bulk``, into windows bulk-loaded into the
    target (:mod:`hbase_migrate.replay.bulkrun`), their progress recorded once loaded."""
    if not tasks:
        return []
    spec = job.replay_spec(start)
    target = opened()
    loads: BulkReplay | None = None
    if bulk is not None:
        loads = BulkReplay(job, target, books, bulk)
        target, books = loads.sink, loads.books
        spec = replace(spec, in_flight=0)  # gathered in memory: nothing to overlap
    outcomes: list[FileOutcome] = []
    held = HeldBack()
    try:
        _replay_files(store, tasks, books, spec, target, held, outcomes, stop, loads)
    finally:
        if loads is None:
            target.close()
        else:
            if summary is not None:
                summary.replay_path = path_metrics(loads.choice, loads)
            loads.close()  # its sink's target too
    return outcomes


def _replay_files(store: WalStore, tasks: Sequence[FileTask], books: Books,
                  spec: ReplaySpec, target: ReplayTarget, held: HeldBack,
                  outcomes: list[FileOutcome], stop: threading.Event | None,
                  loads: BulkReplay | None) -> None:
    """Each task in turn into ``outcomes``; with ``loads``, a window loaded once full and
    the last one at the end (the files' progress recorded as each load is acknowledged)."""
    for task in tasks:
        if stop is not None and stop.is_set():
            break  # a stopped follow: the files left are the next run's
        if books.handled(task):
            continue
        if held.holds(task):
            log.info("%s waits for the next run: a file before it in its part failed",
                     task.path)
            continue
        books.begin(task)
        try:
            outcome = replay_task(task, spec, target, store=store,
                                  on_progress=books.progress_hook(task))
        except BaseException:
            _settle_quietly(books)  # the run stops: what the target acknowledged stays
            raise
        held.note(task, outcome)
        outcomes.append(books.finish(task, outcome))
        if loads is not None:
            loads.after_file()
    if loads is not None:
        loads.load()


def _settle_quietly(books: Books) -> None:
    """:meth:`_Books.settle` while an error is raised (the ledger may be the outage):
    what cannot be recorded now is replayed again by the next run."""
    try:
        books.settle()
    except Exception as exc:
        log.warning("acknowledged progress not recorded (the next run replays it again): "
                    "%s", str(exc).splitlines()[0] if str(exc) else repr(exc))


_FINISHED = (WalStatus.REPLAYED, WalStatus.SKIPPED, WalStatus.GAP)
# How often a file's acknowledged progress is recorded in the ledger while it is replayed
# (besides as it ends): a crash replays at most this much again, idempotently.
PROGRESS_EVERY_MS = 1000


class _Books:
    """Ledger bookkeeping of the files of one run (catch-up only writes per-file rows)."""

    def __init__(self, ledger: Ledger, migration_id: int, tracked: bool,
                 observer: Observer, since: int, stream: str) -> None:
        self.ledger, self.mid, self.tracked, self.observer = ledger, migration_id, tracked, observer
        self.stream = stream
        self.since = since
        self.where: dict[str, str] = {}  # task path -> where the ledger row is now
        # acknowledged progress not recorded yet: (path, offset, totals)
        self.unrecorded: tuple[str, int, Totals] | None = None
        self.record_at = 0.0  # time.monotonic() from which progress is recorded again
        self.gaps: list[Gap] = []  # files that vanished before this run could read them

    def handled(self, task: FileTask) -> bool:
        """True when an earlier task of this run already followed its file to ``task.path``
        (a rename between listing ``WALs/`` and ``oldWALs/`` lists one file twice), or the
        ledger has finished it under that path meanwhile."""
        if task.path in self.where.values():
            return True
        row = self.ledger.wal_file(self.mid, self.stream, task.path) if self.tracked else None
        return row is not None and row.status in _FINISHED

    def begin(self, task: FileTask) -> None:
        self.where[task.path] = task.path
        if self.tracked:
            self.ledger.mark_wal_replaying(self.mid, self.stream, task.path)
        self.observer.file_started(task)

    def _follow(self, task: FileTask, path: str) -> None:
        if self.where[task.path] != path:
            if self.tracked:
                self.ledger.record_wal_moved(self.mid, self.stream, self.where[task.path], path)
            self.where[task.path] = path

    def progress_hook(self, task: FileTask) -> Callable[[str, FileProgress, Totals], None]:
        """Acknowledged progress of ``task``: recorded at most every
        :data:`PROGRESS_EVERY_MS` (the first at once); :meth:`settle` records the rest."""
        def hook(path: str, progress: FileProgress, totals: Totals) -> None:
            self._follow(task, path)
            self.unrecorded = (path, progress.offset, totals)
            if time.monotonic() >= self.record_at:
                self.settle()
            self.observer.file_advanced(task, progress.offset)
        return hook

    def settle(self) -> None:
        """Record the acknowledged progress not recorded yet (the newest only)."""
        if self.unrecorded is not None:
            path, offset, totals = self.unrecorded
            self.unrecorded = None
            self._record(path, offset, totals, closed=False)
            self.record_at = time.monotonic() + PROGRESS_EVERY_MS / 1000

    def _record(self, path: str, offset: int, totals: Totals, *, closed: bool) -> None:
        if self.tracked:
            self.ledger.record_wal_progress(
                self.mid, self.stream, path, offset_reached=offset, entries=totals.entries,
                cells_by_type=totals.cells, markers=totals.markers,
                approximated_deletes=totals.approximated,
                last_write_time=totals.last_write_time, closed=closed)

    def finish(self, task: FileTask, outcome: FileOutcome) -> FileOutcome:
        self._follow(task, outcome.path)
        if outcome.complete and outcome.error is None:
            self.unrecorded = None  # the final record below covers it
        else:
            self.settle()  # a failed or unfinished file keeps what was acknowledged
        if outcome.vanished:
            row = self.ledger.wal_file(self.mid, self.stream, outcome.path)
            gap = None if row is None else record_vanished(
                self.ledger, self.mid, row, self.since,
                self.ledger.wal_files(self.mid, self.stream), self.stream)
            if gap is not None:
                self.gaps.append(gap)
        elif outcome.error is not None:
            if self.tracked:
                self.ledger.mark_wal_failed(self.mid, self.stream, outcome.path, outcome.error)
            log.error("%s", outcome.error)
        elif outcome.complete:
            self._record(outcome.path, outcome.offset, outcome.totals, closed=True)
        if outcome.tags_dropped:
            log.warning("%s: %d cell tags not written to the target (replay writes cells "
                        "without their tags: per-cell TTLs, ACLs and visibility labels are "
                        "not replayed)", outcome.path, outcome.tags_dropped)
        self.observer.file_finished(task, outcome)
        return outcome

    def record_all(self, tasks: Sequence[FileTask], outcomes: Iterable[FileOutcome]
                   ) -> list[FileOutcome]:
        """Outcomes computed elsewhere (Spark): record each one's acknowledged progress."""
        by_path = {t.path: t for t in tasks}
        done = []
        for outcome in outcomes:
            task = by_path[outcome.moved_from or outcome.path]
            self.begin(task)
            self._follow(task, outcome.path)
            if outcome.offset > task.start_offset and not outcome.complete:
                self._record(outcome.path, outcome.offset, outcome.totals, closed=False)
            done.append(self.finish(task, outcome))
        return done
