"""Connecting to a ledger database: URL normalisation, SQLite set-up, readable errors.

SQLite ledgers get a busy timeout, WAL journaling, enforced foreign keys and ``BEGIN
IMMEDIATE`` transactions, so that concurrent writers queue for the write lock instead of
failing half-way; PostgreSQL ledgers use psycopg 3 (``postgresql://`` means
``postgresql+psycopg://``). A write on a full disk raises the
:class:`~hbase_migrate.audit.space.LedgerFullError` naming the ledger's folder.
"""

from __future__ import annotations

import sqlite3
import time
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.engine import URL
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    InterfaceError,
    OperationalError,
    SQLAlchemyError,
)

from hbase_migrate.audit.errors import LedgerMissingError, LedgerOpenError
from hbase_migrate.audit.space import no_space
from hbase_migrate.errors import causes

SQLITE_BUSY_TIMEOUT_MS = 30_000
SUPPORTED = ("sqlite", "postgresql")


def parse_url(url: str) -> URL:
    """The SQLAlchemy URL of a ledger, with the psycopg 3 driver for PostgreSQL."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError) as exc:
        raise LedgerOpenError(f"ledger URL {redact(url)!r} cannot be parsed: {exc}") from exc
    backend = parsed.get_backend_name()
    if backend not in SUPPORTED:
        raise LedgerOpenError(
            f"ledger URL {redact(url)!r}: expected a sqlite:/// or postgresql:// URL, "
            f"got the {backend!r} scheme"
        )
    if backend == "postgresql" and parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def redact(url: str | URL) -> str:
    """``url`` as text with its password masked; unparseable text is returned cut at '@'."""
    if isinstance(url, URL):
        return url.render_as_string(hide_password=True)
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        scheme, sep, rest = url.partition("://")
        return f"{scheme}{sep}***@{rest.rpartition('@')[2]}" if "@" in rest else url


def open_engine(url: str, *, create: bool = True) -> Engine:
    """An engine for ``url``, connected once to prove the URL works.

    ``create``: a SQLite file (and its folder) is created when missing; without it a missing
    file is a :class:`LedgerMissingError` and the file is opened without changing it (no
    journal-mode switch). A SQLite file deleted or replaced while the engine is in use stops
    the next transaction with a :class:`LedgerOpenError`. Errors name the URL without its
    password.
    """
    parsed = parse_url(url)
    shown = redact(parsed)
    sqlite = parsed.get_backend_name() == "sqlite"
    path = _sqlite_file(parsed)
    if path is not None:
        if create:
            _make_sqlite_folder(path, shown)
        elif not path.is_file():
            raise LedgerMissingError(
                f"no ledger at {shown}: {path} does not exist (reading commands create "
                "nothing; a replay or `hbase-migrate ledger upgrade` creates it)")
    try:
        if sqlite:
            engine = create_engine(parsed, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})
            event.listen(engine, "connect", _sqlite_on_connect if create else _sqlite_read_only)
            event.listen(engine, "begin", _sqlite_on_begin if create else _sqlite_on_begin_read)
        else:
            engine = create_engine(parsed, pool_pre_ping=True)
        event.listen(engine, "handle_error", partial(_no_space, shown, path))
        with engine.connect() as conn:
            if sqlite:  # SQLite reads the file's header only now: "file is not a database"
                conn.exec_driver_sql("SELECT count(*) FROM sqlite_master")
    except (SQLAlchemyError, sqlite3.Error) as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        if parsed.password:
            reason = reason.replace(str(parsed.password), "***")
        raise LedgerOpenError(f"cannot open ledger {shown}: {reason}") from None
    if path is not None:
        _guard_identity(engine, path, shown)
    return engine


def _no_space(shown: str, path: Path | None, context: Any) -> BaseException | None:
    """A full disk raised as the :class:`~hbase_migrate.audit.space.LedgerFullError` that
    names the ledger's folder, instead of the database's own error."""
    return no_space(context.original_exception, shown, path)


def lost_database(error: DBAPIError) -> bool:
    """The ledger's database did not answer or dropped the connection (not a bad query)."""
    if error.connection_invalidated or isinstance(error, InterfaceError):
        return True
    text = str(error.orig or error).lower()
    return isinstance(error, OperationalError) and not any(
        words in text for words in ("no such table", "no such column", "syntax error",
                                    "readonly", "read-only"))


def lost_ledger(exc: BaseException) -> DBAPIError | None:
    """The error of a ledger database that did not answer, in ``exc`` or what it came from
    (None: ``exc`` is about something else)."""
    return next((error for error in causes(exc)
                 if isinstance(error, DBAPIError) and lost_database(error)), None)


def first_line(error: BaseException) -> str:
    """The first line of an error's text (its class name when it has none)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite ledger URL (None: another database, in memory or a URI)."""
    return _sqlite_file(parse_url(url))


def _sqlite_file(parsed: URL) -> Path | None:
    """The file of a SQLite URL (None: in memory or a URI)."""
    if parsed.get_backend_name() != "sqlite":
        return None
    database = parsed.database or ""
    if database in ("", ":memory:") or database.startswith("file:"):
        return None
    return Path(database)


def _guard_identity(engine: Engine, path: Path, shown: str) -> None:
    """Check at every transaction that ``path`` is still the file the engine opened: SQLite
    goes on writing to a deleted file, where nobody would ever read what it wrote."""
    opened = path.stat()
    identity = (opened.st_dev, opened.st_ino)

    def check(_connection: Any) -> None:
        try:
            now = path.stat()
        except FileNotFoundError:
            now = None
        if now is None or (now.st_dev, now.st_ino) != identity:
            what = "deleted" if now is None else "replaced by another file"
            raise LedgerOpenError(f"ledger {shown}: {path} was {what} while in use; stopping "
                                  "before anything is recorded where nobody would read it")

    event.listen(engine, "begin", check, insert=True)


def _make_sqlite_folder(path: Path, shown: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LedgerOpenError(
            f"cannot open ledger {shown}: cannot create folder {path.parent}: {exc.strerror}"
        ) from exc


def _sqlite_on_connect(dbapi_connection: Any, _record: Any) -> None:
    # Let BEGIN come from _sqlite_on_begin instead of the sqlite3 module's implicit one.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys = ON")
        tables = {row[0] for row in cursor.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables or {"schema_version", "migrations"} <= tables:  # a ledger, or a new one
            _set_wal_journal(cursor)
    finally:
        cursor.close()


def _set_wal_journal(cursor: Any) -> None:
    # Switching a new file to WAL needs an exclusive lock and SQLite answers "locked" without
    # waiting for it when another process is busy creating the schema: retry until the timeout.
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _sqlite_read_only(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA query_only = ON")
    finally:
        cursor.close()


def _sqlite_on_begin_read(connection: Any) -> None:
    connection.exec_driver_sql("BEGIN")


def _sqlite_on_begin(connection: Any) -> None:
    # Take the write lock up front: a read-then-write transaction never fails to upgrade.
    connection.exec_driver_sql("BEGIN IMMEDIATE")
