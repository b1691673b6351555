"""What every part of the ledger shares: its engine and the dialect's upsert."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.dialects import sqlite

from hbase_migrate.audit.engine import redact
from hbase_migrate.audit.space import Spare


def now_ms() -> int:
    return int(time.time() * 1000)


class LedgerBook:
    """The base of the ledger's parts (:class:`hbase_migrate.audit.ledger.Ledger` joins
    them): one engine, one transaction per fact."""

    def __init__(self, engine: Engine, schema_version: int) -> None:
        self._engine = engine
        self.schema_version = schema_version
        database = engine.url.database if engine.dialect.name == "sqlite" else None
        self._spare = Spare(Path(database) if database and database != ":memory:"
                            and not database.startswith("file:") else None)

    @property
    def url(self) -> str:
        """The ledger URL with its password masked."""
        return redact(self._engine.url)

    def _insert(self, table: Any) -> Any:
        if self._engine.dialect.name == "postgresql":
            from sqlalchemy.dialects import postgresql  # imported by a PostgreSQL ledger only

            return postgresql.insert(table)
        return sqlite.insert(table)
