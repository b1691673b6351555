"""Replaying WAL files with Spark: one task per part of the run, its files one after another.

The driver plans the run (:func:`hbase_migrate.replay.run.run_replay` with
:func:`spark_executor`); each task borrows the target's clients from those its Python
worker keeps (connected by the worker's first task, not once per file), replays its part's
files from their planned offsets in the plan's order and returns their :class:`FileOutcome`
each; the driver records the outcomes in the ledger as each part's Spark job ends (a job per
part, so that a failure or a stop keeps what the parts finished before). Ctrl-C, or a stop
asked through :mod:`hbase_migrate.runstate`, cancels the run's jobs and returns once none
of their tasks runs (:mod:`hbase_migrate.spark.jobs`): a stopped replay writes nothing
more. Each task first logs in to the secured clusters
(:mod:`hbase_migrate.ranges.credentials`). pyspark is imported by the caller, never here at
import time.

:class:`SparkReplay` is the executor of a caller that names a master: with ``auto`` each
run's files go to Spark only when they hold about ``[spark] auto_cells`` cells or more
(estimated from the WAL bytes left to read), as the range steps choose.

A part is a WAL chain (a region server and its WAL group), or the chains a region move ties
together (:mod:`hbase_migrate.replay.parts`): the same cell written twice at one timestamp,
before and after a roll or a move, must reach the target in the source's order
(:mod:`hbase_migrate.replay.ordering`), which one task per file (WALPlayer's way) does not
keep. The parts run at once, as many as the executors have cores (twice as many queued).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import replace
from functools import partial
from typing import Any

from hbase_migrate.config import IN_PROCESS, MigrationSpec
from hbase_migrate.errors import ConfigError
from hbase_migrate.ranges.choice import EngineChoice, choose_engine
from hbase_migrate.ranges.credentials import authenticated, ship_credentials
from hbase_migrate.ranges.engine import spark_session
from hbase_migrate.replay.errors import ReplayError
from hbase_migrate.replay.job import FileOutcome, FileTask, ReplayJob
from hbase_migrate.replay.parts import HeldBack, by_part
from hbase_migrate.replay.run import Executor
from hbase_migrate.spark.errors import task_error
from hbase_migrate.spark.jobs import JobGroup, NotStarted, until_stopped
from hbase_migrate.spark.shipped import executor_spec
from hbase_migrate.spark.yarn import Placement, in_container

JOB_GROUP = "hbase-migrate-replay"  # each call's group: this, the process, a number


def replay_in_task(job: ReplayJob, start: int, part: Sequence[FileTask], *, tasks: int = 1
                   ) -> list[FileOutcome]:
    """Runs inside a Spark task: replay a part's files, in order, into a target opened
    here, this task one of ``tasks`` sharing the replay limit; after a failure the next run
    retries, the part's later files wait for it (:class:`HeldBack`)."""
    from hbase_migrate.replay.discovery import open_wal_store
    from hbase_migrate.replay.job_target import lent_job_target
    from hbase_migrate.replay.worker import replay_task

    try:
        store = open_wal_store(job.source)
    except ConfigError:
        store = None  # moves to oldWALs/ cannot be followed; the file fails and is retried
    with lent_job_target(job, tasks) as target:  # connected once per Python worker
        outcomes, held = [], HeldBack()
        for task in part:
            if held.holds(task):
                break  # the files after a failure wait for the next run
            outcomes.append(replay_task(task, job.replay_spec(start), target, store=store))
            held.note(task, outcomes[-1])
        return outcomes


