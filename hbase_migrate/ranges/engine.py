"""Where range tasks run: in this process (``[ranges] threads`` at once, on threads: a task
mostly waits on the clusters' replies), or on Spark with one task (partition) per range.
pyspark is imported only when a Spark engine is made, never at import time.

A session already running in this process is used as it is (``spark-submit``, a test's
session); otherwise one is started on the configured master (``[spark] conf``, and on a
cluster master the executors' Python or the project's archive:
:mod:`hbase_migrate.spark.executors`) and stopped when the work is done. On a cluster
master the pre-flight job checks the executors before the first task
(:mod:`hbase_migrate.spark.preflight`), and tasks get the migration with its endpoints
resolved and no ledger (:meth:`RangeEngine.shipped`): the caller records what they return.
Progress is reported, and each result handed to the caller's ``done``, as ranges finish:
on Spark each range is a job of its own (a few at once, twice the cores), so that what
finished before a failure (a task failed past Spark's retries, a lost cluster) reaches the
caller, who records it, and a rerun does only the rest. On Spark, each task first logs in
to the migration's Kerberos-secured clusters (:mod:`hbase_migrate.ranges.credentials`).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, TypeVar

from hbase_migrate.config import DEFAULT_RANGE_THREADS, IN_PROCESS, EngineSettings, MigrationSpec
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.ranges.credentials import TaskCredentials, authenticated, ship_credentials
from hbase_migrate.ranges.keyrange import RangeError
from hbase_migrate.spark.errors import is_local_master, task_error
from hbase_migrate.spark.executors import ExecutorSetup, executor_setup
from hbase_migrate.spark.jobs import JobGroup, NotStarted, until_stopped
from hbase_migrate.spark.preflight import preflight, summary
from hbase_migrate.spark.shipped import executor_spec
from hbase_migrate.spark.yarn import (
    Placement,
    check_yarn,
    driver_environment,
    in_container,
    is_yarn,
    staged_jars,
)

T = TypeVar("T")
R = TypeVar("R")
Progress = Callable[[int, int], None]  # (ranges done, ranges in all)
Done = Callable[[Any, Any], None]  # (item, its result) as each task's result arrives
JOB_GROUP = "hbase-migrate-ranges"
log = logging.getLogger(__name__)


class RangeEngine(Protocol):
    """Runs ``task`` on every item and returns the results in the items' order."""

    name: str
    slots: int  # tasks that run at once
    executors: str  # what runs the tasks ("" in-process)
    placement: Placement | None  # on YARN: the application and the containers tasks ran in

    def shipped(self, spec: MigrationSpec) -> MigrationSpec:
        """``spec`` as this engine's tasks get it (:func:`executor_spec` on Spark: they
        record nothing in the ledger; the caller records what they return)."""
        ...

    def shares(self, tasks: int) -> int:
        """Into how many shares the step's limits are divided for ``tasks`` tasks: one per
        process running them at once (the tasks of one process share its throttle,
        :func:`hbase_migrate.limits.registry.throttle_for`)."""
        ...

    def map(self, task: Callable[[T], R], items: Sequence[T], *, what: str,
            progress: Progress | None = None, done: Done | None = None) -> list[R]:
        """``done(item, result)`` is called in the calling thread as each result arrives
        (on Spark also those of the tasks still running when another failed, before that
        failure is raised: the caller records them)."""
        ...


class InProcessEngine:
    """Every task in this process, ``slots`` at once on threads (one: one after the other
    in the calling thread). They share the process's throttle: the limits are not divided."""

    name = IN_PROCESS
    executors = ""
    placement: Placement | None = None

    def __init__(self, slots: int = 1) -> None:
        self.slots = max(1, slots)

    def shares(self, tasks: int) -> int:
        return 1

    def shipped(self, spec: MigrationSpec) -> MigrationSpec:
        return spec  # tasks run here: the ledger and the driver's files are theirs

    def map(self, task: Callable[[T], R], items: Sequence[T], *, what: str,
            progress: Progress | None = None, done: Done | None = None) -> list[R]:
        if self.slots > 1 and len(items) > 1:
            return in_threads(min(self.slots, len(items)), task, items, progress, what, done)
        results = []
        for item in items:
            results.append(task(item))
            if done is not None:
                done(item, results[-1])
            if progress is not None:
                progress(len(results), len(items))
        return results


