"""A catch-up split into parts that can run (and be retried) on their own: one part per WAL
chain of the source (a region server and its WAL group), except that chains a region move
ties together stay in one part.

Files of one chain are replayed in order; across chains order matters only where a region
moved (the same cell with the same timestamp written on both servers: the older file first,
:mod:`hbase_migrate.replay.ordering`), so chains whose files are tied by such a move form
one part. A part is a sorted tuple of chain ids (``server`` for the default group,
``server/group`` otherwise; the hbase:meta WAL is ``server/meta``); a run restricted to a
part (``ReplayJob.chains``) plans only those chains' files and answers only for their gaps.
"""

from __future__ import annotations

from collections.abc import Sequence

from hbase_migrate.replay.job import FileTask
from hbase_migrate.replay.ordering import Scanner, read_region_events, region_ties
from hbase_migrate.wal.names import parse_wal_path


def chain_id(path: str) -> str:
    """The chain a WAL file belongs to."""
    info = parse_wal_path(path)
    server = str(info.server or info.dir_server or "unknown")
    group = "meta" if info.meta else (info.group or "")
    return f"{server}/{group}" if group else server


def chain_server(chain: str) -> str:
    """The region server of a chain id."""
    return chain.split("/", 1)[0]


def split_parts(tasks: Sequence[FileTask], scan: Scanner = read_region_events
                ) -> list[tuple[str, ...]]:
    """The parts of a run's ``tasks``: their chains, those tied by a region move joined."""
    parent = {c: c for c in (chain_id(t.path) for t in tasks)}

    def root(c: str) -> str:
        while parent[c] != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    chains = [chain_id(t.path) for t in tasks]
    for x, followers in enumerate(region_ties(tasks, scan)):
        for y in followers:
            parent[root(chains[x])] = root(chains[y])
    parts: dict[str, list[str]] = {}
    for c in parent:
        parts.setdefault(root(c), []).append(c)
    return sorted(tuple(sorted(p)) for p in parts.values())
