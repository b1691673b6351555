"""Proving that the WAL files a replay knows cover every source server since the watermark.

A region server writes one chain of WAL files per WAL group (the default group, or each
multiwal group): a file is named after its creation time and holds the edits written until
the next file of the chain was created. HBase rolls every chain at least once per roll
period (``hbase.regionserver.logroll.period``), even when it is idle, checked every
``hbase.server.thread.wakefrequency`` (10 s). So the files the ledger has ever seen (listed
now or earlier, replayed, skipped or vanished) prove coverage of a chain when:

* **head**: the chain starts at its *anchor*, the file the server was writing when the
  watermark was fixed (:func:`fix_watermark` records one per live chain). A chain with no
  anchor started after the watermark, or the migration predates anchors: then, for a
  server started before ``since``, the oldest known file must have been created at or
  before ``since``;
* **links**: two consecutive known files are at most one roll period plus a slack apart
  (``min(10 s, 0.9 roll period)``); a longer jump means files were created and deleted
  between two listings;
* **replication queues**: every WAL a source replication peer still queues is a file that
  must exist; one neither listed nor known is missing (``queued_missing``).

What cannot be proven is a :class:`MissingSpan` (server, group, time span), recorded as a
``missing`` gap. The hbase:meta WAL is not checked (it carries no user table edits), nor are
identity-strategy multiwal groups (one chain per region: it stops when the region moves).
"""

from __future__ import annotations

import logging
import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import NamedTuple

from hbase_migrate.audit.ledger import DEFAULT_GAP_REMEDY, Ledger, now_ms
from hbase_migrate.audit.records import AnchorRecord, WalFileRecord
from hbase_migrate.cluster.storage.walstore import WalFileStatus, WalStore
from hbase_migrate.replay.retention import ReplicationView
from hbase_migrate.timeutil import format_duration, format_time
from hbase_migrate.wal.names import ServerName, name_timestamp, parse_wal_path

log = logging.getLogger(__name__)

SOURCE = "source"
WAKE_FREQUENCY_MS = 10_000  # hbase.server.thread.wakefrequency: how late a periodic roll runs
# Write times in one file can run behind file order (a WAL key gets its write time before
# the edit is appended), so a lost file's edits may predate its name by a little.
WRITE_TIME_SKEW_MS = 1_000
_REGION_GROUP = re.compile(r"[0-9a-f]{32}")