def replay_files_with_spark(spark: Any, job: ReplayJob, start: int,
                            tasks: Sequence[FileTask], placement: Placement | None = None
                            ) -> Iterator[FileOutcome]:
    """Replay ``tasks`` (in the plan's order) as a Spark job per part, each of one task
    (on YARN, each task's container counted in ``placement``), in a job group of this call's
    (:class:`JobGroup`); each part's outcomes are yielded (the caller records them) as its
    job ends. After a failure no part starts, those running end, and the failure is raised.

    The jobs are submitted from threads while this thread waits: Ctrl-C, a stop asked
    through :mod:`hbase_migrate.runstate` (raised as :class:`Stopped`) or the caller closing
    this generator cancels them, waits (bounded) until none of their tasks runs, then
    raises: the parts finished before are recorded, the others are the next run's."""
    if not tasks:
        return
    context = spark.sparkContext
    what = f"replay {len(tasks)} WAL files of migration {job.name}"
    job = replace(job, spec=executor_spec(job.spec))  # endpoints resolved here, no ledger
    parts = list(by_part(tasks).values())
    rdd = context.parallelize(parts, len(parts))
    slots = max(1, int(context.defaultParallelism))
    task = authenticated(partial(replay_in_task, job, start, tasks=min(len(parts), slots)),
                         ship_credentials(spark, job.spec))
    func: Callable[[Sequence[FileTask]], Any] = (
        task if placement is None else partial(in_container, task))
    group = JobGroup(context, JOB_GROUP, what)
    pool = ThreadPoolExecutor(min(len(parts), 2 * slots), thread_name_prefix="replay-job")
    error: Exception | None = None
    try:
        futures = [pool.submit(group.run, rdd, partial(map, func), i)
                   for i in range(len(parts))]
        for future in until_stopped(futures, what):
            try:
                (result,) = future.result()
            except NotStarted:
                continue
            except Exception as exc:
                error = error or exc
                continue
            if placement is not None:
                result, container = result
                placement.containers[container] += 1
            yield from result
    except BaseException:  # Ctrl-C, a stop, the caller gone: nothing of the replay runs on
        group.stop()
        raise
    finally:
        pool.shutdown(cancel_futures=True)
    if error is not None:
        raise ReplayError(f"{what}: a Spark task failed: {task_error(error)}") from error


def spark_executor(spark: Any) -> Executor:
    """An executor for :func:`run_replay` that runs the files on ``spark``."""
    return partial(replay_files_with_spark, spark)


# About how many WAL bytes an edit's cell takes (key, value, entry framing): how ``auto``
# turns the bytes a run has left to read into its estimate of cells.
WAL_BYTES_PER_CELL = 100


class SparkReplay:
    """An executor for :func:`run_replay` on ``master`` (a Spark master URL, ``auto`` or
    ``in-process``): for each run it chooses (:attr:`choice`), then replays the files on
    Spark or returns None to have them replayed in this process. The session it starts
    serves the following runs of a follow; :meth:`close` stops it."""

    def __init__(self, spec: MigrationSpec, master: str) -> None:
        self.spec, self.master = spec, master
        self.choice: EngineChoice | None = None
        self._spark: Any = None
        self.executors = ""  # what the session's executors run (the step's output says)
        self.placement: Placement | None = None  # YARN: its application and containers
        self._stack = ExitStack()

    def __call__(self, job: ReplayJob, start: int, tasks: Sequence[FileTask]
                 ) -> Iterator[FileOutcome] | None:
        left = sum(max(0, (t.size or 0) - t.start_offset) for t in tasks)
        self.choice = choose_engine(self.master, self.spec.engine, left // WAL_BYTES_PER_CELL)
        if self.choice.master == IN_PROCESS or not tasks:
            return None
        if self._spark is None:
            session = self._stack.enter_context(spark_session(
                self.choice.master, f"hbase-migrate replay {job.name}", self.spec, wal=True))
            self._spark, self.executors = session.spark, session.executors
            self.placement = session.placement
        return self._replayed(job, start, tasks)

    def _replayed(self, job: ReplayJob, start: int, tasks: Sequence[FileTask]
                  ) -> Iterator[FileOutcome]:
        try:
            yield from replay_files_with_spark(self._spark, job, start, tasks, self.placement)
        finally:  # what ran the files: the caller reads it once they are recorded
            assert self.choice is not None
            self.choice = replace(self.choice, executors=self.executors, yarn=None if
                                  self.placement is None else self.placement.to_metrics())

    def close(self) -> None:
        self._stack.close()
        self._spark = None

    def __enter__(self) -> SparkReplay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
