"""A step whose process is gone does not stay ``running``: a killed process's step, or one
silent for longer than the step lease while stopped or on another host, is marked failed by
the next step of its migration and by a status read; a live step is left alone; a process
whose step was taken from it while it was stopped cannot end it, and its heartbeat says so."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hbase_migrate.audit.errors import LedgerError
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.liveness import LEASE_MS, Heartbeat
from hbase_migrate.audit.records import StepRecord, StepStatus, TableMapping
from hbase_migrate.audit.status import compute_status
from hbase_migrate.processes import process_state
from tests.support.wait import wait_for

TABLES = (TableMapping("orders", "orders"),)

# A process that runs a step of migration "m" and waits to be killed.
STEP_CHILD = """
import sys, time
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import TableMapping
with Ledger.open(sys.argv[1]) as ledger:
    mid = ledger.ensure_migration("m", "src", "dst", [TableMapping("orders", "orders")]).id
    with ledger.step(mid, "validate") as step:
        print(step.id, flush=True)
        time.sleep(600)
"""


def _step(ledger: Ledger, mid: int, step_id: int) -> StepRecord:
    return next(s for s in ledger.steps(mid) if s.id == step_id)


def test_a_killed_process_s_step_is_marked_failed_by_the_next_step(ledger_url: str) -> None:
    child = subprocess.Popen([sys.executable, "-c", STEP_CHILD, ledger_url],
                             stdout=subprocess.PIPE, text=True, cwd=Path.cwd())
    try:
        assert child.stdout is not None
        step_id = int(child.stdout.readline())
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    with Ledger.open(ledger_url) as ledger:
        mid = ledger.ensure_migration("m", "src", "dst", TABLES).id
        killed = _step(ledger, mid, step_id)
        assert killed.status is StepStatus.RUNNING and killed.pid == child.pid
        assert killed.heartbeat_at is not None

        with ledger.step(mid, "validate") as again:
            pass
        killed = _step(ledger, mid, step_id)
        assert killed.status is StepStatus.FAILED
        assert killed.error == f"abandoned: its process {child.pid} on {killed.host} is gone"
        assert killed.ended_at == killed.heartbeat_at  # its last sign of life
        assert _step(ledger, mid, again.id).status is StepStatus.SUCCEEDED


def test_a_status_read_marks_it_too(ledger_url: str, tmp_path: Path) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    with Ledger.open(ledger_url) as ledger:
        mid = ledger.ensure_migration("m", "src", "dst", TABLES).id
        step_id = ledger.start_step(mid, "replay", heartbeat=True)
        live_id = ledger.start_step(mid, "validate", heartbeat=True)  # this process: alive
        _set_pid(ledger, step_id, int(gone.stdout))  # a process that exited since
        report = compute_status(ledger, now=int(time.time() * 1000))
        steps = {s.id: s.status for s in report.migrations[0].steps}
        assert steps == {step_id: "failed", live_id: "running"}


def _set_pid(ledger: Ledger, step_id: int, pid: int) -> None:
    """Make ``step_id`` the step of process ``pid`` (as if that process had started it)."""
    from sqlalchemy import update

    from hbase_migrate.audit import records as t
    with ledger._engine.begin() as conn:
        conn.execute(update(t.steps).where(t.steps.c.id == step_id).values(pid=pid))


def test_a_gone_process_of_a_worker_on_this_host_is_marked_failed(ledger_url: str) -> None:
    """A Celery worker names its tasks' host ``worker1@<host>``: a step killed there is this
    machine's, failed at once, not left running for its lease (``soak-crash --airflow
    celery``, seed 76, found it)."""
    host = f"worker1@{socket.gethostname()}"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    with Ledger.open(ledger_url) as ledger:
        mid = ledger.ensure_migration("m", "src", "dst", TABLES).id
        step_id = ledger.start_step(mid, "snapshot-part", host=host, heartbeat=True)
        _set_pid(ledger, step_id, int(gone.stdout))
        assert ledger.reap_steps(mid) == [step_id]
        step = _step(ledger, mid, step_id)
        assert step.error == f"abandoned: its process {gone.stdout.strip()} on {host} is gone"


def test_a_stopped_process_silent_past_its_lease_is_fenced_off(ledger_url: str) -> None:
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        with Ledger.open(ledger_url) as ledger:
            mid = ledger.ensure_migration("m", "src", "dst", TABLES).id
            began = int(time.time() * 1000) - LEASE_MS - 60_000  # silent since then
            step_id = ledger.start_step(mid, "snapshot", now=began, heartbeat=True)
            _set_pid(ledger, step_id, sleeper.pid)
            assert ledger.reap_steps(mid) == []  # running here: its heartbeat may be late
            os.kill(sleeper.pid, signal.SIGSTOP)
            wait_for(lambda: process_state(sleeper.pid) == "stopped", 30, "the process to stop")
            assert ledger.reap_steps(mid, now=began + LEASE_MS) == []  # within its lease
            assert ledger.reap_steps(mid) == [step_id]  # stopped past its lease
            step = _step(ledger, mid, step_id)
            assert step.status is StepStatus.FAILED and "silent since" in (step.error or "")
            assert not ledger.beat(step_id)  # woken up: its heartbeat finds it taken
            with pytest.raises(LedgerError,
                               match="marked failed while this process was silent"):
                ledger.finish_step(step_id, StepStatus.SUCCEEDED)
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_step_elsewhere_silent_past_its_lease_is_fenced_off(ledger_url: str) -> None:
    with Ledger.open(ledger_url) as ledger:
        mid = ledger.ensure_migration("m", "src", "dst", TABLES).id
        began = int(time.time() * 1000) - LEASE_MS - 60_000
        step_id = ledger.start_step(mid, "replay", host="worker1@elsewhere", now=began,
                                    heartbeat=True)
        assert ledger.reap_steps(mid) == [step_id]


def test_a_step_elsewhere_without_heartbeat_is_left_alone(ledger_url: str) -> None:
    with Ledger.open(ledger_url) as ledger:
        mid = ledger.ensure_migration("m", "src", "dst", TABLES).id
        far = ledger.start_step(mid, "replay", host="worker1@elsewhere", now=1)
        assert ledger.reap_steps(mid) == []  # no pid this host can check, no heartbeat
        assert _step(ledger, mid, far).status is StepStatus.RUNNING


def test_the_heartbeat_beats_until_stopped_and_notices_a_fence(ledger_url: str) -> None:
    with Ledger.open(ledger_url) as ledger:
        mid = ledger.ensure_migration("m", "src", "dst", TABLES).id
        step_id = ledger.start_step(mid, "replay", now=1, heartbeat=True)
        heart = Heartbeat(lambda: ledger.beat(step_id), "replay step", seconds=0.05)
        try:
            wait_for(lambda: (_step(ledger, mid, step_id).heartbeat_at or 0) > 1, 30,
                     "a heartbeat")
            ledger.finish_step(step_id, StepStatus.FAILED, error="taken over")
            wait_for(lambda: heart.fenced, 30, "the heartbeat to find its step ended")
        finally:
            heart.stop()
