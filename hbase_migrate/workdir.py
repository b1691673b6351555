"""Working folders the project may clear: only those it made itself.

A command that runs in a working folder of its own (the demo, the soak) starts from an
empty one. It claims the folder with :func:`claim_workdir`: a new, missing or empty folder
gets the project's marker file (``.hbase-migrate-workdir``); a folder carrying the marker is
cleared of what an earlier run left (everything but the marker); any other folder (a user's
notes, a checkout, a home folder) is refused, and nothing in it is touched. The marker is
also the lock: a second run on the same folder while the first holds it is refused and
deletes nothing.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hbase_migrate.errors import HBaseMigrateError

MARKER = ".hbase-migrate-workdir"


class WorkFolderError(HBaseMigrateError):
    """A working folder the project did not make, or one another run is using."""


def _refuse_foreign(root: Path, what: str) -> None:
    if root.exists() and not root.is_dir():
        raise WorkFolderError(f"{what}: {root} is not a folder; give a new or empty folder "
                              "with --dir")
    if not root.exists() or (root / MARKER).exists():
        return
    found = sorted(entry.name for entry in root.iterdir())
    if found:
        shown = ", ".join(found[:3]) + (", ..." if len(found) > 3 else "")
        raise WorkFolderError(
            f"{what}: refusing to use {root} as its working folder: it holds files this "
            f"project did not write ({shown}) and no {MARKER} marker, and the run would "
            "clear it; give a new or empty folder with --dir")


def _clear(root: Path) -> None:
    """Everything in ``root`` but the marker (links are removed, never followed)."""
    for entry in root.iterdir():
        if entry.name == MARKER:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


@contextmanager
def claim_workdir(root: Path, what: str) -> Iterator[Path]:
    """Hold ``root`` as ``what``'s working folder, empty but for the marker, until the block
    ends; raises :class:`WorkFolderError` (one line, nothing deleted) for a folder the
    project did not make or one another run holds."""
    root = root.absolute()
    _refuse_foreign(root, what)
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / MARKER, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 4096).decode("utf-8", "replace")
            pid = json.loads(holder).get("pid", "?") if holder.startswith("{") else "?"
            raise WorkFolderError(
                f"{what}: {root} is in use by another run (pid {pid}); wait for it to end "
                "or give another folder with --dir") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"made_by": "hbase-migrate", "by": what,
                                  "pid": os.getpid()}).encode(), 0)
        _clear(root)
        yield root
    finally:
        os.close(fd)  # releases the lock
