"""A bulk replay's local folders (issue 76): the sorted runs a window spills
(``hbase-migrate-spill-``) and its HFiles before they are loaded (``hbase-migrate-bulk-``),
each a folder of its own under ``TMPDIR``, named after the process that owns it, and those a
process killed (SIGKILL, an OOM kill) left behind removed by the next bulk replay on the host.

A folder is named ``hbase-migrate-KIND-HOST-PID-START-RANDOM``: this host's name, the
owner's pid and its start time (:func:`~hbase_migrate.processes.process_started`, 0 where
unknown), and its owner holds an exclusive ``flock`` on the folder while it lives, which the
kernel lets go of when the process ends, however it ends. :func:`sweep` removes a folder only
when all of these hold, which together prove it abandoned:

* its name is exactly of that form, and it is a folder (not a link) of this user's;
* HOST is this host (a process elsewhere cannot be asked);
* process PID is gone, a zombie, or another process since (its start time is not START: the
  pid was given again);
* its lock can be taken now: no live process holds it (one of another pid namespace sharing
  the folder, a child forked holding the descriptor).

Anything else is kept: a folder named before issue 76 (no owner in its name), another's,
one whose owner lives, or one whose lock cannot be tried (a filesystem without ``flock``).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import shutil
import socket
import tempfile
from pathlib import Path
from types import TracebackType

from hbase_migrate.cluster.sizing import format_bytes
from hbase_migrate.processes import process_started, process_state

log = logging.getLogger(__name__)

KINDS = ("spill", "bulk")
_NAME = re.compile(r"hbase-migrate-(spill|bulk)-([A-Za-z0-9._-]+)-([0-9]+)-([0-9]+)-[a-z0-9_]+")


def host_name() -> str:
    """This host's name as a folder's name carries it."""
    return re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname())[:64] or "localhost"


class Scratch:
    """A folder of this process's under ``where``, locked while it lives; :meth:`remove`
    (or leaving the ``with`` block) removes it."""

    def __init__(self, kind: str, where: Path) -> None:
        assert kind in KINDS
        pid = os.getpid()
        owner = f"hbase-migrate-{kind}-{host_name()}-{pid}-{process_started(pid) or 0}-"
        self.path = Path(tempfile.mkdtemp(prefix=owner, dir=where))  # mode 0700
        self._fd: int | None = None
        try:
            self._fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:  # no flock there: kept by every sweep, removed by its owner
            log.debug("%s: not locked: %s", self.path, exc)

    def remove(self) -> None:
        """The folder and what it holds removed, its lock let go (again: nothing)."""
        shutil.rmtree(self.path, ignore_errors=True)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.remove()


def sweep(where: Path) -> list[tuple[Path, int]]:
    """The folders under ``where`` left by processes of this host that are gone, removed,
    each logged in one line naming it and the bytes freed; returns them with those bytes."""
    removed = []
    host, uid = host_name(), os.getuid()
    try:
        entries = list(os.scandir(where))
    except OSError as exc:
        log.debug("%s: not swept: %s", where, exc)
        return []
    for entry in entries:
        named = _NAME.fullmatch(entry.name)
        if named is None or named[2] != host:
            continue
        pid, start = int(named[3]), int(named[4])
        with contextlib.suppress(OSError):
            if entry.is_dir(follow_symlinks=False) and \
                    entry.stat(follow_symlinks=False).st_uid == uid and _gone(pid, start):
                freed = _remove_unlocked(Path(entry.path))
                if freed is not None:
                    log.info("removed %s, left by process %d of this host, which is gone: "
                             "%d bytes (%s) freed", entry.path, pid, freed, format_bytes(freed))
                    removed.append((Path(entry.path), freed))
    return removed


def _gone(pid: int, start: int) -> bool:
    """Whether the process that started as ``pid`` at ``start`` (0: unknown) has ended."""
    if pid <= 0:
        return False
    if process_state(pid) in ("gone", "zombie"):
        return True
    now = process_started(pid)
    return start != 0 and now is not None and now != start


def _remove_unlocked(path: Path) -> int | None:
    """``path`` removed under its lock, the bytes it held; None when a live process holds
    the lock, the lock cannot be tried, or another sweep removed it first."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.fstat(fd).st_ino != path.lstat().st_ino:
            return None
        held = _bytes(path)
        shutil.rmtree(path, ignore_errors=True)
        left = _bytes(path) if path.exists() else 0
        if left:
            log.warning("%s, left by a process that is gone, could not be removed whole: %d "
                        "bytes are still there", path, left)
        return held - left
    except OSError:
        return None
    finally:
        os.close(fd)


def _bytes(path: Path) -> int:
    """The bytes of the files under ``path``."""
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total
