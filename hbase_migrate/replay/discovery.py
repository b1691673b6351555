"""Finding the source's WAL files and reconciling them with the ledger.

The store is WebHDFS when the cluster's endpoints give ``webhdfs``, else a local HBase root
folder: ``hbase_root_dir`` from the raw ``cluster.json`` (the embedded cluster writes it),
else a local ``hbase_root``.

Reconciling a listing with the ledger (DESIGN 4.2, 4.3): a file the ledger knows that is no
longer where it was moved when the listing shows its name further along (``-splitting``,
``oldWALs/``), else it is looked up there; found, its row (status, offset) follows it;
found nowhere, it vanished: before it was replayed that is a **gap**. Every listed file is
then recorded as seen.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hbase_migrate.audit.errors import LedgerMissingError
from hbase_migrate.audit.ledger import DEFAULT_GAP_REMEDY, Ledger, now_ms
from hbase_migrate.audit.records import PENDING, WalFileRecord, WalStatus
from hbase_migrate.cluster.storage.walstore import (
    LocalWalStore,
    WalFileStatus,
    WalStore,
    WebHdfsWalStore,
)
from hbase_migrate.config import ClusterSpec
from hbase_migrate.errors import ConfigError
from hbase_migrate.hbase import open_cluster
from hbase_migrate.replay.coverage import WRITE_TIME_SKEW_MS, Gap, chain_key, live_heads
from hbase_migrate.timeutil import format_time
from hbase_migrate.wal.names import parse_wal_path

log = logging.getLogger(__name__)

SOURCE = "source"
UNKNOWN_SERVER = "unknown"


def open_wal_store(cluster: ClusterSpec) -> WalStore:
    """The WAL store of a cluster (ConfigError when it names no WAL storage)."""
    endpoints = open_cluster(cluster).endpoints
    if endpoints.webhdfs:
        return WebHdfsWalStore(endpoints.webhdfs, endpoints.hbase_root or "/hbase",
                               **endpoints.client_auth)
    local = endpoints.hbase_root_dir or endpoints.hbase_root
    if local and Path(local).is_dir():
        return LocalWalStore(local)
    raise ConfigError(f"{cluster.role} cluster {endpoints.name!r}: no WAL storage: give "
                      "webhdfs = \"http://namenode:9870\" (with hbase_root) or a local "
                      f"hbase_root folder (got {local!r})")


@dataclass
class Reconciliation:
    """What a listing changed in the ledger."""

    listed: list[WalFileStatus] = field(default_factory=list)
    live: list[WalFileStatus] = field(default_factory=list)  # as read in the live folders
    moves: list[tuple[str, str]] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)


def reconcile(ledger: Ledger, migration_id: int, store: WalStore, *,
              record: bool = True, since: int | None = None,
              stream: str = SOURCE, archive_ttl: int | None = None) -> Reconciliation:
    """List the store, record every listed file as seen, follow moves, detect gaps (a file
    whose edits all predate ``since`` is no gap). ``record=False`` (dry run) only lists.
    ``stream`` is the ledger's key of the files' progress (replay's ``source`` by default);
    with ``archive_ttl``, the listing is recorded as watched (:mod:`coverage`)."""
    started = now_ms()
    listing = store.listing()
    result = Reconciliation(listed=listing.files, live=listing.live)
    if not record:
        return result
    ended = now_ms()
    here = {f.path for f in result.listed}
    _follow_listed(ledger, migration_id, result, here, stream)
    for f in result.listed:
        ledger.record_wal_seen(migration_id, stream, f.server or UNKNOWN_SERVER, f.path,
                               f.size, f.timestamp)
    if archive_ttl is not None:  # what it proves, once every file it saw is in the ledger
        ledger.record_listing(migration_id, stream, started, ended, archive_ttl,
                              live_heads(listing.live))
    rows = ledger.wal_files(migration_id, stream)
    for row in rows:
        if row.path in here or row.vanished_at is not None or row.status is WalStatus.GAP:
            continue
        _follow(ledger, migration_id, store, row, result, since, rows, stream)
    return result


# How far along its life a WAL file is: it only ever moves forward (a dead server's files
# to its -splitting folder, then every file to the archive).
_STAGES = {"live": 0, "splitting": 1, "archived": 2}


def _stage(path: str) -> int:
    return _STAGES.get(parse_wal_path(path).state or "", -1)


def _follow_listed(ledger: Ledger, migration_id: int, result: Reconciliation,
                   here: set[str], stream: str) -> None:
    """A known file the listing shows further along (same name, later folder) moved there:
    its row follows before the listing is recorded, so that one file never has two rows.
    (Following it by a later lookup instead could race the move on: listed in -splitting,
    archived before the lookup, the old row would go to oldWALs/ and the listed -splitting
    path get a second, fresh row.)"""
    listed = {f.name: f.path for f in result.listed}
    for row in ledger.wal_files(migration_id, stream):
        if row.path in here or row.vanished_at is not None or row.status is WalStatus.GAP:
            continue
        moved = listed.pop(parse_wal_path(row.path).name, None)
        if moved is not None and _stage(moved) > _stage(row.path):
            ledger.record_wal_moved(migration_id, stream, row.path, moved)
            result.moves.append((row.path, moved))


def _follow(ledger: Ledger, migration_id: int, store: WalStore, row: WalFileRecord,
            result: Reconciliation, since: int | None, rows: list[WalFileRecord],
            stream: str) -> None:
    """A known file is not listed where it was: moved, still there, or gone."""
    if _exists(store, row.path):
        return  # listed in a race; the next run sees it
    try:
        moved = store.moved_path(row.path)
    except ValueError:
        moved = None
    if moved is not None and moved != row.path:
        ledger.record_wal_moved(migration_id, stream, row.path, moved)
        result.moves.append((row.path, moved))
        return
    if row.status in PENDING and _drained_closed(row):
        # read to its end while closed (archived or splitting): nothing was lost
        ledger.record_wal_progress(
            migration_id, stream, row.path, offset_reached=row.offset_reached,
            entries=row.entries, cells_by_type=row.cells_by_type, markers=row.markers,
            approximated_deletes=row.approximated_deletes,
            last_write_time=row.last_write_time, closed=True)
        ledger.mark_wal_vanished(migration_id, stream, row.path)
        return
    gap = record_vanished(ledger, migration_id, row, since, rows, stream)
    if gap is not None:
        result.gaps.append(gap)


def lost_from(row: WalFileRecord) -> int | None:
    """Lower bound of the write times of the edits a vanished file held past its
    acknowledged offset."""
    base = row.last_write_time if row.offset_reached and row.last_write_time else row.name_time
    return None if base is None else base - WRITE_TIME_SKEW_MS


def ended_before(row: WalFileRecord, rows: Sequence[WalFileRecord], since: int) -> int | None:
    """The creation time of the next file of ``row``'s chain when it shows that every edit
    of ``row`` was written before ``since``; None when that is not known."""
    key = chain_key(row.path)
    if key is None or row.name_time is None:
        return None
    later = [r.name_time for r in rows if r.name_time is not None
             and r.name_time > row.name_time and chain_key(r.path) == key]
    successor = min(later, default=None)
    if successor is not None and successor + WRITE_TIME_SKEW_MS <= since:
        return successor
    return None


def record_vanished(ledger: Ledger, migration_id: int, row: WalFileRecord,
                    since: int | None = None, rows: Sequence[WalFileRecord] = (),
                    stream: str = SOURCE) -> Gap | None:
    """Record that ``row``'s file is gone; the gap when it was not replayed yet and may
    have held edits written at or after ``since``."""
    successor = ended_before(row, rows, since) if since is not None else None
    if successor is not None and row.status in PENDING and not row.offset_reached:
        ledger.mark_wal_skipped(migration_id, stream, row.path,
                                f"vanished unread, but the next file of its server was "
                                f"created at {format_time(successor)}, before the "
                                "watermark: it held no edit to replay", unread=True)
        ledger.mark_wal_vanished(migration_id, stream, row.path)
        return None
    gap_id = ledger.mark_wal_vanished(migration_id, stream, row.path, first_time=lost_from(row))
    if gap_id is None or row.status not in PENDING:
        return None
    recorded = next((g for g in ledger.gaps(migration_id, stream=stream) if g.id == gap_id),
                    None)
    log.error("WAL file %s vanished before it was replayed (gap)", row.path)
    return Gap(row.path, row.server, recorded.first_time if recorded else lost_from(row),
               recorded.last_time if recorded else None,
               recorded.remedy if recorded else DEFAULT_GAP_REMEDY)


def is_closed(path: str) -> bool:
    """A file in ``oldWALs/`` or a ``-splitting`` folder: nothing is appended to it."""
    parts = f"/{path}".split("/")
    return "oldWALs" in parts or any(p.endswith("-splitting") for p in parts[:-1])


def _drained_closed(row: WalFileRecord) -> bool:
    return (is_closed(row.path) and row.size is not None and row.offset_reached > 0
            and row.offset_reached >= row.size)


def _exists(store: WalStore, path: str) -> bool:
    try:
        store.status(path)
    except (FileNotFoundError, ValueError):
        return False
    return True


def unseen_wal_files(cluster: ClusterSpec, ledger_url: str, migration: str
                     ) -> list[WalFileStatus]:
    """The source's WAL files the ledger has never listed for ``migration`` (by file name,
    so a known file that moved to ``oldWALs/`` is not new): what a WAL sensor waits for.
    Reads only; with no ledger or no such migration yet, every file is unseen."""
    listed = open_wal_store(cluster).list_wal_files()
    try:
        with Ledger.open(ledger_url, upgrade_schema=False) as ledger:
            record = ledger.migration(migration)
            rows = ledger.wal_files(record.id, SOURCE) if record is not None else []
    except LedgerMissingError:
        rows = []  # no ledger yet: nothing was ever listed
    known = {row.path.rsplit("/", 1)[-1] for row in rows}
    return [f for f in listed if f.name not in known]
