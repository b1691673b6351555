"""Fixing a migration's watermark T0: the moment the snapshot copy starts from.

Replay must then prove it reads every source WAL chain from T0 on, so the file each live
server is writing at T0 (its *anchor*) is recorded with it (:mod:`coverage`).
"""

from __future__ import annotations

import logging

from hbase_migrate.audit.ledger import Ledger, now_ms
from hbase_migrate.audit.records import MigrationRecord
from hbase_migrate.cluster.storage.walstore import WalStore
from hbase_migrate.config import MigrationSpec
from hbase_migrate.replay.coverage import anchors_of, live_heads
from hbase_migrate.replay.discovery import SOURCE, open_wal_store
from hbase_migrate.timeutil import format_time

log = logging.getLogger(__name__)


def record_watermark(ledger: Ledger, migration: MigrationRecord, spec: MigrationSpec,
                     t0: int) -> int:
    """Record T0 and the anchor of every live WAL chain of the source; returns the number
    of anchors."""
    ledger.update_migration(migration.id, watermark=t0)
    return record_anchors(ledger, migration.id, open_wal_store(spec.source), t0,
                          spec.replay.archive_ttl)


def record_anchors(ledger: Ledger, migration_id: int, store: WalStore, watermark: int,
                   archive_ttl: int) -> int:
    """Record the file each live chain was writing at ``watermark``, or '' when the listing
    no longer found it; returns how many files were found. The files listed are left to
    the replay and the WAL watch (which start from the files the ledger has not seen), so
    the listing proves only what needs no file of it recorded: no file newer than each
    chain's head had appeared when it began."""
    started = now_ms()
    seen = store.listing()
    ledger.record_listing(migration_id, SOURCE, started, now_ms(), archive_ttl,
                          live_heads(seen.live), files_recorded=False)
    found = anchors_of([*seen.files, *seen.live], watermark)
    for key, f in found.items():
        if f is None:
            log.warning("the WAL file server %s%s was writing at the watermark %s was gone "
                        "when the source's WAL folders were listed: its chain must be proven "
                        "from older files", key.server,
                        f" (group {key.group})" if key.group else "", format_time(watermark))
        ledger.record_anchor(migration_id, key.server, key.group, "" if f is None else f.path,
                             None if f is None else f.timestamp, watermark)
    return sum(f is not None for f in found.values())


def fix_watermark(spec: MigrationSpec, watermark: int | None = None) -> int:
    """:func:`record_watermark` in the spec's ledger at ``watermark`` (default: now)."""
    t0 = now_ms() if watermark is None else watermark
    with Ledger.open(spec.ledger_url) as ledger:
        record_watermark(ledger, ledger.ensure_spec(spec), spec, t0)
    return t0
