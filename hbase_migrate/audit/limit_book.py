"""The ledger's throttles: each ``hbase-migrate limits set`` is a row; running tasks read
the newest value of each key (:meth:`LimitBook.limit_overrides`)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from hbase_migrate.audit import records as t
from hbase_migrate.audit.book import LedgerBook, now_ms
from hbase_migrate.audit.records import LimitChange, dump_json


class LimitBook(LedgerBook):
    """Limit changes."""

    def set_limit(self, migration_id: int, name: str, value: Any, *,
                  now: int | None = None) -> LimitChange:
        """Record ``name`` (a ``[limits]`` key, its value checked by the caller) = ``value``."""
        when = now_ms() if now is None else now
        with self._engine.begin() as conn:
            row_id = conn.execute(t.limit_changes.insert().values(
                migration_id=migration_id, name=name, value=dump_json(value), set_at=when,
            ).returning(t.limit_changes.c.id)).scalar_one()
        return LimitChange(int(row_id), migration_id, name, value, when)

    def limit_changes(self, migration_id: int) -> list[LimitChange]:
        """Every change, oldest first."""
        lc = t.limit_changes
        with self._engine.begin() as conn:
            rows = conn.execute(select(lc).where(lc.c.migration_id == migration_id)
                                .order_by(lc.c.id)).all()
        return [LimitChange.from_row(r._mapping) for r in rows]

    def limit_overrides(self, migration_id: int) -> dict[str, Any]:
        """The newest value of each key set (what overrides the migration config)."""
        lc = t.limit_changes
        newest = (select(func.max(lc.c.id)).where(lc.c.migration_id == migration_id)
                  .group_by(lc.c.name).scalar_subquery())
        with self._engine.begin() as conn:
            rows = conn.execute(select(lc).where(lc.c.id.in_(newest))).all()
        return {c.name: c.value for c in (LimitChange.from_row(r._mapping) for r in rows)}
