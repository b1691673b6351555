"""The order of a replay run's files: each WAL chain's in order, and a region that moved
between servers.

The same cell with the same timestamp may be written twice with different values; the target
must end with the later one, so the file holding the later write is replayed after the
other. Within one chain (a region server and its WAL group) that is the chain's own order:
a roll between the two writes puts them in consecutive files, applied in file order. Across
chains it is a region move. When region R moves from
server A to server B, the same cell with the same timestamp may be written in A's file
(before the move) and again in B's file (after it) with another value or type; the target
must end with the later one. HBase writes a REGION_OPEN marker in B's file, and a region's
sequence ids keep increasing across the move: every edit R received before it opened on B
has a lower sequence id than the open.

The rules: the files of one chain keep the plan's order (by creation time); and when file Y
holds a REGION_OPEN marker of region R at sequence id ``s``, every
other file holding an entry of R with a sequence id below ``s`` is replayed before Y. This
covers a clean move (A's file holds R's edits and its REGION_CLOSE, all below ``s``) and a
move after a crash, where A's file holds no REGION_CLOSE. Only the part of a file a task
replays (from its start offset) counts. The result is a stable topological order: among
the files these edges leave free, the order given (the plan's) is kept. A cycle (a region
that moved back while an older file of its first server was still being written) cannot be
honoured file by file: the given order is kept and a warning logged. A file that cannot be
read keeps its place; the replay reports its error.
"""

from __future__ import annotations

import heapq
import logging
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import NamedTuple

from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.replay.job import FileTask
from hbase_migrate.wal import markers as M
from hbase_migrate.wal.model import METAFAMILY, Entry
from hbase_migrate.wal.names import parse_wal_path

log = logging.getLogger(__name__)


UNKNOWN_CHAIN = "unknown"


def chain_id(path: str) -> str:
    """The chain a WAL file belongs to: ``server`` for the default group, ``server/group``
    otherwise; the hbase:meta WAL is ``server/meta``."""
    info = parse_wal_path(path)
    server = str(info.server or info.dir_server or UNKNOWN_CHAIN)
    group = "meta" if info.meta else (info.group or "")
    return f"{server}/{group}" if group else server


class RegionEvents(NamedTuple):
    """What one file holds of each region: the lowest sequence id of its entries, and the
    sequence id at which it (last) opens there. The last open is the strictest: a region
    that opened twice in one file puts every other file holding it before that file, so a
    move back and forth shows as a cycle."""

    first: dict[bytes, int]
    opens: dict[bytes, int]  # the highest REGION_OPEN sequence id of each region


Scanner = Callable[[FileTask], RegionEvents | None]


class RegionEventsReader:
    """Collects the :class:`RegionEvents` of a file's entries, one entry at a time. It
    needs an entry's key and markers alone: its readers are opened ``markers_only``."""

    def __init__(self) -> None:
        self.first: dict[bytes, int] = {}
        self.opens: dict[bytes, int] = {}

    def add(self, entry: Entry) -> None:
        region, seq = entry.key.encoded_region_name, entry.key.sequence
        first = self.first
        if seq < first.get(region, seq + 1):
            first[region] = seq
        for cell in entry.cells:
            if cell.family != METAFAMILY or not cell.qualifier.startswith(M.REGION_EVENT):
                continue
            marker = M.decode_marker(cell)
            if isinstance(marker, M.RegionEventDescriptor) and marker.event_type == M.REGION_OPEN:
                name = marker.encoded_region_name or region
                at = marker.log_sequence_number or seq
                self.opens[name] = max(at, self.opens.get(name, at))

    def stopped(self, path: str, exc: BaseException) -> RegionEvents | None:
        """What a read that failed with ``exc`` found: what came before the failure (what
        the replay applies before it stops), or None when nothing did."""
        if not self.first:
            log.debug("cannot scan %s for region events: %s", path, exc)
            return None
        log.debug("region event scan of %s stopped early: %s", path, exc)
        return self.result()

    def result(self) -> RegionEvents:
        return RegionEvents(self.first, self.opens)


