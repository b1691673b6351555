"""Child processes of a local stack: a free loopback port, a process started in its own
process group with its output in a log, stopping whole groups (the leader and what it
forked), and the environment of a Python child (:func:`python_env`): the one place that
says where a child imports ``hbase_migrate`` from."""

from __future__ import annotations

import contextlib
import os
import signal
import site
import socket
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"
PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # holds the hbase_migrate imported here


def python_path_vars(path: str | None = None) -> dict[str, str]:
    """``PYTHONPATH`` and ``PYTHONSAFEPATH`` of a Python child that must import the
    ``hbase_migrate`` this process imported, whatever its working folder: neither ``-m``
    nor ``-c`` then puts that folder (another checkout, say) first on its ``sys.path``, and
    the folder holding this package comes before the rest of ``path`` (the caller's
    ``PYTHONPATH``). A package installed in site-packages is found there anyway; that folder
    is not put on ``PYTHONPATH``, where it would come before the standard library."""
    installed = {Path(p).resolve() for p in [*site.getsitepackages(),
                                             site.getusersitepackages()]}
    first = [] if PACKAGE_ROOT in installed else [str(PACKAGE_ROOT)]
    rest = [p for p in (path or "").split(os.pathsep) if p and p not in first]
    return {"PYTHONPATH": os.pathsep.join([*first, *rest]), "PYTHONSAFEPATH": "1"}


def python_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) as the environment of a Python child
    process (:func:`python_path_vars`)."""
    env = dict(os.environ if base is None else base)
    env.update(python_path_vars(env.get("PYTHONPATH")))
    if not env["PYTHONPATH"]:
        del env["PYTHONPATH"]
    return env


def free_port(host: str = HOST) -> int:
    """A port that is free on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def listening_group(host: str, port: int) -> int | None:
    """The process group of the process listening on ``host:port`` (IPv4, or every address),
    read from ``/proc``; None where none is found or ``/proc`` says nothing (not Linux)."""
    addresses = {f"{socket.inet_aton(a)[::-1].hex().upper()}:{port:04X}"
                 for a in (host, "0.0.0.0")}
    try:
        rows = [r.split() for r in Path("/proc/net/tcp").read_text().splitlines()[1:]]
    except OSError:
        return None
    sockets = {f"socket:[{r[9]}]" for r in rows if r[1] in addresses and r[3] == "0A"}
    for fds in Path("/proc").glob("[0-9]*/fd") if sockets else ():
        try:
            if any(os.readlink(fd) in sockets for fd in fds.iterdir()):
                return os.getpgid(int(fds.parent.name))
        except OSError:
            continue  # gone meanwhile, or not ours to read
    return None


def spawn(args: list[str], log_path: Path, env: Mapping[str, str] | None = None, *,
          cwd: Path | None = None, **options: Any) -> subprocess.Popen[bytes]:
    """Start ``args`` in a new session (its own process group), output appended to
    ``log_path``; ``options`` go to :class:`subprocess.Popen` (``user``, ``group``...)."""
    with open(log_path, "ab") as output:
        return subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=output,
                                stderr=subprocess.STDOUT, env=None if env is None else
                                dict(env), cwd=cwd, start_new_session=True, **options)


def group_alive(pgid: int) -> bool:
    """Whether a process of the group ``pgid`` still runs (zombies waiting for their
    parent to reap them do not count)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def stop_groups(leaders: list[subprocess.Popen[bytes]] | list[int], timeout: float,
                first: signal.Signals = signal.SIGTERM) -> None:
    """Send ``first`` to the process groups of ``leaders`` (processes we started, or their
    pids), wait for all of them, then SIGKILL what is left."""
    procs = [p for p in leaders if isinstance(p, subprocess.Popen)]
    groups = [p.pid if isinstance(p, subprocess.Popen) else p for p in leaders]
    for sig in (first, signal.SIGKILL):
        for pgid in groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, sig)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for proc in procs:
                proc.poll()  # reap the leaders we started
            groups = [g for g in groups if group_alive(g)]
            if not groups:
                return
            time.sleep(0.1)


def log_tail(path: Path, lines: int = 15) -> str:
    """The last lines of a log file, for error messages."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
