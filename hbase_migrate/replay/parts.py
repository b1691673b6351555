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

from hbase_migrate.replay.job import FileOutcome, FileTask
from hbase_migrate.replay.ordering import chain_id


def chain_server(chain: str) -> str:
    """The region server of a chain id."""
    return chain.split("/", 1)[0]


def part_of(task: FileTask) -> tuple[str, ...]:
    """The chains of ``task``'s part (its own chain before the plan ordered it)."""
    return task.part or (chain_id(task.path),)


class HeldBack:
    """The parts of a run that begin no further file: once a file of a part failed in a way
    the next run retries (its ``retry``), the files after it would apply later edits first,
    and the retry would then write older values over them (the same cell rewritten at one
    timestamp). They wait for the next run, which begins at the failed file."""

    def __init__(self) -> None:
        self.chains: set[str] = set()

    def holds(self, task: FileTask) -> bool:
        return not self.chains.isdisjoint(part_of(task))

    def note(self, task: FileTask, outcome: FileOutcome) -> None:
        if outcome.error is not None and outcome.retry:
            self.chains.update(part_of(task))


def by_part(tasks: Sequence[FileTask]) -> dict[tuple[str, ...], list[FileTask]]:
    """A run's ``tasks`` (as the plan ordered them: each knows its part) grouped by part,
    each group in the tasks' order."""
    parts: dict[tuple[str, ...], list[FileTask]] = {}
    for task in tasks:
        parts.setdefault(part_of(task), []).append(task)
    return parts


def split_parts(tasks: Sequence[FileTask]) -> list[tuple[str, ...]]:
    """The parts of a run's ``tasks``."""
    return sorted(by_part(tasks))
