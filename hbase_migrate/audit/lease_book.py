"""The ledger's leases: a named lock with a holder and an expiry, taken in one guarded statement."""

from __future__ import annotations

from sqlalchemy import and_, select

from hbase_migrate.audit import records as t
from hbase_migrate.audit.book import LedgerBook, now_ms


class LeaseBook(LedgerBook):
    """Leases."""

    # -- leases ------------------------------------------------------------------------------

    def take_lease(self, name: str, holder: str, ttl_ms: int, *, steal_from: str | None = None,
                   now: int | None = None) -> tuple[str, int]:
        """Take (or renew) the lease ``name`` for ``holder`` when it is free, expired, already
        ``holder``'s or ``steal_from``'s; returns the lease's (holder, expires_at) after the
        attempt: ``holder`` got it when the first is ``holder``. One guarded statement."""
        now = now_ms() if now is None else now
        le = t.leases
        stmt = self._insert(le).values(name=name, holder=holder, acquired_at=now,
                                       expires_at=now + ttl_ms)
        takeable = (le.c.expires_at < now) | (le.c.holder == holder)
        if steal_from is not None:
            takeable = takeable | (le.c.holder == steal_from)
        stmt = stmt.on_conflict_do_update(
            index_elements=["name"], where=takeable,
            set_={"holder": stmt.excluded.holder, "acquired_at": stmt.excluded.acquired_at,
                  "expires_at": stmt.excluded.expires_at})
        with self._engine.begin() as conn:
            conn.execute(stmt)
            row = conn.execute(select(le.c.holder, le.c.expires_at)
                               .where(le.c.name == name)).one()
        return str(row.holder), int(row.expires_at)

    def release_lease(self, name: str, holder: str) -> None:
        """Give the lease up (nothing happens when ``holder`` no longer has it)."""
        with self._engine.begin() as conn:
            conn.execute(t.leases.delete().where(
                and_(t.leases.c.name == name, t.leases.c.holder == holder)))
