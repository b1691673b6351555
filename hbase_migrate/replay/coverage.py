"""Proving that the WAL files a replay knows cover every source server since the watermark.

A region server writes one chain of WAL files per WAL group (the default group, or each
multiwal group): a file is named after its creation time and holds the edits written until
the next file of the chain was created. Between two consecutive files the ledger knows
(listed now or earlier, replayed, skipped or vanished), a file may have been created and
deleted unseen: HBase archives any WAL whose regions are all flushed, not only the oldest
(``AbstractFSWAL.cleanOldLogs``), so a quiet region's unflushed edit can keep an old file
while the files after it are archived and cleaned. Each stretch of a chain is judged by the
first rule that decides it:

* **watched**: every file that appeared in the stretch was listed (:class:`Evidence`, from
  :meth:`Ledger.record_listing`; what each listing proves, and what it rests on, is said
  there);
* **replication queue**: a source peer's queue holds every file of the server from its
  oldest queued one on; the stretch is whole when that is at or before it (and every queued
  name is known: :func:`queued_missing`);
* **roll period**: HBase rolls every chain at least once per
  ``hbase.regionserver.logroll.period``, even when it is idle (``AbstractWALRoller``), checked
  every ``hbase.server.thread.wakefrequency`` (10 s); two known files further apart than one
  period plus a slack (``min(10 s, 0.9 period)``) prove a missing file;
* otherwise the stretch is **unproven**: files closer than a roll period may still have been
  created (a roll by size or by request) and deleted unseen. It is reported as a gap too,
  saying what would prove it (listings closer than the archive TTL, a replication peer).

The chain's head: it starts at its *anchor*, the file the server was writing when the
watermark was fixed (:func:`fix_watermark` records one per chain the watermark's listing found
live). That listing can run seconds after the watermark on a busy machine, long enough for the
file of ``T0`` to be rolled, archived and cleaned: the chain's anchor then names no file, and
the chain must still prove its head (below) instead of being taken as one that had no file at
``T0``. A chain with no anchor started after the watermark, or the migration predates anchors
(or a window replay): a server started before ``since`` must have a known file created at or
before ``since``; a server started after it must have its first file known (made within
seconds of its start: :data:`FIRST_WAL_DELAY_MS`), unless the listings watched its start.

Every stretch proven by listings is read in *appearance* time, and holds whatever the delays:
HBase names a file with the clock (``AbstractFSWAL.computeFilename``) before it creates it,
which on HDFS can take seconds, but rolls of one chain run one at a time under the roll lock
(``rollWriter``), so a file of the chain named after ``a`` appears after ``a``'s name time and
no later than the next file's name time. What one listing proves, and the facts of HBase it
rests on, is in :class:`Evidence`.

What cannot be proven is a :class:`MissingSpan` (server, group, time span, rule), recorded as
a ``missing`` gap. The hbase:meta WAL is not checked (it carries no user table edits), nor are
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
from hbase_migrate.audit.records import AnchorRecord, ChainHead, WalFileRecord
from hbase_migrate.cluster.storage.walstore import WalFileStatus
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
# A region server makes its first WAL at its first region open or its first report to the
# master (hbase.regionserver.msginterval, 3 s), whichever is first: 5.6 s after the start
# code on HBase 2.6.1, 7.5 s on 1.4.13. A file this close to the start is taken as the first.
FIRST_WAL_DELAY_MS = 10_000


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


UNPROVEN = "unproven"  # the first word of a span's detail when no rule decides it


@dataclass(frozen=True)
class MissingSpan:
    """Edits of one chain from ``first_time`` to ``last_time`` that no known file holds
    (``detail`` says which rule found it, or that no rule proves the chain whole there)."""

    server: str
    group: str
    first_time: int
    last_time: int
    detail: str

    @property
    def proven(self) -> bool:
        """Whether a file is known to be missing (else coverage is only unproven)."""
        return not self.detail.startswith(UNPROVEN)


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
        def when(ms: int | None) -> str:
            return "unknown" if ms is None else format_time(ms)

        unproven = (self.detail or "").startswith(UNPROVEN)
        what = (f"WAL file {self.path} of server {self.server} vanished before it was "
                f"replayed" if self.path else
                f"WAL files of server {self.server} "
                f"{'may be' if unproven else 'are'} missing ({self.detail})")
        lost = "may be lost" if unproven else "are lost"
        return (f"gap: {what}; edits from {when(self.first_time)} to {when(self.last_time)} "
                f"{lost} for the target; remedy: {self.remedy}")


class _Link(NamedTuple):
    name: str
    name_time: int
    last_write_time: int | None


_FOREVER = 1 << 62  # an open end of a stretch


@dataclass(frozen=True)
class Evidence:
    """What proves a chain whole besides its files: what the listings saw (``watched``,
    ``heads``), the creation time of the oldest file a replication peer queues per chain
    (``queued_from``), and the roll period.

    A listing reads each server's live folder (``WALs/<server>/``), then ``oldWALs/``, from
    ``started`` to ``ended``. What it proves rests on four facts of HBase, each true
    whatever the delays between a file's name, its creation and a listing's steps:

    1. A file lives at least the archive TTL after it appeared: it is archived once closed,
       and the log cleaner deletes an archived file only when its modification time (its
       close, at or after its creation) is older than the TTL (``TimeToLiveLogCleaner``, by
       ``BaseTimeToLiveFileCleaner.isFileDeletable``).
    2. A chain's files appear in name order, one roll at a time: ``AbstractFSWAL.rollWriter``
       holds ``rollWriterLock`` while it names the next file with the clock
       (``getNewPath``, ``computeFilename``) and creates it (``createWriterInstance``), so
       a file appears at or after its name time and no later than the next file's name
       time. (On HDFS the creation can take seconds: name times alone say nothing of when
       a listing could see a file.)
    3. The live folder always holds the file the server writes (HBase never archives it).
    4. A file is moved from the live folder to ``oldWALs/``, never back, and the listing
       reads the live folders first.

    So a listing saw every file that appeared in ``[ended - ttl, started]`` (1, 4: it was
    there throughout; ``watched``). Per live chain, through the newest file it saw in the
    live folder, the head (:class:`ChainHead`): a file older than the head appeared before
    the folder was read (2), so it was seen unless it appeared before ``ended - ttl`` (1, 4);
    and a file newer than the head had not appeared when the folder was read (3), after
    ``started``. Nothing is assumed of files that appear while a listing runs."""

    roll_period: int
    watched: Sequence[tuple[int, int]] = ()
    queued_from: Mapping[ChainKey, int] | None = None
    archive_ttl: int | None = None  # for the advice in an unproven span
    heads: Mapping[ChainKey, Sequence[ChainHead]] | None = None

    def watched_over(self, key: ChainKey, first: int, last: int) -> bool:
        """Whether every file of chain ``key`` named strictly between ``first`` and ``last``
        (each a file's name time, or ``first`` a server's start) was listed: such a file
        appeared in ``(first, last]`` (2), widened by the clock difference between the
        server and us (:data:`WRITE_TIME_SKEW_MS`). What appeared after the newest listing
        began is judged by the next one (every run judges every stretch again, and a file
        that lived less than the TTL before it is a hole in what that listing proves)."""
        stretches = list(self.watched)
        for head in (self.heads or {}).get(key, ()):
            if head.head_time >= last:  # every such file is older than the head
                stretches.append((head.older_seen_from, _FOREVER))
            if head.head_time <= first:  # every such file is newer than the head
                stretches.append((-_FOREVER, head.newer_after))
        newest = max([seen_to for _, seen_to in self.watched]
                     + [h.newer_after for h in (self.heads or {}).get(key, ())], default=None)
        if newest is None:
            return False
        lo = first + 1 - WRITE_TIME_SKEW_MS
        hi = min(last - 1 + WRITE_TIME_SKEW_MS, newest)
        for seen_from, seen_to in sorted(stretches):
            if seen_from > lo:
                return False
            if seen_to >= lo:
                lo = seen_to + 1
            if lo > hi:
                return True
        return lo > hi

    def queued(self, key: ChainKey, at: int) -> bool:
        oldest = (self.queued_from or {}).get(key)
        return oldest is not None and oldest <= at

    def advice(self) -> str:
        ttl = "" if self.archive_ttl is None else f" ({format_duration(self.archive_ttl)})"
        return (f"list the source's WALs more often than the archive TTL{ttl} while the "
                "migration runs (replay --follow or the WAL watch, from the snapshot on), "
                "or keep them with a disabled replication peer")


def find_missing(files: Iterable[tuple[str, int | None, int | None]],
                 anchors: Sequence[AnchorRecord], *, since: int, until: int | None,
                 roll_period: int, now: int, evidence: Evidence | None = None
                 ) -> list[MissingSpan]:
    """The stretches of ``[since, until or now)`` no known file covers, or that no rule
    proves whole.

    ``files`` are (path, name time, newest replayed write time) of every file ever seen.
    """
    proof = evidence or Evidence(roll_period)
    chains: dict[ChainKey, dict[str, _Link]] = defaultdict(dict)
    for path, name_time, last_write_time in files:
        key = chain_key(path)
        if key is not None and name_time is not None:
            name = posixpath.basename(path)
            chains[key][name] = _Link(name, name_time, last_write_time)
    anchored = {ChainKey(a.server, a.wal_group): a for a in anchors}
    end = now if until is None else min(until, now)
    spans: list[MissingSpan] = []
    for key in sorted(set(chains) | set(anchored)):
        links = sorted(chains.get(key, {}).values(), key=lambda link: link.name_time)
        links, head = _head(key, links, anchored.get(key), bool(anchors), since, end, proof)
        spans.extend(head)
        for a, b in pairwise(links):
            if b.name_time <= since or a.name_time >= end:
                continue
            span = _link(key, a, b, since, proof)
            if span is not None:
                spans.append(span)
    return spans


def _link(key: ChainKey, a: _Link, b: _Link, since: int, proof: Evidence
          ) -> MissingSpan | None:
    """The stretch between two consecutive known files, when no rule proves it whole."""
    if proof.watched_over(key, a.name_time, b.name_time) or proof.queued(key, a.name_time):
        return None
    apart = b.name_time - a.name_time
    first = max(since, (a.last_write_time or a.name_time) - WRITE_TIME_SKEW_MS)
    last = b.name_time + WRITE_TIME_SKEW_MS
    if apart > proof.roll_period + roll_slack(proof.roll_period):
        return MissingSpan(
            key.server, key.group, first, last,
            f"rule roll period: no WAL file between {a.name} and {b.name}, created "
            f"{format_duration(apart)} apart (roll period "
            f"{format_duration(proof.roll_period)}): files rolled and deleted between two "
            "listings")
    return MissingSpan(
        key.server, key.group, first, last,
        f"{UNPROVEN}: no listing watched the stretch between {a.name} and {b.name} "
        f"(created {format_duration(apart)} apart), so a file rolled and deleted in "
        f"between cannot be ruled out; {proof.advice()}")


def _head(key: ChainKey, links: list[_Link], anchor: AnchorRecord | None, have_anchors: bool,
          since: int, end: int, proof: Evidence) -> tuple[list[_Link], list[MissingSpan]]:
    """The chain from where coverage must start, and a span when its start is missing."""
    if anchor is not None and anchor.path:
        return _anchored_head(key, links, anchor, since, end)
    if not links:
        return links, []  # no file of the chain is known: nothing to start from
    try:
        started = ServerName.parse(key.server).start_code
    except ValueError:
        started = 0
    if started >= since:  # a chain started after the watermark (a new server, a restart)
        return links, _late_head(key, links[0], started, since, proof)
    if anchor is None and have_anchors:
        return links, []  # not live at the watermark's listing: a chain begun on a region open
    return _head_before(key, links, anchor, started, since, proof)


def _head_before(key: ChainKey, links: list[_Link], anchor: AnchorRecord | None, started: int,
                 since: int, proof: Evidence) -> tuple[list[_Link], list[MissingSpan]]:
    """A chain of a server started before ``since`` with no file anchor: it starts at its
    newest known file created at or before ``since``, or its head is missing."""
    before = [link for link in links if link.name_time <= since]
    if before:
        return links[len(before) - 1:], []
    first = links[0]
    if anchor is not None and key.group == "" and since - started < FIRST_WAL_DELAY_MS:
        # it may have had no file yet at the watermark: its first file must be known
        return links, _late_head(key, first, started, since, proof)
    if anchor is None:
        what = (f"rule head: no WAL file created at or before {format_time(since)} was "
                f"listed; the oldest known is {first.name} ({format_time(first.name_time)})")
    elif key.group == "":
        what = (f"rule anchor: the chain was live at the watermark "
                f"({format_time(anchor.watermark)}) but its listing found no file of it "
                f"created at or before then (rolled, archived and deleted before the listing "
                f"read the folders); the oldest known is {first.name} "
                f"({format_time(first.name_time)})")
    else:  # a multiwal group may have begun after the watermark, on a region open
        what = (f"{UNPROVEN}: WAL group {key.group} was live at the watermark's listing with "
                f"no file created at or before {format_time(anchor.watermark)}: it began "
                f"after the watermark or its file of then was deleted before the listing; "
                f"the oldest known is {first.name}; {proof.advice()}")
    return links, [MissingSpan(key.server, key.group, since,
                               first.name_time + WRITE_TIME_SKEW_MS, what)]


def _anchored_head(key: ChainKey, links: list[_Link], anchor: AnchorRecord, since: int,
                   end: int) -> tuple[list[_Link], list[MissingSpan]]:
    """The chain from its anchor, and a span when the anchor was never listed."""
    anchor_name = posixpath.basename(anchor.path)
    start = anchor.name_time if anchor.name_time is not None else name_timestamp(anchor_name)
    known = [link for link in links if start is None or link.name_time >= start]
    if known and known[0].name == anchor_name:
        return known, []
    upto = known[0].name_time + WRITE_TIME_SKEW_MS if known else end
    what = (f"rule anchor: the WAL file {anchor_name} it was writing at the watermark "
            f"({format_time(anchor.watermark)}) was never listed")
    return known, [MissingSpan(key.server, key.group, since, upto, what)]


def _late_head(key: ChainKey, first: _Link, started: int, since: int, proof: Evidence
               ) -> list[MissingSpan]:
    """A server started after ``since``: its chain begins with the file it made soon after
    it started (:data:`FIRST_WAL_DELAY_MS`), unless the listings watched its start; from
    there it rolled at least once per roll period."""
    after = first.name_time - started
    if after <= FIRST_WAL_DELAY_MS or proof.watched_over(key, started, first.name_time):
        return []
    said = (f"the server started at {format_time(started)}, after {format_time(since)}, "
            f"and the oldest known file of its chain, {first.name}, was created "
            f"{format_duration(after)} later")
    last = first.name_time + WRITE_TIME_SKEW_MS
    if after > FIRST_WAL_DELAY_MS + proof.roll_period + roll_slack(proof.roll_period):
        return [MissingSpan(key.server, key.group, started, last,
                            f"rule roll period: {said}: its first files were rolled and "
                            f"deleted unseen (roll period {format_duration(proof.roll_period)})")]
    return [MissingSpan(key.server, key.group, started, last,
                        f"{UNPROVEN}: {said}; no listing watched that stretch, so earlier "
                        f"files may have been deleted unseen; {proof.advice()}")]


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


def anchors_of(listed: Iterable[WalFileStatus], at: int
               ) -> dict[ChainKey, WalFileStatus | None]:
    """The file each live chain was writing at time ``at``: its newest file created at or
    before ``at`` (archived since, if the chain rolled meanwhile); None for a live chain
    none of whose listed files is that old (see :func:`_head`)."""
    files = [(key, f) for f in listed
             if (key := chain_key(f.relpath)) is not None and f.timestamp is not None]
    found: dict[ChainKey, WalFileStatus | None] = {
        key: None for key, f in files if f.state == "live"}
    for key, f in files:
        have = found.get(key)
        newer = have is None or (have.timestamp or 0) < (f.timestamp or 0)
        if key in found and (f.timestamp or 0) <= at and newer:
            found[key] = f
    return found


def live_heads(listed: Iterable[WalFileStatus]) -> dict[tuple[str, str], int]:
    """Per live chain (server, group), the name time of its newest file in ``WALs/``: the
    chain's head (:class:`Evidence`, :meth:`Ledger.record_listing`)."""
    heads: dict[tuple[str, str], int] = {}
    for f in listed:
        key = chain_key(f.relpath)
        if key is not None and f.state == "live" and f.timestamp is not None:
            heads[key] = max(f.timestamp, heads.get(key, 0))
    return heads


