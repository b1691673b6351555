"""Which files a replay run reads, from where, and why: the manifest and the file tasks.

Catch-up: files the ledger already finished (replayed, skipped, gap) are left alone; files
with acknowledged progress resume at their offset (manifest stage ``ledger``); the others go
through :func:`select_files` for ``[start, now + a day)`` with a scanner that stops at the
first edit in the window. Window: every listed file goes through :func:`select_files` with
the full content scan and is read from its start.

Tasks are sorted by (server, creation time, path), then :func:`order_tasks` puts a moved
region's older file before the file where the region opened again. In catch-up, one read of
each fresh file serves both the selection and the ordering (:class:`OnePassScan`).
"""

from __future__ import annotations

from collections.abc import Mapping

from hbase_migrate.audit.records import WalFileRecord, WalStatus
from hbase_migrate.cluster.storage.walstore import WalFileStatus
from hbase_migrate.errors import WalEmptyError
from hbase_migrate.replay.discovery import UNKNOWN_SERVER
from hbase_migrate.replay.job import FileTask, ReplayJob, Totals
from hbase_migrate.replay.ordering import (
    READ_ERRORS,
    RegionEvents,
    RegionEventsReader,
    order_tasks,
    read_region_events,
)
from hbase_migrate.wal.names import parse_wal_path
from hbase_migrate.wal.selection import (
    ContentScan,
    FileRef,
    Manifest,
    ManifestItem,
    scan_wal_contents,
    select_files,
)

OPEN_END = 86_400_000  # catch-up selects up to a day past now
_DONE = (WalStatus.REPLAYED, WalStatus.SKIPPED, WalStatus.GAP)


def first_edit_scan(path: str, start: int, end: int, stop_at: int) -> ContentScan:
    """A content scan that stops at the first entry in ``[start, end)``: enough to know a
    file holds edits to replay."""
    return scan_wal_contents(path, start, end, stop_at, first_only=True)


class OnePassScan:
    """Catch-up planning asks two things of each fresh file: does it hold an edit in the
    window (:func:`first_edit_scan`'s answer, from :meth:`scan`), and which regions does it
    hold and open (:func:`read_region_events`, for the ordering). One read of the keys and
    markers alone (``markers_only``: a data entry's cells are walked, not made) answers both: a
    file with an edit in the window is chosen, and read on to its end for the ordering, as
    is a file read to its end anyway; the ordering then takes the events from here
    (:meth:`region_events`) instead of reading the file again."""

    def __init__(self) -> None:
        self.events: dict[str, RegionEvents | None] = {}

    def scan(self, path: str, start: int, end: int, stop_at: int) -> ContentScan:
        from hbase_migrate.wal.reader import WalReader

        first: int | None = None
        last: int | None = None
        entries = 0
        found: ContentScan | None = None
        events = RegionEventsReader()
        try:
            with WalReader(path, markers_only=True) as reader:
                for entry in reader:
                    events.add(entry)
                    if found is not None:
                        continue
                    write_time = entry.key.write_time
                    entries += 1
                    first = write_time if first is None else min(first, write_time)
                    last = write_time if last is None else max(last, write_time)
                    if start <= write_time < end:
                        found = ContentScan(first, last, entries, 1, complete=False)
                    elif write_time >= stop_at:
                        return ContentScan(first, last, entries, 0, complete=False)
        except WalEmptyError:
            return ContentScan(None, None, 0, 0)
        except READ_ERRORS as exc:
            if found is None:
                raise  # as the first-edit scan: the selection reports it
            self.events[path] = events.stopped(path, exc)
            return found
        self.events[path] = events.result()
        return found or ContentScan(first, last, entries, 0)

    def region_events(self, task: FileTask) -> RegionEvents | None:
        """The events of a file read from its start by :meth:`scan`, else read now."""
        if not task.start_offset and task.path in self.events:
            return self.events.pop(task.path)
        return read_region_events(task)


def _ref(f: WalFileStatus) -> FileRef:
    return FileRef(f.path, f.size, parse_wal_path(f.relpath))


def _task(f: WalFileStatus, row: WalFileRecord | None) -> FileTask:
    server = f.server or UNKNOWN_SERVER
    if row is None or not row.offset_reached:
        return FileTask(f.path, server, f.timestamp, f.size, f.state)
    totals = Totals(row.entries, dict(row.cells_by_type), dict(row.markers),
                    row.approximated_deletes, row.last_write_time)
    return FileTask(f.path, server, f.timestamp, f.size, f.state, row.offset_reached, totals)


def plan(job: ReplayJob, listed: list[WalFileStatus], rows: Mapping[str, WalFileRecord],
         start: int, now: int) -> tuple[Manifest, list[FileTask]]:
    """The manifest of the run and the tasks to replay, in replay order."""
    if job.end is not None:
        manifest = select_files([_ref(f) for f in listed], start, job.end,
                                roll_period=job.spec.replay.roll_period,
                                margin=job.spec.replay.margin, now=now)
        chosen = {item.path for item in manifest.included}
        tasks = [_task(f, None) for f in listed if f.path in chosen]
        return manifest, order_tasks(sorted(tasks, key=_order))
    resumed: list[WalFileStatus] = []
    fresh: list[WalFileStatus] = []
    for f in listed:
        row = rows.get(f.path)
        if row is not None and row.status in _DONE:
            continue
        (resumed if row is not None and row.offset_reached else fresh).append(f)
    one_pass = OnePassScan()
    manifest = select_files([_ref(f) for f in fresh], start, now + OPEN_END,
                            roll_period=job.spec.replay.roll_period,
                            margin=job.spec.replay.margin, scanner=one_pass.scan, now=now)
    # A live file is read to its end even with no edit in the window yet: the offset reached
    # proves it drained, and the next run continues there.
    items = [item._replace(included=True, reason=f"live file, no edit in the window yet "
                           f"({item.reason}): read to its end to record the offset reached")
             if not item.included and item.stage == "content" and item.state == "live"
             else item for item in manifest.items]
    for f in resumed:
        offset = rows[f.path].offset_reached
        items.append(ManifestItem(f.path, True, "ledger", f"replay in progress: resumes at "
                                  f"byte offset {offset} of {f.size}", f.timestamp,
                                  state=f.state, size=f.size))
    manifest = manifest._replace(items=tuple(sorted(items, key=lambda i: i.path)))
    chosen = {item.path for item in manifest.included}
    tasks = [_task(f, rows.get(f.path)) for f in listed if f.path in chosen]
    return manifest, order_tasks(sorted(tasks, key=_order), one_pass.region_events)


def _order(task: FileTask) -> tuple[str, int, str]:
    return task.server, task.name_time or 0, task.path
