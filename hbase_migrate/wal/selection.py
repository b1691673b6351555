"""Choosing the WAL files that hold edits of a time window ``[start, end)``, with a manifest.

A WAL's name carries its creation time, not the time of its last edit, so selecting files by
name time alone drops files created before the window that hold edits inside it
(HBASE-30377). Selection therefore has two stages:

1. **By name** (no I/O): a file created at or after ``end + margin`` holds no edit of the
   window (entries queued during a roll can land in the new file with a slightly earlier
   write time, hence the margin). An *archived* file created before
   ``start - roll_period - margin`` was rolled by ``created + roll_period`` at the latest, so
   its edits all precede the window. Files that are not archived (live, or of a dead server
   being split) may not have been rolled and are never excluded by this lower bound.
   Procedure logs and master-store WALs are not region server WALs and are left out.
2. **By contents**: every other file (including names without a timestamp) is read, and is in
   iff some entry's ``write_time`` is in ``[start, end)``. A live file is also kept while the
   window is still open (``end`` in the future): it may still receive edits.

A file that cannot be read is never dropped: its item records the error and is included, as
needing attention, so that the replay of it fails loudly instead of losing it silently.
The result is a ``Manifest``: one ``ManifestItem`` per file, with the reason for the verdict,
as stable JSON and as text for ``--dry-run``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

from hbase_migrate.errors import ConfigError, HBaseMigrateError, WalEmptyError
from hbase_migrate.timeutil import check_window, format_duration, format_time
from hbase_migrate.wal.names import WalFileInfo, parse_wal_path

log = logging.getLogger(__name__)

MANIFEST_VERSION = 1
SCAN_THREADS = 4  # files whose contents are read at once (each through a window of its own)
NOT_REGION_WALS = frozenset({"procedure", "master_store"})
# files that never hold an edit of a table a migration copies, in any state: those and
# hbase:meta's own WAL (HBase's WALFactory.getWAL gives it a provider of its own)
NO_TABLE_EDITS = NOT_REGION_WALS | {"meta"}
_NOT_ROLLED_STATES = ("live", "splitting")


class FileRef(NamedTuple):
    """A file to consider: its path or URL, its size if known, its parsed name if at hand."""

    path: str
    size: int | None = None
    info: WalFileInfo | None = None


class ContentScan(NamedTuple):
    """What a content scan found: write-time range of the entries read, how many entries were
    read and how many have a write time in the window. ``complete`` is False when the scan
    stopped early (past the window), so ``last_write_time`` is the last one *seen*."""

    first_write_time: int | None
    last_write_time: int | None
    entries: int
    entries_in_window: int
    complete: bool = True


# (path, start, end, stop_at) -> ContentScan; may stop at the first write_time >= stop_at.
ContentScanner = Callable[[str, int, int, int], ContentScan]


class ManifestItem(NamedTuple):
    """The verdict on one file. ``stage`` is ``"name"`` or ``"content"``; ``error`` is set
    (and ``included`` True) when the file could not be read and needs attention."""

    path: str
    included: bool
    stage: str
    reason: str
    name_time: int | None
    first_write_time: int | None = None
    last_write_time: int | None = None
    entries_in_window: int | None = None
    kind: str = "wal"
    state: str | None = None
    size: int | None = None
    error: str | None = None


class Manifest(NamedTuple):
    """The exact selection for a window, one item per file, sorted by path."""

    start: int
    end: int
    roll_period: int
    margin: int
    items: tuple[ManifestItem, ...]

    @property
    def included(self) -> list[ManifestItem]:
        """Items to replay (including those that need attention)."""
        return [item for item in self.items if item.included]

    @property
    def attention(self) -> list[ManifestItem]:
        """Items whose file could not be read."""
        return [item for item in self.items if item.error is not None]

    def to_dict(self) -> dict[str, Any]:
        """A plain, JSON-ready form (the shape of ``to_json``)."""
        return {
            "version": MANIFEST_VERSION,
            "window": {"start": self.start, "end": self.end},
            "roll_period": self.roll_period,
            "margin": self.margin,
            "summary": {
                "files": len(self.items),
                "included": len(self.included),
                "excluded": len(self.items) - len(self.included),
                "attention": len(self.attention),
            },
            "items": [item._asdict() for item in self.items],
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        """Stable JSON: sorted keys, items sorted by path, times as integer ms."""
        return json.dumps(self.to_dict(), indent=indent, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        """Read back what ``to_json`` wrote; ``ConfigError`` if it is not such a manifest."""
        try:
            data = json.loads(text)
            if data.get("version") != MANIFEST_VERSION:
                raise ValueError(f"unknown manifest version {data.get('version')!r}")
            items = tuple(ManifestItem(**item) for item in data["items"])
            window = data["window"]
            return cls(window["start"], window["end"], data["roll_period"], data["margin"], items)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(f"not a WAL selection manifest: {exc}") from None

    def render_text(self) -> str:
        """The manifest for people (``--dry-run``)."""
        lower = self.start - self.roll_period - self.margin
        lines = [
            f"WAL selection for [{format_time(self.start)}, {format_time(self.end)}) "
            f"(roll period {format_duration(self.roll_period)}, "
            f"margin {format_duration(self.margin)})",
            f"archived files created before {format_time(lower)} or any file created at or "
            f"after {format_time(self.end + self.margin)} are left out by name",
        ]
        for item in self.items:
            mark = "!" if item.error else ("+" if item.included else "-")
            lines.append(f"{mark} {item.path}")
            lines.append(f"    [{item.stage}] {item.reason}")
        lines.append(
            f"{len(self.items)} files: {len(self.included)} included "
            f"({len(self.attention)} need attention), "
            f"{len(self.items) - len(self.included)} excluded"
        )
        return "\n".join(lines) + "\n"


def scan_wal_contents(
    path: str, start: int, end: int, stop_at: int, *, first_only: bool = False
) -> ContentScan:
    """Read a WAL's entries and count those with ``start <= write_time < end``; with
    ``first_only``, stop at the first such entry (enough to know the file has work).

    Stops at the first entry with ``write_time >= stop_at`` (write times grow within a file,
    up to small disorder near a roll, which ``stop_at > end`` absorbs). An empty (header-less)
    file is a scan with no entries; other read errors propagate.
    """
    from hbase_migrate.wal.reader import WalReader

    first: int | None = None
    last: int | None = None
    entries = in_window = 0
    try:
        with WalReader(path, markers_only=True) as reader:  # the keys are enough
            for entry in reader:
                write_time = entry.key.write_time
                entries += 1
                first = write_time if first is None else min(first, write_time)
                last = write_time if last is None else max(last, write_time)
                if start <= write_time < end:
                    in_window += 1
                    if first_only:
                        return ContentScan(first, last, entries, in_window, complete=False)
                elif write_time >= stop_at:
                    return ContentScan(first, last, entries, in_window, complete=False)
    except WalEmptyError:
        return ContentScan(None, None, 0, 0)
    return ContentScan(first, last, entries, in_window)


def _by_name(info: WalFileInfo, start: int, end: int, roll_period: int, margin: int) -> str | None:
    """The reason to exclude a file by its name alone, or None to look at its contents."""
    if info.kind in NOT_REGION_WALS:
        what = "procedure log" if info.kind == "procedure" else "master-store WAL"
        return f"not a region server WAL ({what})"
    if info.kind == "meta":
        return "the hbase:meta WAL: only hbase:meta's edits, no table's a migration copies"
    created = info.timestamp
    if created is None:
        return None
    if created >= end + margin:
        return (
            f"created {format_time(created)}, at or after the window end "
            f"{format_time(end)} plus margin {format_duration(margin)}"
        )
    if info.state == "archived" and created < start - roll_period - margin:
        return (
            f"created {format_time(created)}, so rolled by {format_time(created + roll_period)} "
            f"at the latest (roll period {format_duration(roll_period)}), before the window "
            f"start {format_time(start)} less margin {format_duration(margin)}"
        )
    return None


def _by_content(scan: ContentScan, info: WalFileInfo, end: int, now: int) -> tuple[bool, str]:
    if scan.entries_in_window:
        return True, (
            f"{scan.entries_in_window} entries with write_time in the window "
            f"(write_time {_span(scan)})"
        )
    if info.state in _NOT_ROLLED_STATES and end > now:
        return True, f"{info.state} file and the window is still open: it may receive edits"
    if not scan.entries:
        return False, "no entries"
    seen = "entries" if scan.complete else "entries read before stopping past the window"
    return False, f"no entry in the window ({scan.entries} {seen}, write_time {_span(scan)})"


def _span(scan: ContentScan) -> str:
    first, last = scan.first_write_time, scan.last_write_time
    if first is None or last is None:
        return "none"
    return f"{format_time(first)} .. {format_time(last)}"


def select_files(
    files: Iterable[FileRef | str],
    start: int,
    end: int,
    *,
    roll_period: int,
    margin: int,
    scanner: ContentScanner | None = None,
    now: int | None = None,
) -> Manifest:
    """Select the files holding edits with ``start <= write_time < end`` (ms).

    ``roll_period`` is the source's ``hbase.regionserver.logroll.period``, ``margin`` a safety
    allowance for clock skew and roll delays (both ms). ``scanner`` reads a file's contents
    (default: ``scan_wal_contents``), :data:`SCAN_THREADS` files at a time (a remote file's
    reads wait on the network); ``now`` (ms) decides whether the window is still open.
    """
    check_window(start, end)
    if roll_period < 0 or margin < 0:
        raise ConfigError(f"roll period ({roll_period}) and margin ({margin}) must be >= 0")
    scan = scanner or scan_wal_contents
    clock = int(time.time() * 1000) if now is None else now
    manifest = Manifest(start, end, roll_period, margin, ())
    refs = [FileRef(f) if isinstance(f, str) else f for f in files]
    with ThreadPoolExecutor(max(1, min(SCAN_THREADS, len(refs))),
                            thread_name_prefix="wal selection") as pool:
        items = list(pool.map(lambda ref: _judge(ref, manifest, scan, clock), refs))
    items.sort(key=lambda item: item.path)
    return manifest._replace(items=tuple(items))


def _judge(ref: FileRef, window: Manifest, scan: ContentScanner, now: int) -> ManifestItem:
    """The verdict on one file for the window (and settings) of ``window``."""
    info = ref.info or parse_wal_path(ref.path)
    item = ManifestItem(
        ref.path, False, "name", "", info.timestamp, kind=info.kind, state=info.state, size=ref.size
    )
    reason = _by_name(info, window.start, window.end, window.roll_period, window.margin)
    if reason is not None:
        return item._replace(reason=reason)
    try:
        result = scan(ref.path, window.start, window.end, window.end + window.margin)
    except (HBaseMigrateError, OSError) as exc:
        log.warning("cannot scan %s: %s", ref.path, exc)
        error = str(exc) or type(exc).__name__
        reason = f"needs attention: cannot read the file ({error})"
        return item._replace(included=True, stage="content", reason=reason, error=error)
    included, reason = _by_content(result, info, window.end, now)
    return item._replace(
        included=included,
        stage="content",
        reason=reason,
        first_write_time=result.first_write_time,
        last_write_time=result.last_write_time,
        entries_in_window=result.entries_in_window,
    )
