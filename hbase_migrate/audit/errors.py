"""Errors of the audit ledger: it cannot be opened, its schema is unknown, or a fact would
contradict what it already holds."""

from __future__ import annotations

from hbase_migrate.errors import HBaseMigrateError


class LedgerError(HBaseMigrateError):
    """Base class of the ledger's errors; the message names the ledger URL or the record."""


class LedgerOpenError(LedgerError):
    """The ledger URL cannot be parsed or connected to (the message hides the password)."""


class LedgerUnreachableError(LedgerError):
    """The ledger's database stopped answering while a step ran (a restart, a network cut):
    the step stopped; what it recorded before is kept and a rerun goes on from there."""


class LedgerSchemaError(LedgerError):
    """The ledger's schema is newer than this code knows, or a migration file is unusable."""


class MigrationMismatchError(LedgerError):
    """The ledger already holds a migration of that name with a different definition."""


class WalStateError(LedgerError):
    """A WAL-file fact that would move its status backwards or lower its offset."""


class MigrationStateError(LedgerError):
    """A migration's state would move back (states only move forward)."""


class LedgerMissingError(LedgerOpenError):
    """A reading command found no ledger where the URL points (and created none)."""


class LedgerForeignError(LedgerOpenError):
    """The database holds tables of something else than an hbase-migrate ledger."""
