"""HBase cells as Bigtable mutations, in order, with HBase's delete semantics.

Timestamps: HBase's milliseconds become Bigtable's microseconds (``ms * 1000``; Bigtable
takes whole milliseconds only). A ``Put`` is a ``SetCell``; ``Delete`` (one version) is a
delete of the column's range ``[ts, ts + 1 ms)``; ``DeleteColumn`` of ``[0, ts + 1 ms)``.
Bigtable has no family delete bounded by time, so ``DeleteFamily`` and
``DeleteFamilyVersion`` are carried out by reading the row's family first and deleting
the range of each column it holds, or that a put queued before the delete writes. A put
that an earlier marker masks is dropped (:mod:`.masking`).

Requests: one ``MutateRows`` holds at most one entry per row (so a row's mutations keep
their order) and at most :data:`MAX_MUTATIONS` mutations (Bigtable's limit); a row with
more is sent as consecutive requests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from hbase_migrate.bigtable.masking import MarkerMemory
from hbase_migrate.wal.model import Cell, CellType

MAX_MUTATIONS = 100_000  # mutations in one request (Bigtable's limit)
MS = 1000  # microseconds in a millisecond

# (family, qualifier) -> timestamps in ms of the row's cells in that family
RowReader = Callable[[bytes, bytes], dict[bytes, list[int]]]
Send = Callable[[list[tuple[bytes, list[Any]]]], None]


class MutationBatcher:
    """Turns one table's cells into requests: ``send`` gets ``[(row, mutations)]``, one
    entry per row; ``read_family`` reads what a row holds in a family (for the family
    deletes). ``family_id`` names a family in Bigtable."""

    def __init__(self, table: str, send: Send, read_family: RowReader,
                 memory: MarkerMemory, limit: int = MAX_MUTATIONS) -> None:
        self.table, self.send, self.read_family = table, send, read_family
        self.memory, self.limit = memory, limit
        self.entries: dict[bytes, list[Any]] = {}
        self.count = 0
        self.calls = 0

    def add(self, cells: Iterable[Cell]) -> int:
        """Queue ``cells`` in order and send them; the requests made."""
        from google.cloud.bigtable.data import mutations as m

        for cell in cells:
            family = cell.family.decode("ascii")
            ts = cell.timestamp * MS
            if cell.type == CellType.PUT:
                if not self.memory.masks(self.table, cell):
                    self._queue(cell.row, m.SetCell(family, cell.qualifier, cell.value, ts))
                continue
            self.memory.note(self.table, cell)
            if cell.type == CellType.DELETE:
                self._queue(cell.row, m.DeleteRangeFromColumn(family, cell.qualifier,
                                                              ts, ts + MS))
            elif cell.type == CellType.DELETE_COLUMN:
                self._queue(cell.row, m.DeleteRangeFromColumn(family, cell.qualifier,
                                                              None, ts + MS))
            else:  # the family deletes: what the row holds, and what is on its way to it
                exact = cell.type == CellType.DELETE_FAMILY_VERSION
                held = self.read_family(cell.row, cell.family)
                for pending in self.entries.get(cell.row, ()):
                    if isinstance(pending, m.SetCell) and pending.family == family:
                        held.setdefault(pending.qualifier, []).append(
                            pending.timestamp_micros // MS)
                for qualifier, stamps in held.items():
                    if exact and cell.timestamp in stamps:
                        self._queue(cell.row, m.DeleteRangeFromColumn(family, qualifier,
                                                                      ts, ts + MS))
                    elif not exact and min(stamps) <= cell.timestamp:
                        self._queue(cell.row, m.DeleteRangeFromColumn(family, qualifier,
                                                                      None, ts + MS))
        self.flush()
        return self.calls

    def _queue(self, row: bytes, mutation: Any) -> None:
        if self.count >= self.limit:
            self.flush()
        self.entries.setdefault(row, []).append(mutation)
        self.count += 1

    def flush(self) -> None:
        if self.entries:
            self.send(list(self.entries.items()))
            self.calls += 1
            self.entries, self.count = {}, 0
