"""Fixing a migration's watermark T0: the moment the snapshot copy starts from.

Replay must then prove it reads every source WAL chain from T0 on, so the file each live
server is writing at T0 (its *anchor*) is recorded with it (:mod:`coverage`).
"""

from __future__ import annotations

from hbase_migrate.audit.ledger import Ledger, now_ms
from hbase_migrate.audit.records import MigrationRecord
from hbase_migrate.config import MigrationSpec
from hbase_migrate.replay.coverage import record_anchors
from hbase_migrate.replay.discovery import open_wal_store


def record_watermark(ledger: Ledger, migration: MigrationRecord, spec: MigrationSpec,
                     t0: int) -> int:
    """Record T0 and the anchor of every live WAL chain of the source; returns the number
    of anchors."""
    ledger.update_migration(migration.id, watermark=t0)
    return record_anchors(ledger, migration.id, open_wal_store(spec.source), t0,
                          spec.replay.archive_ttl)


def fix_watermark(spec: MigrationSpec, watermark: int | None = None) -> int:
    """:func:`record_watermark` in the spec's ledger at ``watermark`` (default: now)."""
    t0 = now_ms() if watermark is None else watermark
    with Ledger.open(spec.ledger_url) as ledger:
        record_watermark(ledger, ledger.ensure_spec(spec), spec, t0)
    return t0
