"""``--follow``: catch-up runs repeat under one lock until stopped; a live file that grows
between runs is resumed from its saved offset."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from hbase_migrate.audit.records import WalStatus
from hbase_migrate.errors import ConfigError
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.run import RunSummary, follow_replay
from tests.replay.conftest import Clusters, T
from tests.replay.test_run_catchup import Setup
from tests.replay.test_run_support import RS1, puts

pytestmark = pytest.mark.integration


def test_follow_resumes_a_growing_live_file_until_stopped(clusters: Clusters, table: str,
                                                          tmp_path: Path) -> None:
    s = Setup(clusters, table, tmp_path)
    calls = puts("f", 0, 7)
    live = s.root.write(RS1, T, table, calls[:3], state="live", trailer=False)
    s.source_writes(calls)
    stop = threading.Event()
    runs: list[RunSummary] = []

    def on_run(summary: RunSummary) -> None:
        runs.append(summary)
        if len(runs) == 1:
            s.root.write(RS1, T, table, calls, state="live", trailer=False)  # it grew
        elif len(runs) == 3:
            stop.set()

    code = follow_replay(s.job, 0.05, stop, on_run=on_run).exit_code
    assert code == 0
    assert [sum(o.run.entries for o in r.outcomes) for r in runs] == [3, 4, 0]
    assert runs[1].outcomes[0].start_offset == runs[0].outcomes[0].offset
    assert s.rows() == {live.name: (WalStatus.REPLAYING, live.stat().st_size, 7)}
    assert s.equal()


def test_follow_needs_a_catch_up_job(clusters: Clusters, table: str, tmp_path: Path) -> None:
    s = Setup(clusters, table, tmp_path)
    window = ReplayJob.from_spec(s.spec, start=T, end=T + 1)
    with pytest.raises(ConfigError, match="--follow needs a catch-up replay"):
        follow_replay(window, 1.0, threading.Event())