def known_files(rows: Iterable[WalFileRecord]) -> list[tuple[str, int | None, int | None]]:
    return [(r.path, r.name_time, r.last_write_time) for r in rows]


def queued_from(view: ReplicationView) -> dict[ChainKey, int]:
    """Per chain, the creation time of the oldest file any replication peer queues: the
    queue holds every file of the chain from there on (a roll adds the new file to every
    queue before it is written)."""
    oldest: dict[ChainKey, int] = {}
    for wals in view.queued.values():
        for name in wals:
            key, created = chain_key(name), name_timestamp(name)
            if key is not None and created is not None:
                oldest[key] = min(created, oldest.get(key, created))
    return oldest


def check_coverage(ledger: Ledger, migration_id: int, since: int, until: int | None,
                   roll_period: int, view: ReplicationView | None,
                   stream: str = SOURCE, archive_ttl: int | None = None) -> list[Gap]:
    """Record every stretch since ``since`` the source's known files (those of ``stream``)
    do not cover, or that no rule proves whole, as a ``missing`` gap; returns the gaps new
    to the ledger."""
    now = now_ms()
    rows = ledger.wal_files(migration_id, stream)
    heads = {ChainKey(*chain): found
             for chain, found in ledger.heads(migration_id, stream).items()}
    evidence = Evidence(roll_period, ledger.watched(migration_id, stream),
                        None if view is None else queued_from(view), archive_ttl, heads)
    spans = find_missing(known_files(rows), ledger.anchors(migration_id), since=since,
                         until=until, roll_period=roll_period, now=now, evidence=evidence)
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
