"""On Spark the range engine runs a job per range, so that a failure loses nothing that
finished: each result reaches ``done`` as its job ends (the copy records its range then),
the jobs running when one fails end and are handed on, none starts after, and the failure
is raised in one line. A rerun then redoes no range that finished."""

from __future__ import annotations

import socket
import threading
import time
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from hbase_migrate import runstate
from hbase_migrate.ranges.engine import JOB_GROUP, SparkEngine
from hbase_migrate.ranges.keyrange import RangeError
from hbase_migrate.spark.jobs import group_job_ids

pytestmark = pytest.mark.integration
ITEMS = list(range(12))


def test_a_failed_range_loses_none_that_finished(spark: Any, tmp_path: Path) -> None:
    marks = tmp_path / "ended"
    marks.mkdir()

    def task(item: int) -> int:  # (by value: nested)
        if item == 3:
            raise RangeError(f"range {item} cannot be copied")
        time.sleep(1.0)
        (marks / str(item)).write_text("", encoding="utf-8")
        return item * 10

    seen: list[tuple[int, int]] = []
    progress: list[int] = []
    engine = SparkEngine(spark)
    with pytest.raises(RangeError) as raised:
        engine.map(task, ITEMS, what="copy 12 key ranges", done=lambda i, r: seen.append(
            (i, r)), progress=lambda n, _: progress.append(n))
    ended = sorted(int(p.name) for p in marks.iterdir())
    assert sorted(seen) == [(i, i * 10) for i in ended] and ended, (seen, ended)
    assert progress == list(range(1, len(ended) + 1))
    assert len(ended) < len(ITEMS) - 1  # no job started after the failure
    said = str(raised.value)
    assert said.startswith("copy 12 key ranges: a Spark task failed: ") and \
        "range 3 cannot be copied" in said and "\n" not in said, said

    # and what finishes arrives in the items' order when none fails
    assert engine.map(lambda i: i + 1, ITEMS, what="add") == [i + 1 for i in ITEMS]


class _CancelSpy:
    """``inner`` as it is, but its ``cancel...`` calls (and those of its JVM side, ``_jsc``
    and ``sc()``) set ``cancelled`` once made."""

    def __init__(self, inner: Any, cancelled: threading.Event) -> None:
        self._inner, self.cancelled = inner, cancelled

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._inner, name)
        if name == "_jsc":
            return _CancelSpy(found, self.cancelled)
        if name == "sc":
            return lambda: _CancelSpy(found(), self.cancelled)
        if not name.startswith("cancel"):
            return found

        def cancel(*args: Any) -> Any:
            try:
                return found(*args)
            finally:
                self.cancelled.set()
        return cancel


class _RacingContext(_CancelSpy):
    """The session's SparkContext, but the job of partition ``late`` reaches Spark only
    once ``submitting`` was told and a cancel was made: its thread had decided to start it
    before the user stopped. What Spark then said of it is kept in ``late_error``."""

    def __init__(self, context: Any, late: int) -> None:
        super().__init__(context, threading.Event())
        self.late, self.submitting = late, threading.Event()
        self.late_error: BaseException | None = None

    def runJob(self, rdd: Any, func: Any, partitions: list[int]) -> Any:
        if partitions != [self.late]:
            return self._inner.runJob(rdd, func, partitions)
        self.submitting.set()
        assert self.cancelled.wait(60), "the step was never cancelled"
        try:
            return self._inner.runJob(rdd, func, partitions)
        except BaseException as exc:
            self.late_error = exc
            raise


