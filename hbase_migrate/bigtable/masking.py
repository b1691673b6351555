"""No resurrection: the HBase delete markers a replay has met, so that a put they mask is
not made visible on Bigtable.

HBase keeps a delete marker until a major compaction and hides every put it covers,
whichever arrived first. Bigtable keeps no tombstones: a delete removes the cells present,
and an older-timestamped put written afterwards is visible. A replay therefore remembers the
markers of the edits it applied, in WAL order, and drops a put one of them covers:

* ``DeleteColumn`` at ``ts``: the column's puts with a timestamp ``<= ts``;
* ``DeleteFamily`` at ``ts``: the family's puts ``<= ts``;
* ``Delete`` at ``ts``: the column's put at exactly ``ts``;
* ``DeleteFamilyVersion`` at ``ts``: the family's puts at exactly ``ts``.

Puts that came before the marker are removed on Bigtable by the delete itself
(:mod:`.writer`). The memory lives as long as the process, shared by the instance's clients
(:mod:`.losses`); a replay run first meets again the markers earlier runs applied
(:mod:`hbase_migrate.replay.recall`). Markers are kept per row: the newest ``<=`` bound per
column and family, and the exact versions.
"""

from __future__ import annotations

from collections import Counter

from hbase_migrate.wal.model import Cell, CellType

Column = tuple[str, bytes, bytes, bytes]  # table, row, family, qualifier


class MarkerMemory:
    """The delete markers seen so far, by table and row; ``masked`` counts the puts
    dropped, by table."""

    def __init__(self) -> None:
        self._upto: dict[Column, int] = {}
        self._family_upto: dict[tuple[str, bytes, bytes], int] = {}
        self._versions: set[tuple[Column, int]] = set()
        self._family_versions: set[tuple[str, bytes, bytes, int]] = set()
        self.masked: Counter[str] = Counter()

    def note(self, table: str, cell: Cell) -> None:
        """Remember ``cell`` if it is a delete marker."""
        column = (table, cell.row, cell.family, cell.qualifier)
        ts = cell.timestamp
        if cell.type == CellType.DELETE_COLUMN:
            self._upto[column] = max(ts, self._upto.get(column, ts))
        elif cell.type == CellType.DELETE_FAMILY:
            key = (table, cell.row, cell.family)
            self._family_upto[key] = max(ts, self._family_upto.get(key, ts))
        elif cell.type == CellType.DELETE:
            self._versions.add((column, ts))
        elif cell.type == CellType.DELETE_FAMILY_VERSION:
            self._family_versions.add((table, cell.row, cell.family, ts))

    def masks(self, table: str, cell: Cell) -> bool:
        """Whether a marker seen earlier hides the put ``cell`` (counted when it does)."""
        column = (table, cell.row, cell.family, cell.qualifier)
        ts = cell.timestamp
        hidden = (ts <= self._upto.get(column, -1)
                  or ts <= self._family_upto.get((table, cell.row, cell.family), -1)
                  or (column, ts) in self._versions
                  or (table, cell.row, cell.family, ts) in self._family_versions)
        if hidden:
            self.masked[table] += 1
        return hidden
