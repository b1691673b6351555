"""Listing the source's WAL files beside a follow's runs.

A follow lists the WAL folders when each of its runs begins. A run that lasts longer than the
archive TTL (a large backlog, a slow target) would leave a stretch no listing watched: a file
created and cleaned meanwhile could not be told from none, so a whole chain would be reported
as an unproven gap. A :class:`Watch` lists whenever the newest listing is older than the
follow's interval, while a run lasts, and records what each listing proves (coverage's
``Evidence``); the runs' own reconciling and its listings take turns under one lock.

A watch records only files whose name the ledger does not know (a new file, at the path it
was listed at); a known file that moved is left to the next run's reconciling, which moves
its row (coverage reads a file's chain and time from its name, wherever it was seen)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

from hbase_migrate.audit.ledger import Ledger, now_ms
from hbase_migrate.cluster.storage.walstore import WalStore
from hbase_migrate.replay.coverage import live_heads
from hbase_migrate.replay.discovery import UNKNOWN_SERVER
from hbase_migrate.wal.names import parse_wal_path

log = logging.getLogger(__name__)

# A watch lists at most every this many seconds, or a quarter of the archive TTL when that is
# shorter: a follow's interval may be far shorter than a listing needs to be (the proof asks
# for listings closer than the TTL).
FLOOR_S = 5.0


def watch_period(interval: float, archive_ttl: int) -> float:
    """How often a watch lists while a follow of ``interval`` seconds runs long."""
    return max(interval, min(FLOOR_S, archive_ttl / 4000))


class Watch:
    """Lists ``store`` every ``interval`` seconds (:func:`watch_period`) unless a run listed
    meanwhile, from ``with`` until its end, recording each listing for migration
    ``migration_id``'s ``stream`` (``archive_ttl``: what the listing proves). A failed
    listing is said once until one succeeds again."""

    def __init__(self, ledger: Ledger, migration_id: int, store: WalStore, stream: str,
                 archive_ttl: int, interval: float) -> None:
        self.ledger, self.migration_id, self.store = ledger, migration_id, store
        self.stream, self.archive_ttl, self.interval = stream, archive_ttl, interval
        self._lock = threading.Lock()
        self._failing = False
        self._listed_at = time.monotonic()
        self._ended = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="wal-watch", daemon=True)

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._ended.set()
        self._thread.join()

    @contextmanager
    def reconciling(self) -> Iterator[None]:
        """Held by a run while it lists and reconciles: the watch waits, then counts from
        that listing."""
        with self._lock:
            yield
            self._listed_at = time.monotonic()

    def _loop(self) -> None:
        while not self._ended.wait(max(0.0, self._listed_at + self.interval - time.monotonic())):
            with self._lock:
                if time.monotonic() - self._listed_at < self.interval:
                    continue  # a run listed meanwhile
                try:
                    self.list_once()
                except Exception as exc:  # the run meets the outage too, and rides it
                    if not self._failing:
                        log.warning("listing the WAL files beside the run failed (tried "
                                    "again every %g s): %s", self.interval, exc)
                    self._failing = True
                else:
                    if self._failing:
                        log.info("listing the WAL files beside the run works again")
                    self._failing = False
                self._listed_at = time.monotonic()

    def list_once(self) -> None:
        """One listing: new files recorded as seen, then the listing as watched."""
        started = now_ms()
        listing = self.store.listing()
        ended = now_ms()
        known = {parse_wal_path(r.path).name
                 for r in self.ledger.wal_files(self.migration_id, self.stream)}
        for f in listing.files:
            if f.name not in known:
                self.ledger.record_wal_seen(self.migration_id, self.stream,
                                            f.server or UNKNOWN_SERVER, f.path, f.size,
                                            f.timestamp)
        self.ledger.record_listing(self.migration_id, self.stream, started, ended,
                                   self.archive_ttl, live_heads(listing.live))
