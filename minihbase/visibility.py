"""What a normal (non-raw) read sees of one row: HBase's delete masking, TTL, time range and
version rules, as a pure function over the row's stored cells.

Rules, from ``ScanDeleteTracker`` and ``NormalUserScanQueryMatcher`` (hbase-server,
``regionserver/querymatcher``), default ``NEW_VERSION_BEHAVIOR=false``:

* DeleteFamily(14) at t masks every cell of its family with ts <= t;
* DeleteFamilyVersion(10) at t masks every cell of its family with ts == t;
* DeleteColumn(12) at t masks the column's cells with ts <= t;
* Delete(8) at t masks the column's cell with ts == t;
* markers sort before puts of the same key and are compared by timestamp only (the sequence
  id is not consulted), so a marker also masks a put that arrives later at or below its ts;
* expired cells (ts < now - TTL) and cells outside ``[min_ts, max_ts)`` are skipped; the
  version limit is min(requested versions, the family's VERSIONS) and counts only cells that
  survived the masks (``checkVersions`` runs after ``checkDeleted``).

Nothing is compacted behind the reader's back: every version stays stored until an explicit
major compaction (:func:`compacted_cells`). So, as in an HBase memstore before a flush, an
older version beyond VERSIONS shows again once a newer one is deleted with Delete(8); the rule
is deterministic, which a validation that compares two clusters needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from hbase_migrate.cluster.descriptors import FOREVER, FamilyDescriptor
from hbase_migrate.wal.model import Cell, CellType
from minihbase.model import Query


@dataclass
class _FamilyMarks:
    family_ts: int = -1
    family_versions: set[int] = field(default_factory=set)
    column_ts: dict[bytes, int] = field(default_factory=dict)
    versions: dict[bytes, set[int]] = field(default_factory=dict)

    def add(self, cell: Cell) -> None:
        if cell.type == CellType.DELETE_FAMILY:
            self.family_ts = max(self.family_ts, cell.timestamp)
        elif cell.type == CellType.DELETE_FAMILY_VERSION:
            self.family_versions.add(cell.timestamp)
        elif cell.type == CellType.DELETE_COLUMN:
            prev = self.column_ts.get(cell.qualifier, -1)
            self.column_ts[cell.qualifier] = max(prev, cell.timestamp)
        elif cell.type == CellType.DELETE:
            self.versions.setdefault(cell.qualifier, set()).add(cell.timestamp)

    def masks(self, cell: Cell) -> bool:
        ts = cell.timestamp
        return (
            ts <= self.family_ts
            or ts in self.family_versions
            or ts <= self.column_ts.get(cell.qualifier, -1)
            or ts in self.versions.get(cell.qualifier, ())
        )


def oldest_unexpired(ttl_seconds: int, now_ms: int) -> int:
    """The smallest timestamp a family with this TTL still shows."""
    return -1 if ttl_seconds >= FOREVER else now_ms - ttl_seconds * 1000


def visible_cells(
    stored: Iterable[Cell], query: Query, families: Mapping[bytes, FamilyDescriptor],
    now_ms: int,
) -> list[Cell]:
    """The cells a Get/Scan returns for one row, in HBase's order.

    ``stored`` holds every cell of the row (puts and markers) sorted by family, qualifier,
    timestamp descending; cells of families not in ``families`` are ignored.
    """
    cells = list(stored)
    marks: dict[bytes, _FamilyMarks] = {}
    for cell in cells:
        if cell.type != CellType.PUT:
            marks.setdefault(cell.family, _FamilyMarks()).add(cell)
    out: list[Cell] = []
    seen: dict[tuple[bytes, bytes], int] = {}
    for cell in cells:
        if cell.type != CellType.PUT or not query.columns.wants(cell.family, cell.qualifier):
            continue
        family_marks = marks.get(cell.family)
        if family_marks is not None and family_marks.masks(cell):
            continue
        spec = families.get(cell.family)
        if spec is None or cell.timestamp < oldest_unexpired(spec.ttl, now_ms):
            continue
        if not query.min_ts <= cell.timestamp < query.max_ts:
            continue
        key = (cell.family, cell.qualifier)
        count = seen.get(key, 0)
        if count >= min(query.max_versions, spec.max_versions):
            continue
        seen[key] = count + 1
        out.append(cell)
    return out


def raw_cells(
    stored: Iterable[Cell], query: Query, families: Mapping[bytes, FamilyDescriptor],
    now_ms: int,
) -> list[Cell]:
    """What a raw read returns of one row (``RawScanQueryMatcher``): every stored cell, delete
    markers and the puts they mask alike, within the columns, the time range and the TTL;
    the version limit is the one requested (not capped by VERSIONS) and counts puts only."""
    out: list[Cell] = []
    seen: dict[tuple[bytes, bytes], int] = {}
    for cell in stored:
        spec = families.get(cell.family)
        if spec is None or not query.columns.wants(cell.family, cell.qualifier):
            continue
        if cell.timestamp < oldest_unexpired(spec.ttl, now_ms):
            continue
        if not query.min_ts <= cell.timestamp < query.max_ts:
            continue
        if cell.type == CellType.PUT:
            key = (cell.family, cell.qualifier)
            count = seen.get(key, 0)
            if count >= query.max_versions:
                continue
            seen[key] = count + 1
        out.append(cell)
    return out


def compacted_cells(stored: Iterable[Cell], families: Mapping[bytes, FamilyDescriptor],
                    now_ms: int) -> list[Cell]:
    """What a major compaction keeps of one row: the visible versions (up to each family's
    VERSIONS, unexpired) and no delete markers."""
    return visible_cells(stored, Query(max_versions=FOREVER), families, now_ms)
