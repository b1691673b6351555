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
from hbase_migrate.replay.ordering import chain_id


def chain_server(chain: str) -> str:
    """The region server of a chain id."""
    return chain.split("/", 1)[0]


def by_part(tasks: Sequence[FileTask]) -> dict[tuple[str, ...], list[FileTask]]:
    """A run's ``tasks`` (as the plan ordered them: each knows its part) grouped by part,
    each group in the tasks' order."""
    parts: dict[tuple[str, ...], list[FileTask]] = {}
    for task in tasks:
        parts.setdefault(task.part or (chain_id(task.path),), []).append(task)
    return parts


def split_parts(tasks: Sequence[FileTask]) -> list[tuple[str, ...]]:
    """The parts of a run's ``tasks``."""
    return sorted(by_part(tasks))
