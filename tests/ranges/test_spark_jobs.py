"""On Spark the range engine runs a job per range, so that a failure loses nothing that
finished: each result reaches ``done`` as its job ends (the copy records its range then),
the jobs running when one fails end and are handed on, none starts after, and the failure
is raised in one line. A rerun then redoes no range that finished."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from hbase_migrate.ranges.engine import SparkEngine
from hbase_migrate.ranges.keyrange import RangeError

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