def in_threads(threads: int, task: Callable[[T], R], items: Sequence[T],
               progress: Progress | None = None, what: str = "task",
               done: Done | None = None) -> list[R]:
    """``task`` on every item, ``threads`` at once, the results in the items' order and
    progress (and ``done(item, result)``) reported from the calling thread. The first
    failure is raised as it is once the tasks running have ended; the tasks not yet started
    never start. Ctrl-C in the calling thread asks the running tasks to stop
    (:mod:`hbase_migrate.runstate`)."""
    results: dict[int, R] = {}
    pool = ThreadPoolExecutor(threads, thread_name_prefix=what.split(" ", 1)[0])
    try:
        futures = {pool.submit(task, item): i for i, item in enumerate(items)}
        for future in as_completed(futures):
            results[futures[future]] = future.result()
            if done is not None:
                done(items[futures[future]], results[futures[future]])
            if progress is not None:
                progress(len(results), len(items))
    except BaseException as exc:
        if not isinstance(exc, Exception):  # Ctrl-C: the tasks end at their next piece
            from hbase_migrate.runstate import request_stop

            request_stop()
        raise
    finally:
        pool.shutdown(cancel_futures=True)  # after a failure: none started anew
    return [results[i] for i in range(len(items))]


class SparkEngine:
    """One Spark job per call, one task per item, each logged in with ``credentials``."""

    def __init__(self, spark: Any, credentials: TaskCredentials | None = None,
                 executors: str = "", placement: Placement | None = None) -> None:
        self.spark = spark
        self.credentials = credentials
        self.name = str(spark.sparkContext.master)
        self.slots = max(1, int(spark.sparkContext.defaultParallelism))
        self.executors = executors  # what they run, how they got it, the pre-flight's word
        self.placement = placement  # YARN: each task tells its container

    def shipped(self, spec: MigrationSpec) -> MigrationSpec:
        return executor_spec(spec)

    def shares(self, tasks: int) -> int:
        return max(1, min(tasks, self.slots))  # a Python worker process per task at once

    def map(self, task: Callable[[T], R], items: Sequence[T], *, what: str,
            progress: Progress | None = None, done: Done | None = None) -> list[R]:
        """A job per item, :meth:`concurrent` at once (Spark's scheduler queues their tasks
        for the executors' cores); each result handed to ``done`` as its job ends. After
        the first failure no job starts, those running end (their results handed on), and
        the failure is raised. Ctrl-C, a stop asked through :mod:`hbase_migrate.runstate`
        (raised as :class:`~hbase_migrate.runstate.Stopped`) or any stop of the calling
        thread cancels the jobs running and none starts after, not even one a thread was
        submitting; it goes on up once none of their tasks runs (:class:`JobGroup`)."""
        if not items:
            return []
        context = self.spark.sparkContext
        task = authenticated(task, self.credentials)
        placed = self.placement is not None  # each task tells its YARN container
        job: Callable[[T], Any] = partial(in_container, task) if placed else task
        rdd = context.parallelize(list(items), len(items))  # a partition per item
        jobs = JobGroup(context, JOB_GROUP, what)

        def run(i: int) -> Any:
            (result,) = jobs.run(rdd, partial(map, job), i)
            return result

        pool = ThreadPoolExecutor(self.concurrent(len(items)), thread_name_prefix="range-job")
        try:
            futures = {pool.submit(run, i): i for i in range(len(items))}
            results, error = self._gathered(futures, items, what, progress, done)
        except BaseException:  # Ctrl-C, a stop: the jobs are cancelled, none starts after
            jobs.stop()  # and none of their tasks runs when the step says it stopped
            raise
        finally:
            pool.shutdown(cancel_futures=True)
        if error is not None:
            raise RangeError(f"{what}: a Spark task failed: {task_error(error)}") from error
        return [results[i] for i in range(len(items))]

    def _gathered(self, futures: dict[Future[Any], int], items: Sequence[T], what: str,
                  progress: Progress | None, done: Done | None
                  ) -> tuple[dict[int, Any], Exception | None]:
        """The results of the jobs ``futures`` as they end (handed to ``done``, counted by
        ``progress``; each task's YARN container counted), and the first failure; a stop
        asked through :mod:`hbase_migrate.runstate` raises :class:`Stopped` meanwhile."""
        results: dict[int, Any] = {}
        error: Exception | None = None
        for future in until_stopped(futures, what):
            i = futures[future]
            try:
                result = future.result()
            except NotStarted:
                continue
            except Exception as exc:
                error = error or exc
                continue
            if self.placement is not None:
                result, container = result
                self.placement.containers[container] += 1
            results[i] = result
            if done is not None:
                done(items[i], result)
            if progress is not None:
                progress(len(results), len(items))
        return results, error

    def concurrent(self, items: int) -> int:
        """How many of ``items`` jobs run at once: twice the executors' cores, so that a core
        freed finds a task queued."""
        return max(1, min(items, 2 * self.slots))