def test_no_job_starts_after_a_cancel(spark: Any, tmp_path: Path) -> None:
    """Ctrl-C while a thread is about to submit its range's job: the job group is cancelled
    and the job submitted after it is cancelled too, never run; Ctrl-C goes on up."""
    marks = tmp_path / "ran"
    marks.mkdir()

    def task(item: int) -> int:  # (by value: nested)
        (marks / str(item)).write_text("", encoding="utf-8")
        return item

    racing = _RacingContext(spark.sparkContext, late=1)

    def done(item: int, result: int) -> None:  # range 0 recorded, then the user's Ctrl-C
        assert racing.submitting.wait(60), "range 1's job was never about to start"
        raise KeyboardInterrupt

    engine = SparkEngine(SimpleNamespace(sparkContext=racing))
    with pytest.raises(KeyboardInterrupt):
        engine.map(task, [0, 1], what="copy 2 key ranges", done=done)
    assert sorted(p.name for p in marks.iterdir()) == ["0"]  # range 1 never ran
    assert "cancel" in str(racing.late_error), racing.late_error  # Spark refused it

    # the session goes on: a later step's jobs run
    assert engine.map(lambda i: i * 2, [1, 2], what="double") == [2, 4]


WAIT_S = 60.0  # a bound on each wait for Spark (a busy machine), never a pause


def held_task(port: int, item: int) -> int:
    """Range 1 tells the test at ``port`` it runs, then waits for its word to end."""
    if item == 1:
        with socket.create_connection(("127.0.0.1", port)) as told:
            told.sendall(b"running")
            told.recv(1)
    return item


class Holder:
    """The test's end of range 1's connection: ``running`` once the task said so, ``gone``
    once its process closed it; :meth:`release` lets the task end."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.running, self.gone = threading.Event(), threading.Event()
        self.conn: socket.socket | None = None
        self.thread = threading.Thread(target=self._serve, name="holder")
        self.thread.start()

    def _serve(self) -> None:
        self.server.settimeout(4 * WAIT_S)
        conn, _ = self.server.accept()
        self.conn = conn
        conn.recv(7)
        self.running.set()
        conn.recv(1)  # the task's end: its process killed, or released
        self.gone.set()

    def release(self) -> None:
        if self.conn is not None and not self.gone.is_set():
            self.conn.sendall(b"!")

    def close(self) -> None:
        self.release()
        self.thread.join()
        self.server.close()
        if self.conn is not None:
            self.conn.close()


def test_a_stop_through_runstate_cancels_the_jobs_and_waits_for_their_tasks(
        spark: Any) -> None:
    """A stop asked through runstate while range 1's task runs (range 0 handed on): the
    step raises Stopped once the job is cancelled and its task no longer runs (its Python
    worker killed: its connection closed before anything let it end); the session goes
    on."""
    holder = Holder()
    engine = SparkEngine(spark)
    returned = threading.Event()

    def done(item: int, result: int) -> None:  # range 0 handed on, range 1 running
        assert holder.running.wait(WAIT_S), "range 1 never ran"
        runstate.request_stop()

    def release_if_not_stopped() -> None:  # a step that never stopped ends, and fails
        if not returned.wait(WAIT_S):
            holder.release()

    watchdog = threading.Thread(target=release_if_not_stopped, name="watchdog")
    watchdog.start()
    before = set(group_job_ids(spark.sparkContext, JOB_GROUP))
    try:
        with pytest.raises(runstate.Stopped, match="stopped on request"):
            try:
                engine.map(partial(held_task, holder.port), [0, 1], what="copy 2 key ranges",
                           done=done)
            finally:
                returned.set()
        tracker = spark.sparkContext.statusTracker()  # as the step said it stopped
        jobs = sorted(set(group_job_ids(spark.sparkContext, JOB_GROUP)) - before)
        assert sorted(tracker.getJobInfo(j).status for j in jobs) == ["FAILED", "SUCCEEDED"]
        assert [tracker.getStageInfo(s).numActiveTasks
                for j in jobs for s in tracker.getJobInfo(j).stageIds] == [0, 0]
        assert holder.gone.wait(WAIT_S)  # its process ended it, not the test
    finally:
        runstate.reset()
        watchdog.join()
        holder.close()
    assert engine.map(lambda i: i * 2, [1, 2], what="double") == [2, 4]
