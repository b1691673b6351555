"""On Spark the range engine runs a job per range, so that a failure loses nothing that
finished: each result reaches ``done`` as its job ends (the copy records its range then),
the jobs running when one fails end and are handed on, none starts after, and the failure
is raised in one line. A rerun then redoes no range that finished."""

from __future__ import annotations

import time
from pathlib import Path
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