READ_ERRORS = (HBaseMigrateError, OSError, ValueError)


def read_region_events(task: FileTask) -> RegionEvents | None:
    """Stream the file of ``task`` from its start offset; None when it cannot be opened.
    A file that fails part-way counts what was read before the failure (what the replay
    applies before it stops)."""
    from hbase_migrate.wal.reader import WalReader

    events = RegionEventsReader()
    try:
        with WalReader(task.path, start_offset=task.start_offset,
                       start_index=task.start_index, markers_only=True) as reader:
            for entry in reader:
                events.add(entry)
    except READ_ERRORS as exc:
        return events.stopped(task.path, exc)
    return events.result()


def order_tasks(tasks: Sequence[FileTask],
                scan: Scanner = read_region_events) -> list[FileTask]:
    """``tasks`` (in the plan's order, each chain's files by creation time) reordered so
    that a moved region's older file comes before the file where it opened again, each
    chain's files staying in order (see the module docstring); each task's ``part`` says
    the chains tied to its own by a region move."""
    after = _edges([scan(task) for task in tasks]) if len(tasks) > 1 else [set() for _ in tasks]
    chains = [chain_id(t.path) for t in tasks]
    tasks = _with_parts(tasks, chains, after)
    if not any(after):
        return tasks
    _chain_edges(chains, after)
    order = _stable_topological(after)
    if len(order) < len(tasks):
        stuck = sorted(set(range(len(tasks))) - set(order))
        log.warning("region moves between WAL files cannot be ordered file by file (a "
                    "region moved back and forth); replaying in the plan's order. Files "
                    "in or after the cycle: %s",
                    ", ".join(tasks[i].path for i in stuck))
        return tasks
    return [tasks[i] for i in order]


def _with_parts(tasks: Sequence[FileTask], chains: Sequence[str],
                after: Sequence[set[int]]) -> list[FileTask]:
    """``tasks`` (of ``chains``) with their ``part``: their chains, those tied by a region
    move joined."""
    parent = {c: c for c in chains}

    def root(c: str) -> str:
        while parent[c] != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    for x, followers in enumerate(after):
        for y in followers:
            parent[root(chains[x])] = root(chains[y])
    parts: dict[str, list[str]] = {}
    for c in parent:
        parts.setdefault(root(c), []).append(c)
    return [replace(t, part=tuple(sorted(parts[root(c)])))
            for t, c in zip(tasks, chains, strict=True)]


def _edges(events: Sequence[RegionEvents | None]) -> list[set[int]]:
    """By index, the files that must follow it: Y follows X when Y opens a region at a
    sequence id above one of X's entries of that region."""
    holders: dict[bytes, list[tuple[int, int]]] = defaultdict(list)  # region: (first, index)
    for i, ev in enumerate(events):
        for region, seq in (ev.first.items() if ev is not None else ()):
            holders[region].append((seq, i))
    after: list[set[int]] = [set() for _ in events]
    for y, ev in enumerate(events):
        for region, opened in (ev.opens.items() if ev is not None else ()):
            for seq, x in holders.get(region, ()):
                if x != y and seq < opened:
                    after[x].add(y)
    return after


def _chain_edges(chains: Sequence[str], after: list[set[int]]) -> None:
    """Add to ``after`` that each file of a known chain (``chains``, by index) follows the
    chain's file before it."""
    last: dict[str, int] = {}
    for i, chain in enumerate(chains):
        if chain == UNKNOWN_CHAIN:
            continue  # no server in its name or folder: nothing to chain it to
        if chain in last:
            after[last[chain]].add(i)
        last[chain] = i


def _stable_topological(after: Sequence[set[int]]) -> list[int]:
    """Kahn's order, the lowest ready index first; shorter than ``after`` on a cycle."""
    waiting = [0] * len(after)
    for followers in after:
        for y in followers:
            waiting[y] += 1
    ready = [i for i, n in enumerate(waiting) if n == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for y in after[i]:
            waiting[y] -= 1
            if waiting[y] == 0:
                heapq.heappush(ready, y)
    return order

