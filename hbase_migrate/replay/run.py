"""One replay run of a migration, and ``--follow`` (repeated runs until stopped).

A run holds the migration's lock (:mod:`lock`), lists the source's WAL files and reconciles
them with the ledger (:mod:`discovery`: moves, gaps, files seen), plans the files to read
(:mod:`plan`: manifest and tasks), replays each one (:mod:`in_process`, :mod:`worker`)
recording in the ledger only the offsets the target acknowledged (:mod:`run_books`), and ends
with a ledger step holding the manifest, the counters, the bulk loads to re-copy, gaps and
failures (:mod:`summary`). A dry run only lists and plans.

Files are replayed one after the other in this process, into the migration's target
(:mod:`job_target`) or another sink, or handed to an ``executor`` (a Spark job,
:mod:`hbase_migrate.replay.spark`) that returns their outcomes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from functools import partial

from hbase_migrate.audit.ledger import Ledger, now_ms
from hbase_migrate.audit.records import WalFileRecord
from hbase_migrate.audit.status import replay_lag
from hbase_migrate.cluster.storage.walstore import WalStore
from hbase_migrate.errors import ConfigError
from hbase_migrate.hbase import open_cluster
from hbase_migrate.limits import ThrottlePlan, lending, step_limits
from hbase_migrate.ranges.choice import EngineChoice
from hbase_migrate.replay.apply import ReplayTarget
from hbase_migrate.replay.bulkrun import choose_path, path_metrics
from hbase_migrate.replay.coverage import check_coverage
from hbase_migrate.replay.discovery import open_wal_store, reconcile
from hbase_migrate.replay.in_process import replay_here
from hbase_migrate.replay.job import CATCH_UP, FileOutcome, FileTask, ReplayJob
from hbase_migrate.replay.job_target import Opening, open_job_target
from hbase_migrate.replay.lock import migration_lock, run_lease
from hbase_migrate.replay.ordering import chain_id
from hbase_migrate.replay.outage import (
    Outage,
    OutageRider,
    RiddenOutage,
    close_stale_outages,
    outage_of,
)
from hbase_migrate.replay.parts import chain_server
from hbase_migrate.replay.plan import plan
from hbase_migrate.replay.recall import recall_markers
from hbase_migrate.replay.retention import AT_RISK, Retention, assess, read_replication
from hbase_migrate.replay.run_books import RunBooks
from hbase_migrate.replay.summary import EXIT_OK, FollowSummary, Observer, RunSummary
from hbase_migrate.replay.touched import ROUND_STEPS
from hbase_migrate.replay.watch import Watch, watch_period
from hbase_migrate.replay.worker import CLOSED_STATES
from hbase_migrate.timeutil import format_duration
from hbase_migrate.wal.selection import NO_TABLE_EDITS, Manifest

log = logging.getLogger(__name__)

# How long a one-shot run tries a WAL storage that has not answered once (a wrong
# endpoint, said at once) before giving up; a follow waits [replay] outage_tolerance.
FIRST_ANSWER_MS = 30_000
# Replays a run's planned files elsewhere (Spark) and returns their outcomes, or None to
# have them replayed here; one that chose (``choice``: an EngineChoice) has it recorded.
Executor = Callable[[ReplayJob, int, Sequence[FileTask]], Iterable[FileOutcome] | None]
# Opens where a run's mutations go (default: the migration's target cluster); the run
# closes it. Another sink (the CDC stream) gives its own, with a job of its own stream.
SinkFactory = Callable[[ReplayJob], ReplayTarget]


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
        # a run longer than the archive TTL is still watched: listed beside it (watch.py)
        ttl = job.spec.replay.archive_ttl
        watch = Watch(held, loop.migration_id, store, job.stream, ttl,
                      watch_period(interval, ttl))

        def run() -> RunSummary:
            lock.check()  # a lock lost with an expired ZooKeeper session is taken again
            return _run_once(job, held, store, watcher, None, interval=interval, sink=sink,
                             stop=stop, watch=watch)

        try:
            with watch:
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
              stop: threading.Event | None = None, watch: Watch | None = None) -> RunSummary:
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
                            sink=sink, stop=stop, watch=watch)
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
                sink: SinkFactory | None, stop: threading.Event | None = None,
                watch: Watch | None = None) -> None:
    """Reconcile, plan, replay and record into ``summary`` (what the step holds); once
    ``stop`` is set, no further file is begun (the next run goes on from there). A single
    run replaying here opens its target while it reconciles and plans; a follow's run
    reconciles in turn with its ``watch``."""
    opening = Opening(partial(sink or open_job_target, job)) if (
        executor is None and interval is None) else None
    try:
        _plan_and_replay(job, ledger, migration_id, store, observer, executor, summary, start,
                         watermark=watermark, interval=interval, sink=sink, stop=stop,
                         opening=opening, watch=watch)
    finally:
        if opening is not None:
            opening.abandon()


def _plan_and_replay(job: ReplayJob, ledger: Ledger, migration_id: int, store: WalStore,
                     observer: Observer, executor: Executor | None, summary: RunSummary,
                     start: int, *, watermark: int | None, interval: float | None,
                     sink: SinkFactory | None, stop: threading.Event | None,
                     opening: Opening | None, watch: Watch | None = None) -> None:
    view = read_replication(open_cluster(job.source).endpoints)
    summary.retention = assess(view, job.spec.replay.archive_ttl,
                               None if interval is None else int(interval * 1000))
    since = watermark if job.mode == CATCH_UP and job.start is None else start
    assert since is not None
    ttl = job.spec.replay.archive_ttl
    with watch.reconciling() if watch is not None else nullcontext():
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
    books = RunBooks(ledger, migration_id, job.mode == CATCH_UP, observer, since, job.stream)
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
                summary.outcomes = replay_here(job, store, tasks, books, start, opened, stop,
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
    """Catch-up: an archived file with no edit in the window will never get one, and a file
    of a kind that holds no table's edit (hbase:meta's WAL, live or not) never does."""
    for item in manifest.items:
        if not item.included and (item.state in CLOSED_STATES or item.kind in NO_TABLE_EDITS):
            ledger.mark_wal_skipped(migration_id, stream, item.path, item.reason)


