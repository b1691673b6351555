"""Kills of Airflow task processes: the process running a task instance's step (LocalExecutor's
task runner, the child its supervisor forks, titled ``airflow worker -- <task instance id>``)
or that supervisor (the LocalExecutor's worker process, the one that reports the task's end)
SIGKILLed at a seeded point of the step, as an OOM kill or an evicted pod does; Airflow's own
retry then runs the task again. What each kill hit is read from the ledger."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from hbase_migrate.airflow_stack import AirflowStack
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepStatus
from hbase_migrate.soak.crash_checks import LedgerView, read_view
from tests.support.wait import wait_for

TITLE = "airflow worker -- "  # the task runner's process title, then the task instance's id


@dataclass(frozen=True)
class Target:
    """A task instance to kill: ``task_id`` (``map_index`` -1 when not mapped), at
    ``fraction`` of ``expected`` seconds after its process recorded its first ledger step;
    the runner, or with ``supervisor`` the process supervising it."""

    task_id: str
    map_index: int = -1
    fraction: float = 0.5
    expected: float = 1.0
    supervisor: bool = False

    @property
    def name(self) -> str:
        return self.task_id + (f"[{self.map_index}]" if self.map_index >= 0 else "")


@dataclass
class Killed:
    """What a kill did: the task runner's pid, whether the process was still running its
    task (``hit``), the ledger steps it had started and their status at the kill, and the
    ledger before the task ran and at the kill (for the work redone)."""

    target: Target
    pid: int
    hit: bool
    steps: list[int] = field(default_factory=list)
    running: list[int] = field(default_factory=list)  # of ``steps``, running at the kill
    before: LedgerView | None = None
    at_kill: LedgerView | None = None


def task_path(dag_id: str, run_id: str, target: Target) -> str:
    path = f"/dags/{dag_id}/dagRuns/{quote(run_id, safe='')}/taskInstances/{target.task_id}"
    return path + (f"/{target.map_index}" if target.map_index >= 0 else "")


def task_instance(stack: AirflowStack, dag_id: str, run_id: str, target: Target
                  ) -> dict[str, Any] | None:
    status, answer = stack.api("GET", task_path(dag_id, run_id, target))
    return dict(answer) if status == 200 else None


def runner_pid(ti_id: str) -> int | None:
    """The process titled as the task runner of task instance ``ti_id``, if any."""
    wanted = (TITLE + ti_id).encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            title = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if title.startswith(wanted):
            return int(entry.name)
    return None


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (not gone, not a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def parent_pid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


@contextmanager
def frozen(pid: int) -> Iterator[None]:
    """``pid`` stopped (SIGSTOP) while the caller looks at what it did, then continued: on a
    loaded machine the look may take seconds, and the process must not run on meanwhile."""
    try:
        os.kill(pid, signal.SIGSTOP)
    except ProcessLookupError:
        yield
        return
    try:
        yield
    finally:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


def steps_of(ledger_url: str, pid: int) -> list[int]:
    """The ledger steps process ``pid`` began, read through a read-only connection (the
    ledger is SQLite in WAL mode: a reader never waits on a writer, even a stopped one)."""
    assert ledger_url.startswith("sqlite:///"), ledger_url
    path = ledger_url.removeprefix("sqlite:///")
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30) as db:
        return [row[0] for row in db.execute("SELECT id FROM steps WHERE pid = ?", (pid,))]


def view(ledger_url: str, name: str) -> LedgerView:
    with Ledger.open(ledger_url) as ledger:
        return read_view(ledger, name, int(time.time() * 1000))


def kill_task(stack: AirflowStack, dag_id: str, run_id: str, target: Target,
              ledger_url: str, name: str, timeout: float = 120.0) -> Killed:
    """Wait for ``target``'s first try to run, then for its runner's first ledger step,
    then ``fraction * expected`` seconds; SIGKILL the runner or its supervisor (the ledger
    before the task ran is read first, for the redone work). The runner is stopped (SIGSTOP)
    during each look at its steps, and killed within one, so however slow the looking on a
    loaded machine, it has not run on past the moment drawn while it was looked at."""
    before = view(ledger_url, name)

    def running() -> str | None:
        ti = task_instance(stack, dag_id, run_id, target)
        if ti is None:
            return None
        assert ti["state"] not in ("success", "failed", "upstream_failed", "skipped"), (
            f"{target.name} ended {ti['state']} before its process was seen")
        return str(ti["id"]) if ti["state"] == "running" else None

    ti_id = wait_for(running, timeout, f"{dag_id} {run_id} {target.name} running", every=0.2)
    pid = wait_for(lambda: runner_pid(ti_id), timeout, f"the runner of {target.name}",
                   every=0.02)
    victim = parent_pid(pid) if target.supervisor else pid

    delay = target.fraction * target.expected
    began: list[float] = []  # when the runner's first ledger step was seen

    def look() -> str | None:
        """One look at the stopped runner: gone, killed (its moment come), or not yet."""
        with frozen(pid):
            if not alive(pid):
                return "gone"
            if not began and steps_of(ledger_url, pid):
                began.append(time.monotonic())
            if began and time.monotonic() - began[0] >= delay:
                os.kill(victim, signal.SIGKILL)
                return "killed"
        return None

    hit = wait_for(look, timeout + delay, f"a ledger step of {target.name}'s runner",
                   every=0.01) == "killed"
    if hit:
        wait_for(lambda: not alive(victim), 30, f"{target.name}'s process {victim} gone")
    at_kill = view(ledger_url, name)
    steps = [s for s in at_kill.steps if s.pid == pid]
    return Killed(target, pid, hit, [s.id for s in steps],
                  [s.id for s in steps if s.status is StepStatus.RUNNING], before, at_kill)
