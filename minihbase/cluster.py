"""The embedded cluster's master and region-server logic, behind both Thrift gateways.

DDL (tables with split keys, enable/disable), and the server side of every read and write:
client mutations become the concrete cells HBase would log (``HRegion.prepareDelete``,
``prepareDeleteTimestamps``, ``reckonDelta``). One client call is logged as one WAL edit per
region it touches (HBase's mini-batch), written before the store commits; reads apply the
masking rules of :mod:`minihbase.visibility`. Region placement and region open/close events
belong to an optional :class:`RegionHost` (the region servers of :mod:`minihbase.regionserver`).
"""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol

from hbase_migrate.cluster.descriptors import FamilyDescriptor, RegionDescriptor, TableDescriptor
from hbase_migrate.tablename import InvalidTableNameError, normalize_table_name, split_table_name
from hbase_migrate.wal.model import Cell, CellType
from hbase_migrate.wal.names import ServerName
from minihbase.model import (
    LATEST_TIMESTAMP,
    ClientCell,
    Durability,
    IllegalArgumentError,
    MiniHBaseError,
    Mutation,
    NamespaceNotFoundError,
    NoSuchFamilyError,
    Query,
    TableDisabledError,
    TableStateError,
)
from minihbase.store import Batch, Store, TableInfo
from minihbase.visibility import compacted_cells, raw_cells, visible_cells


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class RegionHost(Protocol):
    """Where regions live, and who is told when they open and close."""

    def server_of(self, region: RegionDescriptor) -> tuple[str, int, int]:
        """(host, port, start code) of the server holding ``region``."""
        ...

    def regions_opened(self, table: TableDescriptor,
                       regions: Sequence[RegionDescriptor]) -> None: ...

    def regions_closed(self, table: TableDescriptor,
                       regions: Sequence[RegionDescriptor]) -> None: ...


def _prefix_stop(prefix: bytes) -> bytes:
    """The smallest row greater than every row starting with ``prefix`` (b"" = no bound)."""
    stripped = prefix.rstrip(b"\xff")
    return stripped[:-1] + bytes([stripped[-1] + 1]) if stripped else b""


