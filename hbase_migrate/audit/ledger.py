"""The audit ledger's API: migrations, steps, WAL files, validations and gaps.

One transaction per fact, so nothing is half-written. A WAL file's status only moves forward
and its acknowledged offset never decreases; both rules are enforced in the ``WHERE`` clause
of the writing statement itself, so concurrent writers (processes, Spark tasks) cannot race
past them. Times are milliseconds since the epoch; every writer takes ``now`` for tests.

    with Ledger.open("sqlite:///state/orders/ledger.db") as ledger:
        m = ledger.ensure_migration("orders", "source-id", "target-id", spec.tables)
        with ledger.step(m.id, "replay", Provenance("replay", run_id)) as step:
            ledger.record_wal_seen(m.id, "source", server, path, size, name_time)
            ...
            step.metrics["files"] = 3

The ledger is one class joined from one part per concern, each in its own module:
migrations and steps (``migrations_book``; a step's end recorded through a full disk or
an outage: ``step_faults``), WAL files, anchors and gaps (``wal_book``),
validations, key ranges and repairs (``range_book``), leases (``lease_book``), limits set
while steps run (``limit_book``), exported snapshot files (``snapshot_book``), range
checksums recorded as a validation's ranges finish (``checksum_book``), the rows each replay
run wrote, for the validation of its round (``round_book``).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from types import TracebackType
from typing import Self

from sqlalchemy import text

from hbase_migrate.audit.book import now_ms
from hbase_migrate.audit.checksum_book import ChecksumBook
from hbase_migrate.audit.engine import open_engine, redact, sqlite_file
from hbase_migrate.audit.errors import LedgerMissingError
from hbase_migrate.audit.lease_book import LeaseBook
from hbase_migrate.audit.limit_book import LimitBook
from hbase_migrate.audit.migrations_book import MigrationBook
from hbase_migrate.audit.range_book import RangeBook
from hbase_migrate.audit.round_book import RoundBook
from hbase_migrate.audit.schema import check_not_newer, checked_version, upgrade
from hbase_migrate.audit.snapshot_book import SnapshotBook
from hbase_migrate.audit.space import spare_of
from hbase_migrate.audit.wal_book import DEFAULT_GAP_REMEDY, WalBook

__all__ = ["DEFAULT_GAP_REMEDY", "Ledger", "now_ms"]


class Ledger(MigrationBook, WalBook, RangeBook, LeaseBook, LimitBook, SnapshotBook,
             ChecksumBook, RoundBook):
    """An open ledger. Build it with :meth:`open`; close it (or use ``with``) when done."""

    @classmethod
    def open(cls, url: str, *, upgrade_schema: bool = True) -> Ledger:
        """Connect to ``url`` and bring its schema up to date: what writing commands do (an
        empty database becomes a ledger). ``upgrade_schema=False`` is for reading commands:
        nothing is created or changed, and a missing, empty or foreign database raises. A
        schema newer than this code knows raises before anything is written.

        A SQLite file this call creates is removed again when the block using the ledger
        fails before the ledger holds anything of use (a step refused or none recorded, as
        at a mistyped URL): a failed command leaves no empty ledger behind."""
        path = sqlite_file(url) if upgrade_schema else None
        fresh = path if path is not None and not path.exists() else None
        engine = open_engine(url, create=upgrade_schema)
        try:
            if upgrade_schema:
                _, version = upgrade(engine)
            else:
                version = checked_version(engine)
                if version == 0:
                    raise LedgerMissingError(
                        f"no ledger at {redact(engine.url)} yet (an empty database); a "
                        "replay or `hbase-migrate ledger upgrade` creates it")
                check_not_newer(version, engine)
        except BaseException:
            engine.dispose()
            _remove(fresh)
            raise
        ledger = cls(engine, version)
        ledger._fresh_file = fresh
        return ledger

    _fresh_file: Path | None = None  # the SQLite file this process created

    def close(self) -> None:
        self._engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        useless = exc is not None and self._fresh_file is not None and self._holds_nothing()
        self.close()
        if useless:
            _remove(self._fresh_file)

    def _holds_nothing(self) -> bool:
        """No step but refused ones (a step that failed keeps its cause: later refusals
        name it), and nothing recorded of WAL files, ranges or limits."""
        try:
            with self._engine.begin() as conn:
                return not any(conn.execute(text(query)).first() for query in (
                    "SELECT 1 FROM steps WHERE error IS NULL OR error NOT LIKE "
                    "'StepRefusedError:%'",
                    "SELECT 1 FROM wal_files", "SELECT 1 FROM key_ranges",
                    "SELECT 1 FROM limit_changes"))
        except Exception:  # the ledger is the trouble: leave it as it is
            return False


def _remove(path: Path | None) -> None:
    """A SQLite file and its journal files."""
    if path is None:
        return
    for leftover in (path, path.with_name(path.name + "-wal"),
                     path.with_name(path.name + "-shm"), spare_of(path)):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()
