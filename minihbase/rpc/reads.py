"""How the embedded region servers read a row of a user table for a Get or a Scan, as
HBase 2.6's region and store scanners do (``RegionScannerImpl``, ``StoreScanner``,
``UserScanQueryMatcher``):

* each family's visible cells (deletes applied, TTL, the family's own time range or the
  read's) are offered to the filter one by one in HBase's cell order; with a filter the
  versions checked are the family's VERSIONS and the read's ``max_versions`` caps the
  versions the filter includes (so a ValueFilter may return an older version);
  a filter's SKIP, NEXT_COL, NEXT_ROW (the rest of the family in this row, as a store
  scanner) and seek hints are followed, its included cells transformed (KeyOnlyFilter);
* ``store_offset`` and ``store_limit`` count the included cells of a family in a row;
* the filter sees each row's key first (``filter_row_key``), may drop the whole row at its
  end (``filter_row``, only for a row with cells), is reset between rows, and ends the
  region's scan when ``filter_all_remaining`` (PageFilter counts rows per region).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import groupby

from hbase_migrate.cluster.descriptors import FamilyDescriptor
from hbase_migrate.rpc.messages import decode_column, decode_time_range
from hbase_migrate.wal.model import Cell
from hbase_migrate.wal.protobuf import Message
from minihbase.model import LATEST_TIMESTAMP, ColumnSelection, Query
from minihbase.rpc.filterbase import INCLUDES, Code, Filter, Key, key
from minihbase.rpc.filters import decode_filter
from minihbase.store import Store
from minihbase.visibility import raw_cells, visible_cells

ALL_VERSIONS = 1 << 31


class FilterDone(Exception):
    """The filter says nothing more in this region (``filterAllRemaining``)."""


@dataclass
class ReadSpec:
    """What a Get or Scan reads of each row."""

    columns: ColumnSelection
    time_range: tuple[int, int] = (0, LATEST_TIMESTAMP)
    family_ranges: dict[bytes, tuple[int, int]] = field(default_factory=dict)
    max_versions: int = 1
    raw: bool = False
    filter: Filter | None = None
    store_limit: int = -1
    store_offset: int = 0
    batch: int = 0


def read_spec(data: bytes, kind: str, raw: bool = False, reversed_: bool = False) -> ReadSpec:
    """The ReadSpec of a ``Get`` or ``Scan`` message (Client.proto, branch-2.6)."""
    get = kind == "Get"
    m = Message(data, kind)
    columns = ColumnSelection()
    for column in m.msgs(2 if get else 1, decode_column):
        if column.qualifiers:
            for qualifier in column.qualifiers:
                columns.add_column(column.family, qualifier)
        else:
            columns.add_family(column.family)
    spec = ReadSpec(columns, raw=raw)
    tr = m.opt_bytes(5 if get else 6)
    if tr is not None:
        spec.time_range = decode_time_range(tr)
    versions = m.opt_int(6 if get else 7)
    spec.max_versions = 1 if versions is None else versions
    for data_ in m.repeated(13 if get else 19):
        cf = Message(data_, "ColumnFamilyTimeRange")
        spec.family_ranges[cf.req_bytes(1, "column_family")] = decode_time_range(
            cf.req_bytes(2, "time_range"))
    filter_ = m.opt_bytes(4 if get else 5)
    if filter_ is not None:
        spec.filter = decode_filter(filter_)
        spec.filter.set_reversed(reversed_)
    limit, offset = m.opt_int(8 if get else 11), m.opt_int(9 if get else 12)
    spec.store_limit = limit if limit else -1
    spec.store_offset = offset or 0
    spec.batch = 0 if get else (m.opt_int(9) or 0)
    return spec


@dataclass
class RowReader:
    """Reads rows for one Get or one region's scanner (the filter keeps its state between
    rows, as a region scanner's does)."""

    spec: ReadSpec
    families: Mapping[bytes, FamilyDescriptor]
    now: int

    def read(self, stored: list[Cell]) -> list[Cell]:
        """The cells of one row the read returns (none: the row is not returned); raises
        FilterDone when the filter ends the region's scan before this row."""
        wanted = self.wanted(stored)
        if not wanted:
            return []
        f = self.spec.filter
        try:
            if f is not None and f.filter_row_key(wanted[0]):
                if f.filter_all_remaining():
                    raise FilterDone
                return []
            out: list[Cell] = []
            for _, cells in groupby(wanted, key=lambda c: c.family):
                out.extend(self._family(list(cells)))
            if f is not None and out and f.filter_row():
                out = []
            return out
        finally:
            if f is not None:
                f.reset()

    def wanted(self, stored: list[Cell]) -> list[Cell]:
        """The stored cells of a row in the families read: what the region scanner's store
        heap holds of it (deleted and expired cells too, before any filter)."""
        return [c for c in stored if c.family in self.families
                and (not self.spec.columns.families or c.family in self.spec.columns.families)]

    def done(self) -> bool:
        return self.spec.filter is not None and self.spec.filter.filter_all_remaining()

    def _family(self, stored: list[Cell]) -> list[Cell]:
        spec, f = self.spec, self.spec.filter
        low, high = spec.family_ranges.get(stored[0].family, spec.time_range)
        # with a filter: every version VERSIONS keeps (raw: every one), capped after it
        checked = spec.max_versions if f is None else ALL_VERSIONS
        query = Query(columns=spec.columns, min_ts=low, max_ts=high, max_versions=checked)
        cells = (raw_cells if spec.raw else visible_cells)(stored, query, self.families,
                                                           self.now)
        if f is not None:
            cells = self._filtered(f, cells)
        out = []
        for count, cell in enumerate(cells, 1):
            if spec.store_limit > -1 and count > spec.store_limit + spec.store_offset:
                break
            if count > spec.store_offset:
                out.append(cell if f is None else f.transform_cell(cell))
        return out

    def _filtered(self, f: Filter, cells: list[Cell]) -> list[Cell]:
        """The cells of one family the filter includes, following its skips and hints;
        at most ``max_versions`` of a column (``UserScanQueryMatcher.mergeFilterResponse``).
        The transform is applied later, after the store's offset and limit."""
        out: list[Cell] = []
        skip: tuple[bytes, bytes] | None = None  # a column to pass over
        hint: Key | None = None
        counts: dict[tuple[bytes, bytes], int] = {}
        for cell in cells:
            column = (cell.family, cell.qualifier)
            if column == skip or (hint is not None and key(cell) < hint):
                continue
            skip, hint = None, None
            code = f.filter_cell(cell)
            if code == Code.SEEK_NEXT_USING_HINT:
                hint = f.next_hint(cell)
                if hint is not None and hint[:2] != (cell.row, cell.family):
                    break  # a hint past this row (or family) ends the family here
                continue
            if code in INCLUDES:
                counts[column] = counts.get(column, 0) + 1
                if counts[column] <= self.spec.max_versions:
                    out.append(cell)
                elif code == Code.INCLUDE:
                    code = Code.NEXT_COL  # enough versions of it
            if code in (Code.NEXT_ROW, Code.INCLUDE_AND_SEEK_NEXT_ROW):
                break
            if code in (Code.NEXT_COL, Code.INCLUDE_AND_NEXT_COL):
                skip = column
        return out


def chunks(rows: Iterator[list[Cell]], batch: int) -> Iterator[tuple[list[Cell], bool]]:
    """Results of at most ``batch`` cells (0: whole rows), each with whether more cells of
    its row follow."""
    for cells in rows:
        if not batch or len(cells) <= batch:
            yield cells, False
            continue
        for i in range(0, len(cells), batch):
            yield cells[i:i + batch], i + batch < len(cells)


def stored_rows(store: Store, table: str, start: bytes, stop: bytes, reversed_: bool
                ) -> Iterator[list[Cell]]:
    """The stored cells of each row in ``[start, stop)`` (empty stop: to the end), in row
    order or (``reversed_``) backwards; read in bounded batches going forward."""
    if reversed_:
        yield from reversed(list(stored_rows(store, table, start, stop, False)))
        return
    inclusive = True
    while rows := store.raw_rows(table, start, inclusive, stop):
        for _, cells in rows:
            yield cells
        start, inclusive = rows[-1][0], False
