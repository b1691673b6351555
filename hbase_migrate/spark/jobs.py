"""Spark jobs a step can stop: each call's jobs in a job group of their own
(:class:`JobGroup`), started from worker threads while the calling thread waits for them
interruptibly (:func:`until_stopped`: Ctrl-C, or a stop asked through
:mod:`hbase_migrate.runstate`). A stop cancels the group, refusing its jobs still to come,
and waits (bounded) until none of its tasks runs: once the step has said it stopped,
nothing of it still writes. A task refused (:class:`~hbase_migrate.spark.errors.TaskRefused`:
an error no other attempt cures) is not retried: its job fails after its one attempt, as a
failed job does. pyspark is imported by callers, never here.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from functools import partial
from typing import Any

from hbase_migrate import runstate
from hbase_migrate.spark.errors import Refusal, TaskRefused, refusing

log = logging.getLogger(__name__)

# How often a wait for jobs looks at the stop asked through runstate, and at the tasks of
# a cancelled group (seconds).
POLL_S = 0.2
# How long a stop waits for the tasks of its cancelled jobs to end: a PySpark task's
# Python worker is killed 2 to 4 s after its cancel (``spark.python.task.killTimeout``
# after the worker's monitor notices).
CANCEL_WAIT_S = 60.0


class NotStarted(Exception):
    """A job not started after another one of its group failed or the group was
    cancelled."""


class JobGroup:
    """The jobs of one call, in a job group of their own (``prefix`` and a number never
    reused in this process): after a failure none starts; after :meth:`cancel` none starts
    and none runs. Starting checks under the lock that :meth:`cancel` takes to set its flag,
    and the cancel that follows also refuses the group's jobs still to be submitted: a
    thread that decided to start one just before the cancel sees it cancelled as Spark
    receives it, never run."""

    def __init__(self, context: Any, prefix: str, what: str) -> None:
        self.context, self.what = context, what
        self.group = f"{prefix}-{os.getpid()}-{next(_numbers)}"
        _made.setdefault(prefix, []).append(self.group)
        self._lock = threading.Condition()
        self._failed = self._cancelled = False
        self._submitting = 0  # calls of :meth:`run` waiting for Spark's answer

    def run(self, rdd: Any, func: Callable[[Any], Any], partition: int) -> list[Any]:
        """The job computing ``partition`` of ``rdd`` with ``func``, unless stopped; a task
        refused raises its :class:`TaskRefused` here, after its one attempt."""
        with self._lock:
            if self._failed or self._cancelled:
                raise NotStarted
            self.context.setJobGroup(self.group, self.what)  # this thread's next jobs
            self._submitting += 1
        try:
            results = list(self.context.runJob(rdd, partial(refusing, func), [partition]))
            for result in results:
                if isinstance(result, Refusal):
                    raise TaskRefused(result.error)
            return results
        except BaseException:
            with self._lock:
                self._failed = True
            raise
        finally:
            with self._lock:
                self._submitting -= 1
                self._lock.notify_all()

    def cancel(self) -> None:
        """No job of the group starts from now on, and those running are cancelled."""
        with self._lock:
            self._cancelled = True
        self.context._jsc.sc().cancelJobGroupAndFutureJobs(self.group)

    def stop(self, seconds: float = CANCEL_WAIT_S) -> None:
        """:meth:`cancel`, then wait up to ``seconds`` until Spark answered every job
        submitted and none of the group's tasks runs (a task still running then is
        logged)."""
        self.cancel()
        deadline = time.monotonic() + seconds
        with self._lock:
            self._lock.wait_for(lambda: not self._submitting, seconds)
        while (running := self.running()) and time.monotonic() < deadline:
            time.sleep(POLL_S)
        if running:
            log.warning("%s: Spark job group %s still runs %s %.0f s after its cancel",
                        self.what, self.group, running, seconds)

    def running(self) -> str:
        """What of the group's jobs runs, as Spark's status tracker knows it ("" none).
        A job's tasks are read once its end is known: Spark writes a stage's task counts
        lazily while it runs, and exactly as it ends."""
        tracker = self.context.statusTracker()
        for job in tracker.getJobIdsForGroup(self.group):
            info = tracker.getJobInfo(job)
            if info is not None and info.status == "RUNNING":
                return f"job {job}"
            for stage in info.stageIds if info is not None else ():
                stage_info = tracker.getStageInfo(stage)
                if stage_info is not None and stage_info.numActiveTasks:
                    return f"{stage_info.numActiveTasks} task(s) of job {job}"
        return ""


def group_job_ids(context: Any, prefix: str) -> list[int]:
    """The ids of the jobs of every group made with ``prefix`` in this process."""
    tracker = context.statusTracker()
    return sorted(j for group in _made.get(prefix, ()) for j in tracker.getJobIdsForGroup(group))


def until_stopped(futures: Collection[Future[Any]], what: str) -> Iterator[Future[Any]]:
    """``futures`` as each ends; waits Ctrl-C can interrupt, and ends with
    :class:`~hbase_migrate.runstate.Stopped` once a stop was asked."""
    pending = set(futures)
    while pending:
        runstate.check_stop(what)
        done, pending = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
        yield from done


_numbers = itertools.count()
_made: dict[str, list[str]] = {}  # prefix -> the groups made with it, in order
