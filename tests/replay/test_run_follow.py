"""``--follow``: catch-up runs repeat under one lock until stopped; a live file that grows
between runs is resumed from its saved offset; a stop during a run begins no further file."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from hbase_migrate.audit.records import WalStatus
from hbase_migrate.errors import ConfigError
from hbase_migrate.replay.job import FileTask, ReplayJob
from hbase_migrate.replay.run import follow_replay, run_replay
from hbase_migrate.replay.summary import Observer, RunSummary
from tests.support.replay import RS1, RS2, Clusters, Setup, T, puts

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


class StopAtFirstFile(Observer):
    def __init__(self, stop: threading.Event) -> None:
        self.stop, self.started = stop, 0

    def file_started(self, task: FileTask) -> None:
        self.started += 1
        self.stop.set()  # SIGTERM while the first file is read


def test_a_stop_during_a_run_leaves_the_files_not_begun_to_the_next_run(
        clusters: Clusters, table: str, tmp_path: Path) -> None:
    s = Setup(clusters, table, tmp_path)
    calls = puts("f", 0, 6)
    first = s.root.write(RS1, T, table, calls[:3])
    second = s.root.write(RS2, T + 1, table, calls[3:])
    s.source_writes(calls)
    stop = threading.Event()
    watcher = StopAtFirstFile(stop)
    done = follow_replay(s.job, 0.05, stop, observer=watcher)
    assert (done.exit_code, done.runs, done.files_read, watcher.started) == (0, 1, 1, 1)
    assert not s.equal()
    assert run_replay(s.job).exit_code == 0  # the next run reads the file left
    assert {p: r[0] for p, r in s.rows().items()} == {
        first.name: WalStatus.REPLAYED, second.name: WalStatus.REPLAYED}
    assert s.equal()
