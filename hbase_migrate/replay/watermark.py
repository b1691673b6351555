"""Fixing a migration's watermark T0: the moment the snapshot copy starts from.

Replay must then prove it reads every source WAL chain from T0 on, so the file each live
server is writing at T0 (its *anchor*) is recorded with it (:mod:`coverage`).
"""

from __future__ import annotations

from hbase_migrate.audit.ledger import Ledger, now_ms
from hbase_migrate.config import MigrationSpec
from hbase_migrate.replay.coverage import record_anchors
from hbase_migrate.replay.discovery import open_wal_store


def fix_watermark(spec: MigrationSpec, watermark: int | None = None, *,
                  state: str | None = None) -> int:
    """Record T0 (default: now), the migration's ``state`` if given, and the anchor of every
    live WAL chain of the source; returns T0."""
    store = open_wal_store(spec.source)
    t0 = now_ms() if watermark is None else watermark
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.ensure_spec(spec)
        ledger.update_migration(record.id, watermark=t0, state=state)
        record_anchors(ledger, record.id, store, t0)
    return t0
