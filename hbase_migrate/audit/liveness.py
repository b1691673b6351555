"""Whether a running step's process still lives, and the heartbeat that tells.

A step records its process (``pid`` on ``host``). While a step runs under
:meth:`~hbase_migrate.audit.migrations_book.MigrationBook.step` a thread records
``heartbeat_at`` every :data:`HEARTBEAT_SECONDS`. A running step is **abandoned** when its
process on this host is gone (a kill, an OOM, a reboot), or when it has been silent for
longer than :data:`LEASE_MS` while stopped here (SIGSTOP) or running on another host (a
host lost: the only sign another host has; a ledger outage longer than the lease fences a
live step there too, whose process then fails in one line and is run again). An abandoned
step is marked failed by the next step of its migration and by a status read; its process,
should it wake, can no longer end it, and its heartbeat reports that it was fenced off.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable

from hbase_migrate.audit.records import StepRecord, StepStatus
from hbase_migrate.processes import process_state
from hbase_migrate.timeutil import format_time

log = logging.getLogger(__name__)

ABANDONED = "abandoned:"  # how the ledger's error of an abandoned step begins
HEARTBEAT_SECONDS = 15.0
# Twenty heartbeats: a loaded machine delays a thread by seconds, not minutes.
LEASE_MS = 300_000


def abandoned(step: StepRecord, now: int) -> str | None:
    """Why running ``step`` is abandoned, or None while its process may live. On the step's
    own host its process answers for itself: gone is abandoned, running is alive whatever
    its heartbeat (a ledger outage may have held the beats back), stopped is judged by the
    lease as any process elsewhere."""
    if step.status is not StepStatus.RUNNING:
        return None
    pid = step.pid if step.pid is not None else (step.metrics or {}).get("pid")
    if on_this_host(step.host) and isinstance(pid, int):
        state = process_state(pid)
        if state in ("gone", "zombie"):
            return f"its process {pid} on {step.host or 'this host'} is gone"
        if state == "running":
            return None
    if step.heartbeat_at is not None and now - step.heartbeat_at > LEASE_MS:
        return (f"its process {pid} on {step.host} has been silent since "
                f"{format_time(step.heartbeat_at)} (longer than the step lease, "
                f"{LEASE_MS // 1000} s)")
    return None


def on_this_host(host: str | None) -> bool:
    """Whether a step recorded on ``host`` ran on this machine: its name, also after the
    ``@`` of a Celery worker's name (``worker1@<host>``), whose task processes share this
    machine's pids."""
    return host is None or host.rpartition("@")[2] == socket.gethostname()


class Heartbeat:
    """Calls ``beat`` every ``seconds`` on a thread until :meth:`stop`. ``beat`` returns
    False once the step is no longer its process's (reaped while it was stopped): the
    heartbeat then logs it, once, and stops."""

    def __init__(self, beat: Callable[[], bool], name: str,
                 seconds: float = HEARTBEAT_SECONDS) -> None:
        self._beat, self._seconds, self.fenced = beat, seconds, False
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._halt.wait(self._seconds):
            try:
                if not self._beat():
                    self.fenced = True
                    log.error("%s: the ledger marked this step abandoned while this process "
                              "was silent; its outcome will not be recorded", self._thread.name)
                    return
            except Exception as exc:  # the ledger may be down for a while: beat again later
                log.debug("%s: heartbeat not recorded: %s", self._thread.name, exc)

    def stop(self) -> None:
        self._halt.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
