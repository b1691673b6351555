"""Whether a process of this host still runs: what a lock, a step or a credential cache left
by a process says of it once that process may be gone."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

State = Literal["gone", "zombie", "stopped", "running"]


def process_state(pid: int) -> State:
    """``gone`` (no such process), ``zombie`` (killed, not yet reaped by its parent: it holds
    nothing), ``stopped`` (SIGSTOP, a debugger) or ``running``; another user's process, or
    one ``/proc`` does not describe, counts as running."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "gone"
    except PermissionError:
        return "running"
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return "running"
    code = stat.rpartition(")")[2].split()[:1]
    return "zombie" if code == ["Z"] else "stopped" if code in (["T"], ["t"]) else "running"


def process_started(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since the host booted (``starttime`` of
    ``/proc/PID/stat``): another process given the same pid later started later. None where
    ``/proc`` does not say (no such process, not Linux)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()  # from the state, the stat's third field, on
    return int(fields[19]) if len(fields) > 19 and fields[19].isdigit() else None


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` may still act (running or stopped)."""
    return process_state(pid) in ("running", "stopped")
