"""Replaying WAL files with Spark: one task per file, as WALPlayer does.

The driver plans the run (:func:`hbase_migrate.replay.run.run_replay` with
:func:`spark_executor`); each task opens the target itself, replays its file from the
planned offset and returns the file's :class:`FileOutcome`; the driver records the outcomes
in the ledger. Each task first logs in to the secured clusters
(:mod:`hbase_migrate.ranges.credentials`). pyspark is imported by the caller, never here at
import time.

Files are independent units here. The one cross-file ordering case (a region moved between
servers, the same cell and timestamp written on both sides) is honoured by the sequential
replay only (:mod:`hbase_migrate.replay.ordering`): the Spark tasks run at once, so the
target may keep the older side's cell; replay such a window without Spark, or re-copy the
moved region's key range.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from hbase_migrate.errors import ConfigError
from hbase_migrate.ranges.credentials import authenticated, ship_credentials
from hbase_migrate.ranges.engine import task_error
from hbase_migrate.replay.errors import ReplayError
from hbase_migrate.replay.job import FileOutcome, FileTask, ReplayJob
from hbase_migrate.replay.run import Executor

JOB_GROUP = "hbase-migrate-replay"


def replay_in_task(job: ReplayJob, start: int, task: FileTask, *, tasks: int = 1
                   ) -> FileOutcome:
    """Runs inside a Spark task: replay one file into a target opened here, this task one
    of ``tasks`` sharing the replay limit."""
    from hbase_migrate.replay.discovery import open_wal_store
    from hbase_migrate.replay.run import open_job_target
    from hbase_migrate.replay.worker import replay_task

    try:
        store = open_wal_store(job.source)
    except ConfigError:
        store = None  # moves to oldWALs/ cannot be followed; the file fails and is retried
    target = open_job_target(job, tasks)
    try:
        return replay_task(task, job.replay_spec(start), target, store=store)
    finally:
        target.close()


def replay_files_with_spark(spark: Any, job: ReplayJob, start: int,
                            tasks: Sequence[FileTask]) -> list[FileOutcome]:
    """Replay ``tasks`` as one Spark job with one task (partition) per file."""
    if not tasks:
        return []
    context = spark.sparkContext
    context.setJobGroup(JOB_GROUP, f"replay {len(tasks)} WAL files of migration {job.name}")
    rdd = context.parallelize(list(tasks), len(tasks))
    at_once = min(len(tasks), max(1, int(context.defaultParallelism)))
    task = authenticated(partial(replay_in_task, job, start, tasks=at_once),
                         ship_credentials(spark, job.spec))
    try:
        outcomes: list[FileOutcome] = rdd.map(task).collect()
    except Exception as exc:
        raise ReplayError(f"replay of {len(tasks)} WAL files of migration {job.name}: a Spark "
                          f"task failed: {task_error(exc)}") from exc
    return outcomes


def spark_executor(spark: Any) -> Executor:
    """An executor for :func:`run_replay` that runs the files on ``spark``."""
    return partial(replay_files_with_spark, spark)
