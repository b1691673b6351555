"""Kills of Airflow task processes: the process running a task instance's step (the task
runner, the child its supervisor forks, titled ``airflow worker -- <task instance id>``
under the LocalExecutor and a Celery worker alike) or that supervisor (the LocalExecutor's
worker process, or the Celery worker's pool process, the one that reports the task's end)
SIGKILLed at a seeded point of the step, as an OOM kill or an evicted pod does; Airflow's
own retry then runs the task again. What each kill hit is read from the ledger, and
:func:`judge` says what the run after the retry broke of the crash harness's invariants.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from sqlalchemy import text

from hbase_migrate.airflow_stack import AirflowStack
from hbase_migrate.audit.engine import open_engine
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepStatus
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.replay.ordering import chain_id
from hbase_migrate.soak.crash_checks import (
    FINISHED,
    LedgerView,
    duplicate_rows,
    leftover_steps,
    read_view,
    redo,
)

TITLE = "airflow worker -- "  # the task runner's process title, then the task instance's id
ENDED = ("success", "failed", "upstream_failed", "skipped")
T = TypeVar("T")


class TaskKillError(HBaseMigrateError):
    """A task to kill was not seen running, or its process not found, in time."""


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


def until(check: Callable[[], T | None], timeout: float, what: str, every: float) -> T:
    """Poll ``check`` until it returns something truthy; :class:`TaskKillError` naming
    ``what`` after ``timeout`` seconds, stretched by the load per core (at most 8x)."""
    load = max(1.0, min(8.0, os.getloadavg()[0] / (os.cpu_count() or 1)))
    deadline = time.monotonic() + timeout * load
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TaskKillError(f"airflow kill: {what} not seen within {timeout * load:.0f} s")
        time.sleep(every)


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


class StepsByPid:
    """The ledger steps a process began, read without waiting on a writer, even a stopped
    one: a SQLite ledger (WAL mode) through a read-only connection, PostgreSQL (MVCC) by a
    plain SELECT on one engine kept open."""

    def __init__(self, ledger_url: str) -> None:
        self.path = ledger_url.removeprefix("sqlite:///") \
            if ledger_url.startswith("sqlite:///") else None
        self.engine = None if self.path is not None else open_engine(ledger_url, create=False)

    def __call__(self, pid: int) -> dict[int, str]:
        """Each step ``pid`` began: its status."""
        query = "SELECT id, status FROM steps WHERE pid = "
        if self.path is not None:
            with sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=30) as db:
                return dict(db.execute(query + "?", (pid,)).fetchall())
        assert self.engine is not None
        with self.engine.connect() as connection:
            return {row[0]: row[1] for row in
                    connection.execute(text(query + ":pid"), {"pid": pid})}

    def close(self) -> None:
        if self.engine is not None:
            self.engine.dispose()


def view(ledger_url: str, name: str) -> LedgerView:
    with Ledger.open(ledger_url) as ledger:
        return read_view(ledger, name, int(time.time() * 1000))


def kill_task(stack: AirflowStack, dag_id: str, run_id: str, target: Target,
              ledger_url: str, name: str, timeout: float = 120.0) -> Killed:
    """Wait for ``target``'s first try to run, then for its runner's first ledger step,
    then ``fraction * expected`` seconds; SIGKILL the runner or its supervisor (the ledger
    before the task ran is read first, for the redone work). The runner is stopped (SIGSTOP)
    during each look at its steps, and killed within one, so however slow the looking on a
    loaded machine, it has not run on past the moment drawn while it was looked at. A step
    over before its moment (a small table's, on a fast machine) has the runner killed at
    the first look that finds it ended: still inside the task, its report not yet sent."""
    before = view(ledger_url, name)

    def running() -> str | None:
        ti = task_instance(stack, dag_id, run_id, target)
        if ti is None:
            return None
        if ti["state"] in ENDED:
            raise TaskKillError(f"airflow kill: {dag_id} {target.name} ended {ti['state']} "
                                "before its process was seen")
        return str(ti["id"]) if ti["state"] == "running" else None

    ti_id = until(running, timeout, f"{dag_id} {run_id} {target.name} running", 0.2)
    pid = until(lambda: runner_pid(ti_id), timeout, f"the runner of {target.name}", 0.02)
    victim = parent_pid(pid) if target.supervisor else pid
    delay = target.fraction * target.expected
    began: list[float] = []  # when the runner's first ledger step was seen
    steps_of = StepsByPid(ledger_url)

    def look() -> str | None:
        """One look at the stopped runner: gone, killed (its moment come), or not yet."""
        with frozen(pid):
            if not alive(pid):
                return "gone"
            steps = steps_of(pid)
            if not began and steps:
                began.append(time.monotonic())
            ended = bool(steps) and StepStatus.RUNNING.value not in steps.values()
            if began and (ended or time.monotonic() - began[0] >= delay):
                os.kill(victim, signal.SIGKILL)
                return "killed"
        return None

    try:
        hit = until(look, timeout + delay, f"a ledger step of {target.name}'s runner",
                    0.01) == "killed"
    finally:
        steps_of.close()
    if hit:
        until(lambda: not alive(victim), 30, f"{target.name}'s process {victim} gone", 0.02)
    at_kill = view(ledger_url, name)
    steps = [s for s in at_kill.steps if s.pid == pid]
    return Killed(target, pid, hit, [s.id for s in steps],
                  [s.id for s in steps if s.status is StepStatus.RUNNING], before, at_kill)


def judge(ti: dict[str, Any], run: dict[str, Any], killed: Killed, after: LedgerView,
          work: str) -> dict[str, Any]:
    """The run after its killed task's retry (``ti`` the task instance, ``after`` the
    ledger then; ``work`` the kind of work redone: copy, wal or validation): its outcome,
    with ``violations`` listing what broke. The run and the task must succeed (a gate may
    say no-go only while something is not done), tried twice when killed inside its step
    (killed after the step ended, the task may have reported success already); no step left
    ``running``, no duplicate ledger row, at most one range copied again and one WAL chain
    in flight."""
    target = killed.target
    assert killed.before is not None and killed.at_kill is not None
    redone = redo(killed.before, killed.at_kill, after, killed.steps, work)
    chains = chains_in_flight(killed)
    tries = ti["try_number"]
    found: list[str] = []
    if run["state"] != "success" or ti["state"] != "success":
        found.append(f"the run ended {run['state']}, the task {ti['state']}")
    if tries not in ((2,) if killed.running else (1, 2)):
        found.append(f"tried {tries} times")
    found += leftover_steps(after, [])
    found += duplicate_rows(after)
    found += [f"step #{s.id} of the killed process still running" for s in after.steps
              if s.id in killed.steps and s.status is StepStatus.RUNNING]
    if redone.get("ranges_recopied", 0) > 1:
        found.append(f"{redone['ranges_recopied']} ranges copied again")
    if len(chains) > 1:
        found.append(f"{len(chains)} WAL chains in flight: {', '.join(chains)}")
    return {"task": target.name, "fraction": target.fraction,
            "killed": "supervisor" if target.supervisor else "runner", "hit": killed.hit,
            "steps_killed": killed.steps, "running_at_kill": killed.running,
            "state": run["state"], "tries": tries, "retried": tries - 1, "redo": redone,
            "chains_in_flight": chains, "violations": found}


def chains_in_flight(killed: Killed) -> list[str]:
    """The WAL chains whose files the killed process moved on (acknowledged offsets
    recorded after its step began) and left unfinished: what its retry reads on from."""
    assert killed.at_kill is not None and killed.before is not None
    was = {path: row.offset for path, row in killed.before.wal.items()}
    since = min((s.started_at for s in killed.at_kill.steps if s.id in killed.steps),
                default=killed.at_kill.at)
    return sorted({chain_id(row.path) for path, row in killed.at_kill.wal.items()
                   if row.status not in FINISHED and row.updated_at >= since
                   and row.offset > was.get(path, 0)})
