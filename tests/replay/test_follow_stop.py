"""Stopping ``--follow`` from the outside: the first SIGTERM asks it to end, a follow still
ending after the grace period prints where its threads wait, a second signal interrupts;
SIGUSR1 prints a command-line process's stacks at any time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from hbase_migrate.commands import replay as replay_command
from hbase_migrate.commands.replay import follow_until_stopped
from hbase_migrate.replay.summary import FollowSummary


class Job:
    name = "orders"


def stuck_follow(job: Any, interval: float, stop: threading.Event, **_: Any) -> FollowSummary:
    """A follow whose run does not end when asked (it never looks at ``stop``)."""
    time.sleep(30)
    return FollowSummary(job.name, "source", 0)


def signal_self(times: int, every: float) -> None:
    for _ in range(times):
        time.sleep(every)
        os.kill(os.getpid(), signal.SIGTERM)


def test_a_follow_that_does_not_end_shows_its_threads_and_a_second_signal_interrupts_it(
        monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(replay_command, "STOP_REPORT_S", 0.3)
    before = signal.getsignal(signal.SIGTERM)
    sender = threading.Thread(target=signal_self, args=(2, 0.8))
    sender.start()
    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        follow_until_stopped(Job(), 1.0, False, False, stuck_follow, str)  # type: ignore[arg-type]
    sender.join()
    assert time.monotonic() - began < 5
    err = capfd.readouterr().err
    assert "the follow of orders is still ending 0.3 s after the stop signal" in err
    assert "in stuck_follow" in err  # the stack of the thread that does not end
    assert signal.getsignal(signal.SIGTERM) == before  # its handler is gone again


def test_one_signal_ends_a_follow_that_listens_without_a_report(
        capfd: pytest.CaptureFixture[str]) -> None:
    def listening(job: Any, interval: float, stop: threading.Event, **_: Any) -> FollowSummary:
        stop.wait(30)
        return FollowSummary(job.name, "source", 0)

    sender = threading.Thread(target=signal_self, args=(1, 0.3))
    sender.start()
    assert follow_until_stopped(Job(), 1.0, False, False, listening, str) == 0  # type: ignore[arg-type]
    sender.join()
    assert "still ending" not in capfd.readouterr().err


def test_sigusr1_prints_the_stacks_of_a_command_line_process() -> None:
    waiting = ("import os, signal, time\n"
               "from hbase_migrate.cli import _stacks_on_usr1\n"
               "_stacks_on_usr1()\n"
               "def where_it_waits():\n"
               "    os.kill(os.getpid(), signal.SIGUSR1); time.sleep(0.5)\n"
               "where_it_waits()\n")
    done = subprocess.run([sys.executable, "-c", waiting], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "in where_it_waits" in done.stderr and "Current thread" in done.stderr
