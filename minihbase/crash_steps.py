"""The crash harness's processes: each step of the migration run as a user runs it, one
``hbase-migrate`` command in a child process of its own process group (a SIGKILL takes the
whole group, as an OOM kill or a lost node does), and the long-lived ``replay --follow``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hbase_migrate.services import python_env
from stackprocs.process import die_with_parent, log_tail

FOLLOW_INTERVAL = "1s"
RECOMPARE_WAIT = "20s"  # validate --repair: how long its recompare waits for the replay
PARTS = 2  # a validation in parts: --part I/2
BEGUN_POLL = 0.2  # seconds between looks at the ledger for a killed command's first step


def step_args(step: str, config: Path, *, part: int = 1, run: str = "crash") -> list[str]:
    """The command line (after ``hbase-migrate``) a user runs for ``step``."""
    c = ["--config", str(config)]
    commands = {
        "prepare": ["prepare", *c],
        "snapshot": ["snapshot", *c],
        "replay": ["replay", *c],
        "follow": ["replay", *c, "--follow", "--interval", FOLLOW_INTERVAL],
        "validate-live": ["validate", *c, "--live"],
        "validate-part": ["validate", *c, "--part", f"{part}/{PARTS}", "--run", run],
        "validate-judge": ["validate", *c, "--judge", "--run", run],
        "repair": ["validate", *c, "--repair", "--recompare-wait", RECOMPARE_WAIT],
        "cutover": ["cutover", "check", *c, "--json"],
        "cdc": ["cdc", *c],
        "cdc-follow": ["cdc", *c, "--follow", "--interval", FOLLOW_INTERVAL],
        "validate": ["validate", *c, "--recompare-wait", RECOMPARE_WAIT],
        "status": ["status", *c, "--json"],
    }
    return commands[step]


@dataclass(frozen=True)
class Finished:
    """A command run to its end: exit code, seconds, its log and the log's last lines."""

    code: int
    seconds: float
    log: Path
    output: str = ""
    pid: int = 0
    began_ms: int = 0  # when it was started, ms since the epoch


class Commands:
    """Starts ``hbase-migrate`` commands with their output in ``logs/<n>-<name>.log``."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.logs.mkdir(parents=True, exist_ok=True)
        self.count = 0

    def start(self, args: list[str], name: str) -> tuple[subprocess.Popen[bytes], Path]:
        """The command in a new session (its own process group), dying with this process."""
        self.count += 1
        log_path = self.logs / f"{self.count:03d}-{name}.log"
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "hbase_migrate", *args], stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT, env=python_env(),
                start_new_session=True,
                preexec_fn=die_with_parent)  # noqa: PLW1509 - only prctl, no locks taken
        return proc, log_path

    def run(self, args: list[str], name: str, timeout: float = 600.0) -> Finished:
        """The command to its end (killed, with code -9, after ``timeout`` seconds)."""
        began, began_ms = time.monotonic(), int(time.time() * 1000)
        proc, log_path = self.start(args, name)
        try:
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            code = -9
        return Finished(code, round(time.monotonic() - began, 2), log_path,
                        log_path.read_text(encoding="utf-8", errors="replace"), proc.pid,
                        began_ms)


def kill_group(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    """``sig`` to the process group ``proc`` leads; waits for ``proc`` after a SIGKILL."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)
    if sig == signal.SIGKILL:
        proc.wait(30)


def wait_or_kill(proc: subprocess.Popen[bytes], seconds: float,
                 began: Callable[[], bool] | None = None, patience: float = 120.0
                 ) -> int | None:
    """Wait ``seconds`` for ``proc``; SIGKILL its group then. With ``began`` (has the
    process's step begun?), a process whose step has not begun by then is killed once it
    has (checked every ``BEGUN_POLL`` s, at most ``patience`` s more): on a loaded machine
    a command's start-up alone can outlast the delay, and a kill then would meet no step.
    The exit code when it ended by itself first, else None (it was killed)."""
    try:
        return proc.wait(seconds)
    except subprocess.TimeoutExpired:
        pass
    deadline = time.monotonic() + patience
    while began is not None and time.monotonic() < deadline and not began():
        try:
            return proc.wait(BEGUN_POLL)
        except subprocess.TimeoutExpired:
            continue
    kill_group(proc)
    return None


class Follow:
    """A follow in the background, as a user keeps it running: ``hbase-migrate replay
    --follow`` (``step`` "follow") or ``cdc --follow`` ("cdc-follow")."""

    def __init__(self, commands: Commands, config: Path, step: str = "follow") -> None:
        self.commands, self.config, self.step = commands, config, step
        self.proc: subprocess.Popen[bytes] | None = None
        self.log: Path | None = None
        self.started_ms = 0

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.alive and self.proc is not None else None

    def start(self) -> None:
        if self.alive:
            return
        self.started_ms = int(time.time() * 1000)
        self.proc, self.log = self.commands.start(step_args(self.step, self.config), self.step)

    def kill(self) -> None:
        if self.proc is not None:
            kill_group(self.proc)
            self.proc = None

    def stop(self, timeout: float = 120.0) -> int | None:
        """SIGTERM (the follow ends after its current file): its exit code; SIGKILL when
        it has not ended within ``timeout``."""
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            kill_group(proc, signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                kill_group(proc)
        return proc.returncode

    def tail(self) -> str:
        return log_tail(str(self.log), 20) if self.log else ""