class Cluster:
    """Tables, regions and the read/write semantics of one embedded cluster."""

    def __init__(self, store: Store, clock: Callable[[], int] = now_ms,
                 server: ServerName | None = None, host: RegionHost | None = None) -> None:
        self.store = store
        self.clock = clock
        self.server = server or ServerName("localhost", 16020, clock())  # hosts every region
        self.host = host
        self._lock = threading.RLock()

    # --- DDL ----------------------------------------------------------------------------

    def create_table(self, name: str, families: Sequence[FamilyDescriptor],
                     split_keys: Sequence[bytes] = ()) -> TableDescriptor:
        """Create a table with one region per split interval (region ids = now in ms)."""
        try:
            name = normalize_table_name(name)
        except InvalidTableNameError as exc:
            raise IllegalArgumentError(str(exc)) from exc
        if not families:
            raise IllegalArgumentError(f"table {name} must have at least one column family")
        namespace = name.partition(":")[0] if ":" in name else "default"
        if namespace not in self.store.namespaces():
            raise NamespaceNotFoundError(namespace)
        names = [f.name for f in families]
        if len(set(names)) != len(names) or any(not n or b":" in n for n in names):
            raise IllegalArgumentError(f"table {name}: bad or duplicate family names {names}")
        keys = sorted(set(split_keys))
        if b"" in keys:
            raise IllegalArgumentError("split keys must not be empty")
        region_id = self.clock()
        bounds = [b"", *keys, b""]
        regions = [RegionDescriptor(name, bounds[i], bounds[i + 1], region_id)
                   for i in range(len(bounds) - 1)]
        desc = TableDescriptor(name, tuple(families))
        self.store.create_table(desc, regions)
        if self.host is not None:
            self.host.regions_opened(desc, self.store.table(name).regions)
        return desc

    def table(self, name: str) -> TableInfo:
        return self.store.table(_normalize(name))

    def delete_table(self, name: str) -> None:
        info = self.table(name)
        if info.enabled:
            raise TableStateError(f"org.apache.hadoop.hbase.TableNotDisabledException: {info.name}")
        self.store.delete_table(info.name)

    def enable_table(self, name: str) -> None:
        info = self.table(name)
        if info.enabled:
            raise TableStateError(f"org.apache.hadoop.hbase.TableNotDisabledException: {info.name}")
        self.store.set_enabled(info.name, True)
        if self.host is not None:
            self.host.regions_opened(info.descriptor, info.regions)

    def disable_table(self, name: str) -> None:
        info = self.table(name)
        if not info.enabled:
            raise TableStateError(f"org.apache.hadoop.hbase.TableNotEnabledException: {info.name}")
        if self.host is not None:
            self.host.regions_closed(info.descriptor, info.regions)
        self.store.set_enabled(info.name, False)

    def create_namespace(self, name: str) -> None:
        try:
            split_table_name(f"{name}:t")
        except InvalidTableNameError as exc:
            raise IllegalArgumentError(f"illegal namespace {name!r}") from exc
        self.store.create_namespace(name)

    def namespaces(self) -> list[str]:
        return self.store.namespaces()

    def table_names(self) -> list[str]:
        return [t.name for t in self.store.tables()]

    def regions(self, name: str) -> list[RegionDescriptor]:
        """The table's regions with their server, sorted by start key."""
        out = []
        for r in self.table(name).regions:
            host, port, code = (self.host.server_of(r) if self.host is not None else
                                (self.server.host, self.server.port, self.server.start_code))
            out.append(RegionDescriptor(r.table, r.start_key, r.end_key, r.region_id,
                                        host, port, code))
        return out

    def region_for(self, name: str, row: bytes) -> RegionDescriptor:
        return next(r for r in self.regions(name) if r.contains(row))

    def _enabled(self, name: str, write: bool = False) -> TableInfo:
        info = self.table(name)
        if not info.enabled:
            raise TableDisabledError(info.name, write)
        return info

    def _check_family(self, info: TableInfo, family: bytes) -> None:
        if info.descriptor.family(family) is None:
            raise NoSuchFamilyError(info.name, family)

    # --- writes -------------------------------------------------------------------------

    def mutate(self, name: str, mutations: Sequence[Mutation]) -> None:
        """Apply client mutations in order, all or nothing (checked before any is applied)."""
        info = self._enabled(name, write=True)
        for m in mutations:
            for c in m.cells:
                self._check_family(info, c.family)
                if c.type == CellType.DELETE_FAMILY_VERSION and c.timestamp == LATEST_TIMESTAMP:
                    raise IllegalArgumentError(
                        "Timestamp is required for TDelete with DeleteFamilyVersion type")
        with self._lock, self.store.batch() as batch:
            edits: dict[tuple[str, bool], tuple[RegionDescriptor, list[Cell], Durability]] = {}
            for m in mutations:
                cells = self._resolve(info, m)
                if not cells:
                    continue
                batch.write(info.name, cells)  # later mutations of the call see it
                region = _region_of(info, m.row)
                key = (region.encoded_name, m.durability == Durability.SKIP_WAL)
                edits.setdefault(key, (region, [], m.durability))[1].extend(cells)
            for region, cells, durability in edits.values():
                batch.log(info.name, region, cells, durability)  # before the commit

    def _resolve(self, info: TableInfo, m: Mutation) -> list[Cell]:
        """The cells HBase logs for one mutation: concrete timestamps, whole-row deletes as
        one DeleteFamily per family, Delete(8) at LATEST on the newest visible version."""
        now = self.clock()
        if m.whole_row:
            ts = now if m.row_timestamp == LATEST_TIMESTAMP else m.row_timestamp
            return [Cell(m.row, f.name, b"", ts, CellType.DELETE_FAMILY)
                    for f in info.descriptor.families]
        out: list[Cell] = []
        latest_deletes: dict[tuple[bytes, bytes], int] = {}
        for c in m.cells:
            ts = c.timestamp
            if ts == LATEST_TIMESTAMP and c.type == CellType.DELETE:
                key = (c.family, c.qualifier)
                nth = latest_deletes.get(key, 0)
                latest_deletes[key] = nth + 1
                ts = self._nth_latest_ts(info, m.row, c, nth, now)
            elif ts == LATEST_TIMESTAMP:
                ts = now
            out.append(Cell(m.row, c.family, c.qualifier, ts, c.type, c.value))
        return out

    def _nth_latest_ts(self, info: TableInfo, row: bytes, c: ClientCell, nth: int,
                       now: int) -> int:
        query = Query.get(row)
        query.columns.add_column(c.family, c.qualifier)
        query.max_versions = nth + 1
        versions = self._visible_row(info, row, query)
        return versions[nth].timestamp if len(versions) > nth else now

    def increment(self, name: str, row: bytes, family: bytes, qualifier: bytes,
                  amount: int, durability: Durability = Durability.USE_DEFAULT) -> Cell:
        """Add ``amount`` to an 8-byte big-endian counter; logged as a Put at
        max(previous ts + 1, now)."""
        def combine(prev: bytes | None) -> bytes:
            if prev is not None and len(prev) != 8:
                raise MiniHBaseError("org.apache.hadoop.hbase.DoNotRetryIOException: Field is "
                                     f"not a long, it's {len(prev)} bytes wide")
            base = int.from_bytes(prev, "big", signed=True) if prev is not None else 0
            total = (base + amount + 2**63) % 2**64 - 2**63  # Java long overflow
            return total.to_bytes(8, "big", signed=True)
        return self._read_modify_write(name, row, family, qualifier, combine, durability)

    def append(self, name: str, row: bytes, family: bytes, qualifier: bytes, value: bytes,
               durability: Durability = Durability.USE_DEFAULT) -> Cell:
        """Append bytes to a cell's newest value; logged as a Put like an increment."""
        return self._read_modify_write(name, row, family, qualifier,
                                       lambda prev: (prev or b"") + value, durability)

    def _read_modify_write(self, name: str, row: bytes, family: bytes, qualifier: bytes,
                           combine: Callable[[bytes | None], bytes],
                           durability: Durability) -> Cell:
        info = self._enabled(name)
        self._check_family(info, family)
        with self._lock, self.store.batch() as batch:
            query = Query.get(row)
            query.columns.add_column(family, qualifier)
            current = self._visible_row(info, row, query)
            now = self.clock()
            prev = current[0] if current else None
            ts = max(prev.timestamp + 1, now) if prev else now
            value = combine(prev.value if prev else None)
            cell = Cell(row, family, qualifier, ts, CellType.PUT, value)
            self._apply(batch, info, cell, durability)
            return cell

    def _apply(self, batch: Batch, info: TableInfo, cell: Cell, durability: Durability) -> None:
        batch.apply(info.name, self.region_for(info.name, cell.row), [cell], durability)

    def major_compact(self, name: str) -> None:
        """Drop masked, expired and surplus versions and every delete marker."""
        info = self.table(name)
        families = {f.name: f for f in info.descriptor.families}
        with self._lock:
            start, inclusive = b"", True
            while rows := self.store.raw_rows(info.name, start, inclusive, b""):
                for row, cells in rows:
                    kept = compacted_cells(cells, families, self.clock())
                    if kept != cells:
                        self.store.replace_row(info.name, row, kept)
                start, inclusive = rows[-1][0], False

    # --- reads --------------------------------------------------------------------------

    def _visible_row(self, info: TableInfo, row: bytes, query: Query) -> list[Cell]:
        families = {f.name: f for f in info.descriptor.families}
        read = raw_cells if query.raw else visible_cells
        return read(self.store.row_cells(info.name, row), query, families, self.clock())

    def _check_query(self, info: TableInfo, query: Query) -> None:
        for family in query.columns.families:
            self._check_family(info, family)
        if query.reversed:
            raise IllegalArgumentError("reversed scans are not supported by this cluster")

    def readable(self, name: str, families: Iterable[bytes]) -> tuple[TableInfo, int]:
        """An enabled table having ``families``, and the time now, for a read made outside
        (the RPC servers' filtered reads); raises as a Get or Scan would."""
        info = self._enabled(name)
        for family in families:
            self._check_family(info, family)
        return info, self.clock()

    def get(self, name: str, row: bytes, query: Query | None = None) -> list[Cell]:
        """The visible cells of one row (``query`` gives columns, time range, versions)."""
        info = self._enabled(name)
        query = query or Query()
        self._check_query(info, query)
        return self._visible_row(info, row, query)

    def scan(self, name: str, query: Query) -> Iterator[list[Cell]]:
        """Results in row order: whole rows, or chunks of ``query.batch`` cells. The store
        is read in bounded batches, so a scan of any size runs in bounded memory."""
        info = self._enabled(name)
        self._check_query(info, query)
        families = {f.name: f for f in info.descriptor.families}
        start, stop = query.start, query.stop
        if query.prefix is not None:
            start = max(start, query.prefix)
            prefix_stop = _prefix_stop(query.prefix)
            stop = min(stop, prefix_stop) if stop and prefix_stop else (stop or prefix_stop)
        inclusive, returned = True, 0
        read = raw_cells if query.raw else visible_cells
        while rows := self.store.raw_rows(info.name, start, inclusive, stop):
            for _, cells in rows:
                visible = read(cells, query, families, self.clock())
                if not visible:
                    continue
                step = query.batch or len(visible)
                for i in range(0, len(visible), step):
                    yield visible[i:i + step]
                returned += 1
                if query.limit and returned >= query.limit:
                    return
            start, inclusive = rows[-1][0], False


def _normalize(name: str) -> str:
    try:
        return normalize_table_name(name)
    except InvalidTableNameError:
        return name  # looked up as given; unknown names fail as TableNotFound


def _region_of(info: TableInfo, row: bytes) -> RegionDescriptor:
    """The region of ``info`` holding ``row`` (regions are sorted by start key)."""
    return info.regions[bisect.bisect_right([r.start_key for r in info.regions], row) - 1]
