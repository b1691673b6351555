"""Working folders the project may clear: only those it made itself.

A command that runs in a working folder of its own (the demo, the soak) starts from an
empty one. It claims the folder with :func:`claim_workdir`: a new, missing or empty folder
gets the project's marker file (``.hbase-migrate-workdir``); a folder carrying the marker is
cleared of what an earlier run wrote, as the marker lists it when that run ended: what
anybody added since (notes, a file in one of the run's folders) is kept and named; any
other folder (a user's notes, a checkout, a home folder) is refused, and nothing in it is
touched; so is a folder another kind of run made (the HBase demo's for the Bigtable demo,
the soak's): the marker names the kind (``by``). The marker is also the lock: a second run
on the same folder while the first holds it is refused and deletes nothing.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any

from hbase_migrate.errors import HBaseMigrateError

MARKER = ".hbase-migrate-workdir"
log = logging.getLogger(__name__)


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
    """Everything in ``root`` but the marker (links are removed, never followed): a marker
    that lists nothing, as a run killed before its end leaves it."""
    for entry in root.iterdir():
        if entry.name == MARKER:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def _written(root: Path) -> list[str]:
    """What ``root`` holds now but the marker, relative, folders after their contents."""
    found = []
    for folder, dirs, files in os.walk(root, topdown=False):
        here = Path(folder).relative_to(root)
        found += [str(PurePosixPath(here / name)) for name in sorted(files + dirs)
                  if not (here == Path() and name == MARKER)]
    return found


def _remove_written(root: Path, written: list[str]) -> list[str]:
    """Remove what a run wrote (``written``, as :func:`_written` listed it; a folder only
    once it is empty, links never followed); returns what else is left, kept."""
    for name in written:
        rel = PurePosixPath(name)
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            continue
        path = root / rel
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    return sorted(name for name in _written(root)
                  if not (root / name).is_dir() or (root / name).is_symlink())


def _clear_earlier_run(root: Path, marker: dict[str, Any], what: str) -> None:
    written = marker.get("written")
    if not isinstance(written, list):
        _clear(root)
        return
    kept = _remove_written(root, [str(name) for name in written])
    if kept:
        shown = ", ".join(kept[:5]) + (f", ... ({len(kept)} in all)" if len(kept) > 5 else "")
        log.warning("%s: kept in %s what the earlier run did not write: %s", what, root,
                    shown)


@contextmanager
def claim_workdir(root: Path, what: str) -> Iterator[Path]:
    """Hold ``root`` as ``what``'s working folder, empty but for the marker, until the block
    ends; raises :class:`WorkFolderError` (one line, nothing deleted) for a folder the
    project did not make, one another kind of run made or one another run holds."""
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
        earlier = _read_marker(fd)
        _refuse_other_kind(root, earlier, what)
        _write_marker(fd, {"made_by": "hbase-migrate", "by": what, "pid": os.getpid()})
        _clear_earlier_run(root, earlier, what)
        try:
            yield root
        finally:  # what this run wrote: all the next run may remove
            _write_marker(fd, {"made_by": "hbase-migrate", "by": what, "pid": os.getpid(),
                               "written": _written(root)})
    finally:
        os.close(fd)  # releases the lock


def _refuse_other_kind(root: Path, marker: dict[str, Any], what: str) -> None:
    """Refuse ``root`` when its marker says another kind of run made it: this run would
    clear that run's files (its report, its ledger)."""
    by = marker.get("by")
    if isinstance(by, str) and by != what:
        raise WorkFolderError(
            f"{what}: refusing to use {root} as its working folder: a {by} run made it and "
            "this run would clear what that run wrote; give another folder with --dir")


def _read_marker(fd: int) -> dict[str, Any]:
    text = os.pread(fd, os.fstat(fd).st_size, 0).decode("utf-8", "replace")
    try:
        found = json.loads(text) if text.startswith("{") else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _write_marker(fd: int, content: dict[str, Any]) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(content).encode(), 0)
