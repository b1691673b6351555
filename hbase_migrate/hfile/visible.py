"""The cells a normal (not raw) scan returns, from a region's merged store cells.

The rules of HBase's user scans, per row and family, cell by cell in scan order
(``NormalUserScanQueryMatcher.match``, ``ScanQueryMatcher.preCheck``/``checkDeleted``,
``UserScanQueryMatcher.matchColumn``, ``ScanDeleteTracker``, ``ScanWildcardColumnTracker``
in branch-2.6):

1. A cell whose timestamp is ``Long.MIN_VALUE``, or older than ``now - TTL`` while the
   family keeps no ``MIN_VERSIONS``, ends its column. A cell whose TTL tag (type 8, ms) has
   run out (``timestamp + ttl < now``) is skipped.
2. A delete marker is never returned; it is remembered when its timestamp is in the scan's
   time range, or also after it unless ``KEEP_DELETED_CELLS`` is TRUE or TTL. A
   DeleteFamily hides the family's cells at or before its timestamp, a DeleteFamilyVersion
   those at exactly its timestamp, a DeleteColumn the column's at or before it, a Delete the
   column's cell at exactly it. Markers at or before a remembered DeleteFamily are ignored,
   and so is a Delete after a DeleteColumn of the same column.
3. A cell hidden by a DeleteFamily or DeleteColumn ends its column; by the others, is
   skipped.
4. A cell after the time range is skipped; before it, ends its column.
5. Versions: the column's first ``min(VERSIONS, the scan's versions)`` cells are returned, a
   cell of the timestamp and type of the one returned before it skipped (the older
   duplicate); past them, or expired by the family TTL beyond ``MIN_VERSIONS``, the column
   ends.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from hbase_migrate.compiled import Choice
from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.wal.model import Cell, CellType

LONG_MIN = -(1 << 63)
LONG_MAX = (1 << 63) - 1
TTL_TAG_TYPE = 8  # TagType.TTL_TAG_TYPE: a cell's own TTL in ms, a big-endian long
_DELETES = frozenset({CellType.DELETE, CellType.DELETE_COLUMN, CellType.DELETE_FAMILY,
                      CellType.DELETE_FAMILY_VERSION})


@dataclass(frozen=True)
class FamilyRules:
    """What a column family's descriptor says about reads: ``ttl_ms`` None is FOREVER;
    ``keep_deleted_cells`` is FALSE, TRUE or TTL as HBase names them."""

    max_versions: int = 1
    min_versions: int = 0
    ttl_ms: int | None = None
    keep_deleted_cells: str = "FALSE"


@dataclass(frozen=True)
class ScanSpec:
    """The scan: ``[min_ts, max_ts)`` (HBase's ``TimeRange``), versions asked for, and the
    time it runs at (ms) for TTLs."""

    now_ms: int
    min_ts: int = 0
    max_ts: int = LONG_MAX
    max_versions: int = 1


@dataclass
class _Deletes:
    """``ScanDeleteTracker``: the delete markers seen so far in one row and family."""

    family_stamp: int | None = None
    family_versions: set[int] = field(default_factory=set)
    column: bytes | None = None  # the qualifier of the last column delete kept
    column_type: int = 0
    column_stamp: int = 0

    def add(self, cell: Cell) -> None:
        ts, kind = cell.timestamp, cell.type
        if self.family_stamp is not None and ts <= self.family_stamp:
            return
        if kind == CellType.DELETE_FAMILY:
            self.family_stamp = ts
        elif kind == CellType.DELETE_FAMILY_VERSION:
            self.family_versions.add(ts)
        elif not (self.column == cell.qualifier and kind < self.column_type):
            self.column, self.column_type, self.column_stamp = cell.qualifier, kind, ts

    def hides(self, cell: Cell) -> str | None:
        """``"column"`` when the cell's column ends here, ``"cell"`` when only it is hidden."""
        ts = cell.timestamp
        if self.family_stamp is not None and ts <= self.family_stamp:
            return "column"
        if ts in self.family_versions:
            return "cell"
        if self.column is not None:
            if self.column == cell.qualifier:
                if self.column_type == CellType.DELETE_COLUMN:
                    return "column"
                if ts == self.column_stamp:
                    return "cell"
            self.column = None  # an older version, or a later column: that Delete is spent
        return None


class _Store:
    """The matcher of one family, reset at each row."""

    def __init__(self, rules: FamilyRules, scan: ScanSpec) -> None:
        self.rules = rules
        self.scan = scan
        self.versions = min(rules.max_versions, scan.max_versions)
        self.oldest = LONG_MIN if rules.ttl_ms is None else scan.now_ms - rules.ttl_ms
        self.see_past_deletes = rules.keep_deleted_cells != "FALSE"
        self.reset()

    def reset(self) -> None:
        self.deletes = _Deletes()
        self.ended: bytes | None = None  # a column whose remaining cells are all skipped
        self.column: bytes | None = None
        self.count = 0
        self.last: tuple[int, int] | None = None  # (timestamp, type) last returned

    def take(self, cell: Cell) -> bool:
        """Whether the scan returns ``cell``."""
        if cell.qualifier == self.ended or self._expired(cell):
            return False
        ts = cell.timestamp
        if cell.type in _DELETES:
            after = ts >= self.scan.max_ts
            if ts >= self.scan.min_ts and (not after or not self.see_past_deletes):
                self.deletes.add(cell)
            return False
        hidden = self.deletes.hides(cell)
        if hidden is None and ts < self.scan.max_ts:
            if ts >= self.scan.min_ts:
                return self._version(cell)
            hidden = "column"  # before the time range: so is the rest of the column
        return self._end(cell) if hidden == "column" else False

    def _expired(self, cell: Cell) -> bool:
        """``ScanQueryMatcher.preCheck``: expired by the family TTL (ending the column) or
        by the cell's own."""
        ts = cell.timestamp
        if ts == LONG_MIN or (self.rules.min_versions <= 0 and ts < self.oldest):
            self.ended = cell.qualifier
            return True
        return _cell_ttl_expired(cell, self.scan.now_ms)

    def _version(self, cell: Cell) -> bool:
        if cell.qualifier != self.column:
            self.column, self.count, self.last = cell.qualifier, 0, None
        elif self.last == (cell.timestamp, cell.type):
            return False
        self.count += 1
        if self.count > self.versions:
            return self._end(cell)
        if self.count <= self.rules.min_versions or cell.timestamp >= self.oldest:
            self.last = (cell.timestamp, cell.type)
            return True
        return self._end(cell)

    def _end(self, cell: Cell) -> bool:
        self.ended = cell.qualifier
        return False


def _cell_ttl_expired(cell: Cell, now_ms: int) -> bool:
    for tag in cell.tags:
        if tag.type == TTL_TAG_TYPE:
            ttl = int.from_bytes(tag.value, "big", signed=True)
            return cell.timestamp + ttl < now_ms
    return False


# the compiled copy of the matcher (``_visible.pyx``, built by ``make setup``); imported
# after ``_cell_ttl_expired``, which it calls
VISIBLE = Choice("hbase_migrate.hfile._visible", "the compiled scan matcher is")


def visible_cells(cells: Iterable[StoreCell], rules: Mapping[bytes, FamilyRules],
                  scan: ScanSpec) -> Iterator[Cell]:
    """The cells a normal scan returns from ``cells`` (one region's, in ``merged_cells``
    order), each family read by its ``rules``. Memory: one row and family's delete
    markers. The compiled matcher when it runs (its timestamps 64-bit, as every store
    cell's), else ``reference_visible_cells``: the same cells."""
    compiled = VISIBLE.compiled()
    if compiled is not None:
        found: Iterator[Cell] | None = compiled.visible_cells(cells, rules, scan)
        if found is not None:
            return found
    return reference_visible_cells(cells, rules, scan)


def reference_visible_cells(cells: Iterable[StoreCell], rules: Mapping[bytes, FamilyRules],
                            scan: ScanSpec) -> Iterator[Cell]:
    """The pure-Python reference of ``visible_cells``."""
    stores: dict[bytes, _Store] = {}
    store: _Store | None = None
    at: tuple[bytes, bytes] | None = None
    for stored in cells:
        cell = stored.cell
        if at is None or at[0] != cell.row or at[1] != cell.family:
            at = (cell.row, cell.family)
            store = stores.get(cell.family)
            if store is None:
                if cell.family not in rules:  # region.py refuses such stores first
                    raise ValueError(f"cell of family {cell.family!r}, which no rules name")
                store = stores[cell.family] = _Store(rules[cell.family], scan)
            store.reset()
        assert store is not None
        if store.take(cell):
            yield cell