def roll_slack(roll_period: int) -> int:
    """How much later than the roll period the next file of a chain may be created: the
    roller's wake-up interval, but below one more period, so that a single missing file (a
    jump of two periods) still shows."""
    return min(WAKE_FREQUENCY_MS, roll_period * 9 // 10)


class ChainKey(NamedTuple):
    """One WAL chain: a server and its WAL group ('' for the default group)."""

    server: str
    group: str


def chain_key(path: str) -> ChainKey | None:
    """The chain of a region server WAL path; None for files no chain check applies to."""
    info = parse_wal_path(path)
    if info.kind != "wal" or info.server is None or info.timestamp is None:
        return None
    group = info.group or ""
    if _REGION_GROUP.fullmatch(group):
        return None
    return ChainKey(str(info.server), group)


@dataclass(frozen=True)
class MissingSpan:
    """Edits of one chain from ``first_time`` to ``last_time`` that no known file holds."""

    server: str
    group: str
    first_time: int
    last_time: int
    detail: str


@dataclass(frozen=True)
class Gap:
    """Edits lost for the target: a WAL file (``path``) that vanished before it was
    replayed, or a stretch of a server's WAL chain that no listing saw (``detail`` says
    what was expected)."""

    path: str | None
    server: str
    first_time: int | None
    last_time: int | None
    remedy: str
    detail: str | None = None

    def describe(self) -> str:
        from hbase_migrate.timeutil import format_time

        def when(ms: int | None) -> str:
            return "unknown" if ms is None else format_time(ms)

        what = (f"WAL file {self.path} of server {self.server} vanished before it was "
                f"replayed" if self.path else
                f"WAL files of server {self.server} are missing ({self.detail})")
        return (f"gap: {what}; edits from {when(self.first_time)} to {when(self.last_time)} "
                f"are lost for the target; remedy: {self.remedy}")


class _Link(NamedTuple):
    name: str
    name_time: int
    last_write_time: int | None


def find_missing(files: Iterable[tuple[str, int | None, int | None]],
                 anchors: Sequence[AnchorRecord], *, since: int, until: int | None,
                 roll_period: int, now: int) -> list[MissingSpan]:
    """The stretches of ``[since, until or now)`` no known file covers.

    ``files`` are (path, name time, newest replayed write time) of every file ever seen.
    """
    chains: dict[ChainKey, dict[str, _Link]] = defaultdict(dict)
    for path, name_time, last_write_time in files:
        key = chain_key(path)
        if key is not None and name_time is not None:
            name = posixpath.basename(path)
            chains[key][name] = _Link(name, name_time, last_write_time)
    anchored = {ChainKey(a.server, a.wal_group): a for a in anchors}
    end = now if until is None else min(until, now)
    slack = roll_slack(roll_period)
    spans: list[MissingSpan] = []
    for key in sorted(set(chains) | set(anchored)):
        links = sorted(chains.get(key, {}).values(), key=lambda link: link.name_time)
        links, head = _head(key, links, anchored.get(key), bool(anchors), since, end)
        spans.extend(head)
        for a, b in pairwise(links):
            if b.name_time <= since or a.name_time >= end:
                continue
            if b.name_time - a.name_time > roll_period + slack:
                first = max(since, (a.last_write_time or a.name_time) - WRITE_TIME_SKEW_MS)
                spans.append(MissingSpan(
                    key.server, key.group, first, b.name_time + WRITE_TIME_SKEW_MS,
                    f"no WAL file between {a.name} and {b.name}, created "
                    f"{format_duration(b.name_time - a.name_time)} apart (roll period "
                    f"{format_duration(roll_period)}): files rolled and deleted between two "
                    "listings"))
    return spans


def _head(key: ChainKey, links: list[_Link], anchor: AnchorRecord | None, have_anchors: bool,
          since: int, end: int) -> tuple[list[_Link], list[MissingSpan]]:
    """The chain from where coverage must start, and a span when its start is missing."""
    if anchor is not None and anchor.path:
        anchor_name = posixpath.basename(anchor.path)
        start = anchor.name_time if anchor.name_time is not None else name_timestamp(anchor_name)
        known = [link for link in links if start is None or link.name_time >= start]
        if known and known[0].name == anchor_name:
            return known, []
        upto = known[0].name_time + WRITE_TIME_SKEW_MS if known else end
        what = (f"the WAL file {anchor_name} it was writing at the watermark "
                f"({format_time(anchor.watermark)}) was never listed")
        return known, [MissingSpan(key.server, key.group, since, upto, what)]
    if anchor is not None or have_anchors or not links:
        return links, []  # no file at the watermark, or a chain started after it
    try:
        started = ServerName.parse(key.server).start_code
    except ValueError:
        started = 0
    if started >= since:
        return links, []
    before = [link for link in links if link.name_time <= since]
    if before:
        return links[len(before) - 1:], []
    first = links[0]
    what = (f"no WAL file created at or before {format_time(since)} was listed; the oldest "
            f"known is {first.name} ({format_time(first.name_time)})")
    return links, [MissingSpan(key.server, key.group, since,
                               first.name_time + WRITE_TIME_SKEW_MS, what)]


def queued_missing(queues: Mapping[str, Iterable[str]], known_names: set[str], *,
                   since: int) -> list[MissingSpan]:
    """WAL names a replication peer still queues (server -> names) that no listing saw."""
    spans = []
    for server, names in sorted(queues.items()):
        for name in sorted(set(names) - known_names):
            key = chain_key(name)
            created = name_timestamp(name)
            if key is None or created is None:
                continue
            spans.append(MissingSpan(
                key.server, key.group, max(since, created - WRITE_TIME_SKEW_MS),
                now_ms(), f"WAL file {name} is in a replication queue of {server} but in "
                "neither WALs/ nor oldWALs/"))
    return spans


def anchors_of(listed: Iterable[WalFileStatus], at: int) -> dict[ChainKey, WalFileStatus]:
    """The file each live chain was writing at time ``at``: its newest file created at or
    before ``at`` (archived since, if the chain rolled meanwhile)."""
    files = [(key, f) for f in listed
             if (key := chain_key(f.relpath)) is not None and f.timestamp is not None]
    live = {key for key, f in files if f.state == "live"}
    found: dict[ChainKey, WalFileStatus] = {}
    for key, f in files:
        newer = key not in found or (found[key].timestamp or 0) < (f.timestamp or 0)
        if key in live and (f.timestamp or 0) <= at and newer:
            found[key] = f
    return found


def record_anchors(ledger: Ledger, migration_id: int, store: WalStore, watermark: int) -> int:
    """Record the file each live chain was writing at ``watermark``; returns how many."""
    found = anchors_of(store.list_wal_files(), watermark)
    for key, f in found.items():
        ledger.record_anchor(migration_id, key.server, key.group, f.path, f.timestamp,
                             watermark)
    return len(found)


def known_files(rows: Iterable[WalFileRecord]) -> list[tuple[str, int | None, int | None]]:
    return [(r.path, r.name_time, r.last_write_time) for r in rows]


def check_coverage(ledger: Ledger, migration_id: int, since: int, until: int | None,
                   roll_period: int, view: ReplicationView | None,
                   stream: str = SOURCE) -> list[Gap]:
    """Record every stretch since ``since`` the source's known files (those of ``stream``)
    do not cover as a ``missing`` gap; returns the gaps new to the ledger."""
    now = now_ms()
    rows = ledger.wal_files(migration_id, stream)
    spans = find_missing(known_files(rows), ledger.anchors(migration_id), since=since,
                         until=until, roll_period=roll_period, now=now)
    if view is not None:
        known = {posixpath.basename(r.path) for r in rows}
        spans += queued_missing(view.queued_names(), known, since=since)
    gaps = []
    for span in spans:
        gap_id = ledger.record_missing_gap(migration_id, span.server, span.group,
                                           span.first_time, span.last_time, span.detail,
                                           now=now)
        if gap_id is not None:
            gap = Gap(None, span.server, span.first_time, span.last_time, DEFAULT_GAP_REMEDY,
                      span.detail)
            log.error("%s", gap.describe())
            gaps.append(gap)
    return gaps
