"""Replaying WAL files with Spark: one task per part of the run, its files one after another.

The driver plans the run (:func:`hbase_migrate.replay.run.run_replay` with
:func:`spark_executor`); each task borrows the target's clients from those its Python
worker keeps (connected by the worker's first task, not once per file), replays its part's
files from their planned offsets in the plan's order and returns their :class:`FileOutcome`
each; the driver records the outcomes
in the ledger. Each task first logs in to the secured clusters
(:mod:`hbase_migrate.ranges.credentials`). pyspark is imported by the caller, never here at
import time.

:class:`SparkReplay` is the executor of a caller that names a master: with ``auto`` each
run's files go to Spark only when they hold about ``[spark] auto_cells`` cells or more
(estimated from the WAL bytes left to read), as the range steps choose.

A part is a WAL chain (a region server and its WAL group), or the chains a region move ties
together (:mod:`hbase_migrate.replay.parts`): the same cell written twice at one timestamp,
before and after a roll or a move, must reach the target in the source's order
(:mod:`hbase_migrate.replay.ordering`), which one task per file (WALPlayer's way) does not
keep. The parts run at once, as many as the cluster has chains.
"""

from __future__ import annotations

from collections.abc import Sequence
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
from hbase_migrate.spark.shipped import executor_spec
from hbase_migrate.spark.yarn import Placement, in_container

JOB_GROUP = "hbase-migrate-replay"


def replay_in_task(job: ReplayJob, start: int, part: Sequence[FileTask], *, tasks: int = 1
                   ) -> list[FileOutcome]:
    """Runs inside a Spark task: replay a part's files, in order, into a target opened
    here, this task one of ``tasks`` sharing the replay limit; after a failure the next run
    retries, the part's later files wait for it (:class:`HeldBack`)."""
    from hbase_migrate.replay.discovery import open_wal_store
    from hbase_migrate.replay.run import lent_job_target
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
                            ) -> list[FileOutcome]:
    """Replay ``tasks`` (in the plan's order) as one Spark job with one task (partition) per
    part (on YARN, each task's container counted in ``placement``)."""
    if not tasks:
        return []
    context = spark.sparkContext
    context.setJobGroup(JOB_GROUP, f"replay {len(tasks)} WAL files of migration {job.name}")
    job = replace(job, spec=executor_spec(job.spec))  # endpoints resolved here, no ledger
    parts = list(by_part(tasks).values())
    rdd = context.parallelize(parts, len(parts))
    at_once = min(len(parts), max(1, int(context.defaultParallelism)))
    task = authenticated(partial(replay_in_task, job, start, tasks=at_once),
                         ship_credentials(spark, job.spec))
    try:
        if placement is not None:
            pairs: list[tuple[list[FileOutcome], str]] = rdd.map(
                partial(in_container, task)).collect()
            placement.containers.update(c for _, c in pairs)
            return [o for outcomes, _ in pairs for o in outcomes]
        done: list[list[FileOutcome]] = rdd.map(task).collect()
    except Exception as exc:
        raise ReplayError(f"replay of {len(tasks)} WAL files of migration {job.name}: a Spark "
                          f"task failed: {task_error(exc)}") from exc
    return [o for outcomes in done for o in outcomes]



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
                 ) -> list[FileOutcome] | None:
        left = sum(max(0, (t.size or 0) - t.start_offset) for t in tasks)
        self.choice = choose_engine(self.master, self.spec.engine, left // WAL_BYTES_PER_CELL)
        if self.choice.master == IN_PROCESS or not tasks:
            return None
        if self._spark is None:
            session = self._stack.enter_context(spark_session(
                self.choice.master, f"hbase-migrate replay {job.name}", self.spec, wal=True))
            self._spark, self.executors = session.spark, session.executors
            self.placement = session.placement
        outcomes = replay_files_with_spark(self._spark, job, start, tasks, self.placement)
        self.choice = replace(self.choice, executors=self.executors, yarn=None if
                              self.placement is None else self.placement.to_metrics())
        return outcomes

    def close(self) -> None:
        self._stack.close()
        self._spark = None

    def __enter__(self) -> SparkReplay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
