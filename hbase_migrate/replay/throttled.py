"""A replay target paced by the step's ``replay_cells_per_second``: a batch is sent in
parts of about a quarter second's worth of cells (split between row mutations, in order),
each part taken from the task's throttle before it is written; the adaptive mode times the
writes. Acknowledgement is unchanged: :meth:`apply` returns once every part was written."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from hbase_migrate.limits import Throttle
from hbase_migrate.replay.apply import AppliedCounts, ReplayTarget, WrappingTarget
from hbase_migrate.replay.mutations import RowMutation, mutation_cells


class ThrottledTarget(WrappingTarget):
    """``target`` behind ``throttle`` (closing it ends the throttle's use)."""

    def __init__(self, target: ReplayTarget, throttle: Throttle) -> None:
        super().__init__(target)
        self.throttle = throttle.__enter__()

    def apply(self, table: str, mutations: Sequence[RowMutation]) -> AppliedCounts:
        counts = AppliedCounts()
        for part in self._parts(mutations):
            self.throttle.take(mutation_cells(part))
            with self.throttle.call():
                counts.add(self.target.apply(table, part))
        return counts

    def _parts(self, mutations: Sequence[RowMutation]) -> Iterator[Sequence[RowMutation]]:
        quantum = self.throttle.quantum()
        if quantum is None:
            yield mutations
            return
        part: list[RowMutation] = []
        cells = 0
        for mutation in mutations:
            part.append(mutation)
            cells += len(mutation.cells)
            if cells >= quantum:
                yield part
                part, cells = [], 0
        if part:
            yield part

    def close(self) -> None:
        try:
            self.target.close()
        finally:
            self.throttle.__exit__(None, None, None)
