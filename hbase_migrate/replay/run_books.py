"""The ledger bookkeeping of a run's files (:class:`RunBooks`): each file begun, followed
where it moves, its acknowledged progress recorded (at most every
:data:`PROGRESS_EVERY_MS`) and its outcome recorded as it ends, whether it was replayed here
or elsewhere (Spark)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import WalStatus
from hbase_migrate.replay.coverage import Gap
from hbase_migrate.replay.discovery import record_vanished
from hbase_migrate.replay.file_replay import FileProgress
from hbase_migrate.replay.job import FileOutcome, FileTask, Totals
from hbase_migrate.replay.summary import Observer

log = logging.getLogger(__name__)


_FINISHED = (WalStatus.REPLAYED, WalStatus.SKIPPED, WalStatus.GAP)
# How often a file's acknowledged progress is recorded in the ledger while it is replayed
# (besides as it ends): a crash replays at most this much again, idempotently.
PROGRESS_EVERY_MS = 1000


class RunBooks:
    """Ledger bookkeeping of the files of one run (catch-up only writes per-file rows)."""

    def __init__(self, ledger: Ledger, migration_id: int, tracked: bool,
                 observer: Observer, since: int, stream: str) -> None:
        self.ledger, self.mid, self.tracked, self.observer = ledger, migration_id, tracked, observer
        self.stream = stream
        self.since = since
        self.where: dict[str, str] = {}  # task path -> where the ledger row is now
        # acknowledged progress not recorded yet: (path, offset, totals)
        self.unrecorded: tuple[str, int, Totals] | None = None
        self.record_at = 0.0  # time.monotonic() from which progress is recorded again
        self.gaps: list[Gap] = []  # files that vanished before this run could read them

    def handled(self, task: FileTask) -> bool:
        """True when an earlier task of this run already followed its file to ``task.path``
        (a rename between listing ``WALs/`` and ``oldWALs/`` lists one file twice), or the
        ledger has finished it under that path meanwhile."""
        if task.path in self.where.values():
            return True
        row = self.ledger.wal_file(self.mid, self.stream, task.path) if self.tracked else None
        return row is not None and row.status in _FINISHED

    def begin(self, task: FileTask) -> None:
        self.where[task.path] = task.path
        if self.tracked:
            self.ledger.mark_wal_replaying(self.mid, self.stream, task.path)
        self.observer.file_started(task)

    def _follow(self, task: FileTask, path: str) -> None:
        if self.where[task.path] != path:
            if self.tracked:
                self.ledger.record_wal_moved(self.mid, self.stream, self.where[task.path], path)
            self.where[task.path] = path

    def progress_hook(self, task: FileTask) -> Callable[[str, FileProgress, Totals], None]:
        """Acknowledged progress of ``task``: recorded at most every
        :data:`PROGRESS_EVERY_MS` (the first at once); :meth:`settle` records the rest."""
        def hook(path: str, progress: FileProgress, totals: Totals) -> None:
            self._follow(task, path)
            self.unrecorded = (path, progress.offset, totals)
            if time.monotonic() >= self.record_at:
                self.settle()
            self.observer.file_advanced(task, progress.offset)
        return hook

    def settle(self) -> None:
        """Record the acknowledged progress not recorded yet (the newest only)."""
        if self.unrecorded is not None:
            path, offset, totals = self.unrecorded
            self.unrecorded = None
            self._record(path, offset, totals, closed=False)
            self.record_at = time.monotonic() + PROGRESS_EVERY_MS / 1000

    def _record(self, path: str, offset: int, totals: Totals, *, closed: bool) -> None:
        if self.tracked:
            self.ledger.record_wal_progress(
                self.mid, self.stream, path, offset_reached=offset, entries=totals.entries,
                cells_by_type=totals.cells, markers=totals.markers,
                approximated_deletes=totals.approximated,
                last_write_time=totals.last_write_time, closed=closed)

    def finish(self, task: FileTask, outcome: FileOutcome) -> FileOutcome:
        self._follow(task, outcome.path)
        if outcome.complete and outcome.error is None:
            self.unrecorded = None  # the final record below covers it
        else:
            self.settle()  # a failed or unfinished file keeps what was acknowledged
        if outcome.vanished:
            row = self.ledger.wal_file(self.mid, self.stream, outcome.path)
            gap = None if row is None else record_vanished(
                self.ledger, self.mid, row, self.since,
                self.ledger.wal_files(self.mid, self.stream), self.stream)
            if gap is not None:
                self.gaps.append(gap)
        elif outcome.error is not None:
            if self.tracked:
                self.ledger.mark_wal_failed(self.mid, self.stream, outcome.path, outcome.error)
            log.error("%s", outcome.error)
        elif outcome.complete:
            self._record(outcome.path, outcome.offset, outcome.totals, closed=True)
        if outcome.tags_dropped:
            log.warning("%s: %d cell tags not written to the target (replay writes cells "
                        "without their tags: per-cell TTLs, ACLs and visibility labels are "
                        "not replayed)", outcome.path, outcome.tags_dropped)
        self.observer.file_finished(task, outcome)
        return outcome

    def record_all(self, tasks: Sequence[FileTask], outcomes: Iterable[FileOutcome]
                   ) -> list[FileOutcome]:
        """Outcomes computed elsewhere (Spark): record each one's acknowledged progress."""
        by_path = {t.path: t for t in tasks}
        done = []
        for outcome in outcomes:
            task = by_path[outcome.moved_from or outcome.path]
            self.begin(task)
            self._follow(task, outcome.path)
            if outcome.offset > task.start_offset and not outcome.complete:
                self._record(outcome.path, outcome.offset, outcome.totals, closed=False)
            done.append(self.finish(task, outcome))
        return done