def prepare_spark_environment() -> None:
    """What a Spark session started from this process needs: loopback, and this Python on
    a local master's Python workers (a cluster master's get :func:`executor_python`)."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


@contextmanager
def executor_python(python: str) -> Iterator[None]:
    """``PYSPARK_PYTHON`` (what a new SparkContext hands every executor) set to ``python``
    while a session starts, then as it was."""
    before = os.environ.get("PYSPARK_PYTHON")
    os.environ["PYSPARK_PYTHON"] = python
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PYSPARK_PYTHON", None)
        else:
            os.environ["PYSPARK_PYTHON"] = before


def quiet_failed_attempts(spark: Any) -> None:
    """A failed task is the step's one-line error: the scheduler does not also print each
    failed attempt's traceback on the console (the executors' logs keep them)."""
    jvm = spark.sparkContext._jvm
    jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
        "org.apache.spark.scheduler.TaskSetManager", jvm.org.apache.logging.log4j.Level.ERROR)


@dataclass
class Session:
    """A Spark session and what its executors run (:class:`ExecutorSetup`), checked by the
    pre-flight job on a cluster master (``executors``: the line a step's output shows)."""

    spark: Any
    setup: ExecutorSetup
    executors: str
    placement: Placement | None = None  # YARN: the application, its queue, its containers


_checked: set[tuple[str, str, bool]] = set()  # (application, migration, wal) pre-flown


@contextmanager
def spark_session(master: str, app_name: str = "hbase-migrate",
                  spec: MigrationSpec | None = None, *, wal: bool = False
                  ) -> Iterator[Session]:
    """A Spark session on ``master``: one already running in this process is used as is;
    one started here (loopback driver, no UI, ``spec``'s ``[spark] conf`` and executors'
    Python or archive) is stopped after. On a cluster master the pre-flight job checks the
    executors for ``spec``'s tasks (``wal``: the replay's) once per application."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    prepare_spark_environment()
    running = SparkContext._active_spark_context is not None
    engine = spec.engine if spec is not None else EngineSettings()
    queue = ""
    try:
        if running:
            spark = SparkSession.builder.getOrCreate()
            setup = ExecutorSetup((), "", "executors: those of the running Spark "
                                  "application (spark-submit's settings)")
        else:
            setup = executor_setup(master, engine)
            if is_yarn(master):  # before the session: a bad set-up fails with its fix
                queue = check_yarn(dict(setup.conf), setup.archive.spark_archive
                                   if setup.archive else "")
            builder = (SparkSession.builder.master(master).appName(app_name)
                       .config("spark.ui.enabled", "false")
                       .config("spark.ui.showConsoleProgress", "false"))
            for key, value in setup.conf:
                builder = builder.config(key, value)
            with executor_python(setup.python), driver_environment(master):
                if is_yarn(master):  # Spark's jars once on the cluster, not per application
                    for key, value in staged_jars(dict(setup.conf)).items():
                        builder = builder.config(key, value)
                spark = builder.getOrCreate()
    except HBaseMigrateError:
        raise
    except Exception as exc:
        raise RangeError(f"cannot start Spark on master {master!r}: {task_error(exc)}"
                         ) from exc
    if not running:
        quiet_failed_attempts(spark)
    try:
        executors = setup.description
        name = str(spark.sparkContext.master)
        flown = (str(spark.sparkContext.applicationId), spec.name if spec else "", wal)
        if spec is not None and not is_local_master(name) and flown not in _checked:
            executors += "; " + summary(preflight(spark, spec, setup, wal=wal))
            _checked.add(flown)
        log.info("Spark on %s: %s", name, executors)
        placement = Placement(str(spark.sparkContext.applicationId), queue or str(
            spark.sparkContext.getConf().get("spark.yarn.queue", "default"))) \
            if is_yarn(name) else None
        yield Session(spark, setup, executors, placement)
    finally:
        if not running:
            spark.stop()


@contextmanager
def range_engine(master: str, app_name: str = "hbase-migrate",
                 spec: MigrationSpec | None = None) -> Iterator[RangeEngine]:
    """The engine for ``master``: in-process for ``"in-process"`` (``spec``'s ``[ranges]
    threads`` tasks at once), else Spark (:func:`spark_session`), its tasks logged in to
    ``spec``'s secured clusters."""
    if master == IN_PROCESS:
        yield InProcessEngine(DEFAULT_RANGE_THREADS if spec is None else spec.engine.threads)
        return
    with spark_session(master, app_name, spec) as session:
        spark = session.spark
        yield SparkEngine(spark, None if spec is None else ship_credentials(spark, spec),
                          session.executors, session.placement)


def bind(task: Callable[..., R], job: Any) -> Callable[[Any], R]:
    """``task(job, item)`` as a picklable function of the item."""
    return partial(task, job)
