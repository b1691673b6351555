"""A ledger whose disk is full: one clear error instead of a database's, and the room a
step keeps to record that it failed.

SQLite answers a write on a full disk with ``database or disk is full`` (PostgreSQL with
SQLSTATE 53100); the transaction is rolled back whole, so nothing is recorded half. That
answer is no outage to wait out (reads still work, so a probe would pass and the next write
fail again): :func:`no_space` turns it into a :class:`LedgerFullError` naming the ledger's
folder. A step of a SQLite ledger keeps a :class:`Spare` file beside it while it runs, and
gives the space up when the disk fills, so that the step can still be recorded failed (no
step is left ``running``) before the command ends; the next step makes it again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sqlite3
from pathlib import Path

from hbase_migrate.audit.errors import LedgerError
from hbase_migrate.errors import causes

log = logging.getLogger(__name__)

SPARE_SUFFIX = "-spare"  # beside ledger.db, as SQLite's own -wal and -shm files
SPARE_BYTES = 256 * 1024  # a failed step's row, its migration's state, with room to spare
_LOW = 1024 * 1024  # free bytes under which an I/O error of SQLite is taken for a full disk
_PG_DISK_FULL = "53100"


class LedgerFullError(LedgerError):
    """The ledger's disk (or its database server's) has no space left for the next fact;
    the transaction was rolled back whole. Freeing space and running the same step again
    goes on from what the ledger holds."""


def no_space(error: BaseException, shown: str, path: Path | None) -> LedgerFullError | None:
    """The :class:`LedgerFullError` a database error ``error`` of the ledger ``shown``
    (its SQLite file ``path``) means, or None for any other error."""
    if path is not None and isinstance(error, sqlite3.Error):
        code = getattr(error, "sqlite_errorcode", None)
        full = code == sqlite3.SQLITE_FULL or (
            isinstance(code, int) and code & 0xFF == sqlite3.SQLITE_IOERR
            and _free(path.parent) < _LOW)
        if not full:
            return None
        return LedgerFullError(
            f"no space left on the device of {path.parent} (the folder of ledger {shown}): "
            "what was done before is recorded, the last fact was not; free space there and "
            "run the same command again")
    if getattr(error, "sqlstate", None) == _PG_DISK_FULL:
        return LedgerFullError(
            f"no space left on the PostgreSQL server of ledger {shown} (its data folder's "
            f"disk is full: {str(error).strip().splitlines()[0]}): what was done before is "
            "recorded, the last fact was not; free space there and run the same command again")
    return None


def _free(folder: Path) -> int:
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return _LOW


def is_full(exc: BaseException) -> bool:
    """Whether ``exc`` or an error it came from is a :class:`LedgerFullError`."""
    return any(isinstance(error, LedgerFullError) for error in causes(exc))


class Spare:
    """A file of :data:`SPARE_BYTES` beside a SQLite ledger ``ledger_file`` (None: another
    database, nothing kept), made while a step runs and given up when the disk fills."""

    def __init__(self, ledger_file: Path | None) -> None:
        self.path = None if ledger_file is None else spare_of(ledger_file)

    def keep(self) -> None:
        """Make the spare unless it is there; a disk too full for it goes without (the
        step may still fit, and fails in one line where it does not)."""
        if self.path is None:
            return
        try:
            if self.path.stat().st_size >= SPARE_BYTES:
                return
            self.path.unlink()  # cut short (its maker killed while writing it): made again
        except FileNotFoundError:
            pass
        except OSError as exc:
            log.debug("ledger: spare %s unreadable (%s)", self.path, exc.strerror)
            return
        try:
            with self.path.open("xb") as out:
                out.write(os.urandom(SPARE_BYTES))  # real blocks, even where zeros are not
        except FileExistsError:
            return
        except OSError as exc:
            log.debug("ledger: no spare kept beside it (%s)", exc.strerror)
            with contextlib.suppress(OSError):
                self.path.unlink()

    def release(self) -> None:
        """Give the spare's space back to the ledger."""
        if self.path is not None:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
                log.info("ledger: the disk is full; %s given up to record the step's end",
                         self.path)


def spare_of(ledger_file: Path) -> Path:
    return ledger_file.with_name(ledger_file.name + SPARE_SUFFIX)
