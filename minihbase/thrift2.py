"""The Thrift2 gateway (``hbase thrift2``): THBaseService over the cluster.

Request mapping follows HBase's ``thrift2/ThriftUtilities.java``: a TPut cell uses its own
timestamp, else the TPut's, else LATEST; a TDelete with columns uses each column's timestamp
(the TDelete's is ignored) and one delete type for all columns; DELETE_FAMILY_VERSION needs a
timestamp; a TDelete without columns deletes the whole row (at its timestamp, else now); a
TGet timestamp wins over its time range. Errors come back as TIOError (TIllegalArgument for
unknown scanner ids), and a refused call changes nothing. ``TScan.batchSize`` splits a row
into Results of at most that many cells, consecutive Results of the same row, as HBase does.

For tests of a gateway that cannot carry large calls: the handler records the size of each
``getScannerRows`` answer and ``putMultiple`` request (``call_sizes``: the call, its keys
and values in bytes, its cells) and the bounds of each scanner opened (``scans_opened``),
and with ``stall_over_bytes`` set, a call larger than that never answers (until the gateway
stops; nothing is written): the client's call times out, deterministically.
``stall_calls`` stalls that many of the next such calls whatever their size, and each
message put in ``scan_errors`` fails one ``getScannerRows`` call with it (a TIOError, after
the scanner moved on: what a gateway that lost its scanner sends). ``listings_in_transition``
fails that many of the next ``getAllRegionLocations`` calls as HBase 2.6's gateway does while
a daughter region has no server yet (its NullPointerException: an internal error), and each
listing put in ``staged_listings`` answers one call instead of the cluster's regions.
"""

from __future__ import annotations

import collections
import re
import threading
from collections.abc import Sequence
from typing import Any

from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.tablename import DEFAULT_NAMESPACE, split_table_name
from hbase_migrate.thrift.mutations import DELETE_TYPES
from hbase_migrate.thrift.thrift2 import family_from_thrift, family_to_thrift
from hbase_migrate.thrift.thrift2_idl import hbase2 as T
from hbase_migrate.wal.model import Cell, CellType
from minihbase.cluster import Cluster
from minihbase.handlers import ScannerRegistry, bind_handler, in_transition
from minihbase.model import (
    LATEST_TIMESTAMP,
    ClientCell,
    Durability,
    IllegalArgumentError,
    MiniHBaseError,
    Mutation,
    Query,
)

SERVICE = T.THBaseService
_DELETE_TYPES = {kind: cell_type for cell_type, kind in DELETE_TYPES.items()}  # TDeleteType ->


def translate(exc: MiniHBaseError, declared: tuple[type, ...]) -> Exception:
    error: Exception
    if isinstance(exc, IllegalArgumentError) and T.TIllegalArgument in declared:
        error = T.TIllegalArgument(message=str(exc))
    else:
        # HBase's Thrift2 handler sends the exception's getMessage(), not its class name,
        # and canRetry unless it is a DoNotRetryIOException.
        error = T.TIOError(message=getattr(exc, "thrift2_message", None) or str(exc),
                           canRetry=exc.retryable)
    return error


def _name(table: bytes) -> str:
    return table.decode("utf-8")


def _tname(tname: Any) -> str:
    ns = (tname.ns or b"").decode() or DEFAULT_NAMESPACE
    qualifier = tname.qualifier.decode()
    return qualifier if ns == DEFAULT_NAMESPACE else f"{ns}:{qualifier}"


def _ts(value: int | None, default: int = LATEST_TIMESTAMP) -> int:
    return default if value is None else value


def put_from_thrift(tput: Any) -> Mutation:
    if not tput.columnValues:
        raise IllegalArgumentError("No columns to insert")
    row_ts = _ts(tput.timestamp)
    cells = tuple(ClientCell(cv.family, cv.qualifier, _ts(cv.timestamp, row_ts), CellType.PUT,
                             cv.value or b"") for cv in tput.columnValues)
    return Mutation(tput.row, cells, Durability(tput.durability or 0))


def delete_from_thrift(tdelete: Any) -> Mutation:
    durability = Durability(tdelete.durability or 0)
    if tdelete.columns is None:
        return Mutation(tdelete.row, (), durability, whole_row=True,
                        row_timestamp=_ts(tdelete.timestamp))
    kind = _DELETE_TYPES.get(tdelete.deleteType)
    if kind is None:
        raise IllegalArgumentError("DeleteType is required for TDelete")
    cells = []
    for col in tdelete.columns:
        if kind == CellType.DELETE_FAMILY_VERSION and col.timestamp is None:
            raise IllegalArgumentError(
                "Timestamp is required for TDelete with DeleteFamilyVersion type")
        family_wide = kind in (CellType.DELETE_FAMILY, CellType.DELETE_FAMILY_VERSION)
        qualifier = b"" if family_wide else (col.qualifier or b"")
        cells.append(ClientCell(col.family, qualifier, _ts(col.timestamp), kind))
    if not cells:  # columns set but empty: a Delete without columns, the whole row at now
        return Mutation(tdelete.row, (), durability, whole_row=True)
    return Mutation(tdelete.row, tuple(cells), durability)


def _add_columns(query: Query, columns: Sequence[Any] | None) -> Query:
    for col in columns or ():
        if col.qualifier is None:
            query.columns.add_family(col.family)
        else:
            query.columns.add_column(col.family, col.qualifier)
    return query


def query_from_tget(tget: Any) -> Query:
    if tget.filterString:
        raise IllegalArgumentError("filter strings are not supported by this cluster")
    query = Query.get(tget.row)
    if tget.timestamp is not None:
        query.min_ts, query.max_ts = tget.timestamp, tget.timestamp + 1
    elif tget.timeRange is not None:
        query.min_ts, query.max_ts = tget.timeRange.minStamp, tget.timeRange.maxStamp
    if tget.maxVersions is not None:
        query.max_versions = tget.maxVersions
    return _add_columns(query, tget.columns)


def query_from_tscan(tscan: Any) -> Query:
    if tscan.filterString:
        raise IllegalArgumentError("filter strings are not supported by this cluster")
    query = Query(start=tscan.startRow or b"", stop=tscan.stopRow or b"",
                  max_versions=tscan.maxVersions or 1, batch=tscan.batchSize or 0,
                  limit=tscan.limit or 0, reversed=bool(tscan.reversed))
    if tscan.timeRange is not None:
        query.min_ts, query.max_ts = tscan.timeRange.minStamp, tscan.timeRange.maxStamp
    return _add_columns(query, tscan.columns)


def tresult(cells: Sequence[Cell], partial: bool = False) -> Any:
    if not cells:
        return T.TResult(columnValues=[])
    return T.TResult(row=cells[0].row, partial=partial, columnValues=[
        T.TColumnValue(family=c.family, qualifier=c.qualifier, value=c.value,
                       timestamp=c.timestamp, type=c.type) for c in cells])


def _location(r: RegionDescriptor) -> Any:
    # HBase's Thrift2 server leaves regionId unset (0) in region locations: clients learn a
    # region's range and server, not its id or encoded name.
    return T.THRegionLocation(
        serverName=T.TServerName(hostName=r.server_host, port=r.server_port,
                                 startCode=r.server_start_code),
        regionInfo=T.THRegionInfo(regionId=0, tableName=r.table.encode(),
                                  startKey=r.start_key, endKey=r.end_key, offline=False,
                                  split=False, replicaId=0))


class Thrift2Handler:
    """Implements the THBaseService subset; bind with :func:`make_handler`."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.scanners = ScannerRegistry()
        self.stall_over_bytes: int | None = None
        self.call_sizes: collections.deque[tuple[str, int, int]] = collections.deque(
            maxlen=100_000)
        self.stall_calls = 0
        # every scanner opened, as (table, start row, stop row): what a region server's
        # scan request count shows, by range (tests count the reads of a key range)
        self.scans_opened: collections.deque[tuple[str, bytes, bytes]] = collections.deque(
            maxlen=100_000)
        self.scan_errors: list[str] = []
        self.listings_in_transition = 0
        self.staged_listings: collections.deque[list[RegionDescriptor]] = collections.deque()
        self.released = threading.Event()  # set when the gateway stops: stalled calls end

    def _weigh(self, call: str, values: Sequence[Any], row_of: Any) -> None:
        """Record the size of a call carrying TColumnValues ``values`` (``row_of(cv)`` its
        row); a call over ``stall_over_bytes`` stalls (see the module)."""
        size = sum(len(row_of(cv)) + len(cv.family) + len(cv.qualifier) + len(cv.value)
                   for cv in values)
        self.call_sizes.append((call, size, len(values)))
        limit = self.stall_over_bytes
        stall = self.stall_calls > 0
        if stall:
            self.stall_calls -= 1
        if stall or (limit is not None and size > limit):
            self.released.wait(600)
            raise MiniHBaseError(f"{call} of {size} bytes stalled")

    # --- data ---------------------------------------------------------------------------
    def exists(self, table: bytes, tget: Any) -> bool:
        return bool(self.get(table, tget).columnValues)

    def existsAll(self, table: bytes, tgets: list[Any]) -> list[bool]:
        return [self.exists(table, g) for g in tgets]

    def get(self, table: bytes, tget: Any) -> Any:
        return tresult(self.cluster.get(_name(table), tget.row, query_from_tget(tget)))

    def getMultiple(self, table: bytes, tgets: list[Any]) -> list[Any]:
        queries = [(g.row, query_from_tget(g)) for g in tgets]
        return [tresult(self.cluster.get(_name(table), row, q)) for row, q in queries]

    def put(self, table: bytes, tput: Any) -> None:
        self.cluster.mutate(_name(table), [put_from_thrift(tput)])

    def putMultiple(self, table: bytes, tputs: list[Any]) -> None:
        rows = {id(cv): p.row for p in tputs for cv in p.columnValues or ()}
        self._weigh("putMultiple", [cv for p in tputs for cv in p.columnValues or ()],
                    lambda cv: rows[id(cv)])
        self.cluster.mutate(_name(table), [put_from_thrift(p) for p in tputs])

    def deleteSingle(self, table: bytes, tdelete: Any) -> None:
        self.cluster.mutate(_name(table), [delete_from_thrift(tdelete)])

    def deleteMultiple(self, table: bytes, tdeletes: list[Any]) -> list[Any]:
        self.cluster.mutate(_name(table), [delete_from_thrift(d) for d in tdeletes])
        return []

    def mutateRow(self, table: bytes, trm: Any) -> None:
        mutations = []
        for tm in trm.mutations:
            m = put_from_thrift(tm.put) if tm.put is not None else delete_from_thrift(
                tm.deleteSingle)
            if m.row != trm.row:
                raise IllegalArgumentError(
                    f"The row in {m.row!r} doesn't match the original one {trm.row!r}")
            mutations.append(m)
        self.cluster.mutate(_name(table), mutations)

    def increment(self, table: bytes, tinc: Any) -> Any:
        durability = Durability(tinc.durability or 0)
        cells = [self.cluster.increment(_name(table), tinc.row, c.family, c.qualifier,
                                        1 if c.amount is None else c.amount, durability)
                 for c in tinc.columns]
        return tresult(cells)

    def append(self, table: bytes, tapp: Any) -> Any:
        durability = Durability(tapp.durability or 0)
        cells = [self.cluster.append(_name(table), tapp.row, c.family, c.qualifier,
                                     c.value or b"", durability) for c in tapp.columns]
        return tresult(cells)

    # --- scanners -----------------------------------------------------------------------
    def openScanner(self, table: bytes, tscan: Any) -> int:
        query = query_from_tscan(tscan)
        self.scans_opened.append((_name(table), query.start, query.stop))
        results = self.cluster.scan(_name(table), query)
        first = next(results, None)  # unknown table/family fails here, not on first read
        self.call_sizes.append(("openScanner", 0, 0))

        def chunks() -> Any:
            # TResult.partial is HBase's Result.mayHaveMoreCellsInRow(): true on the pieces
            # of a row split by batchSize but its last one
            current = first
            while current is not None:
                following = next(results, None)
                yield tresult(current, partial=following is not None
                              and following[0].row == current[0].row)
                current = following
        return self.scanners.open(chunks())

    def getScannerRows(self, scanner_id: int, count: int) -> list[Any]:
        rows = self.scanners.next(scanner_id, count)
        if rows is None:
            raise IllegalArgumentError("Invalid scanner Id")
        if self.scan_errors:
            raise MiniHBaseError(self.scan_errors.pop(0))
        of_row = {id(cv): r.row for r in rows for cv in r.columnValues}
        self._weigh("getScannerRows", [cv for r in rows for cv in r.columnValues],
                    lambda cv: of_row[id(cv)])
        return rows

    def closeScanner(self, scanner_id: int) -> None:
        if not self.scanners.close(scanner_id):
            raise IllegalArgumentError("Invalid scanner Id")

    def getScannerResults(self, table: bytes, tscan: Any, count: int) -> list[Any]:
        results = self.cluster.scan(_name(table), query_from_tscan(tscan))
        return [tresult(cells) for _, cells in zip(range(max(count, 1)), results, strict=False)]

    # --- schema and regions -------------------------------------------------------------
    def getRegionLocation(self, table: bytes, row: bytes, reload: bool) -> Any:
        return _location(self.cluster.region_for(_name(table), row))

    def getAllRegionLocations(self, table: bytes) -> list[Any]:
        if self.listings_in_transition > 0:
            self.listings_in_transition -= 1
            raise in_transition("getAllRegionLocations")
        if self.staged_listings:
            return [_location(r) for r in self.staged_listings.popleft()]
        return [_location(r) for r in self.cluster.regions(_name(table))]

    def getTableDescriptor(self, tname: Any) -> Any:
        desc = self.cluster.table(_tname(tname)).descriptor
        ns, qualifier = split_table_name(desc.name)
        return T.TTableDescriptor(
            tableName=T.TTableName(ns=ns.encode(), qualifier=qualifier.encode()),
            columns=[family_to_thrift(f) for f in desc.families],
            attributes=dict(desc.attributes), durability=T.TDurability.USE_DEFAULT)

    def getTableDescriptors(self, tnames: list[Any]) -> list[Any]:
        return [self.getTableDescriptor(t) for t in tnames]

    def tableExists(self, tname: Any) -> bool:
        return self.cluster.store.has_table(_tname(tname))

    def getTableNamesByPattern(self, regex: str | None, include_sys: bool) -> list[Any]:
        pattern = re.compile(regex or ".*")
        out = []
        for name in self.cluster.table_names():
            if pattern.fullmatch(name):
                ns, qualifier = split_table_name(name)
                out.append(T.TTableName(ns=ns.encode(), qualifier=qualifier.encode()))
        return out

    def createTable(self, desc: Any, split_keys: list[bytes] | None) -> None:
        families = [family_from_thrift(c) for c in desc.columns or ()]
        self.cluster.create_table(_tname(desc.tableName), families, split_keys or ())

    def createNamespace(self, desc: Any) -> None:
        self.cluster.create_namespace(desc.name)

    def listNamespaces(self) -> list[str]:
        return self.cluster.namespaces()

    def deleteTable(self, tname: Any) -> None:
        self.cluster.delete_table(_tname(tname))

    def enableTable(self, tname: Any) -> None:
        self.cluster.enable_table(_tname(tname))

    def disableTable(self, tname: Any) -> None:
        self.cluster.disable_table(_tname(tname))

    def isTableEnabled(self, tname: Any) -> bool:
        return self.cluster.table(_tname(tname)).enabled

    def isTableDisabled(self, tname: Any) -> bool:
        return not self.cluster.table(_tname(tname)).enabled


def make_handler(cluster: Cluster) -> tuple[object, Thrift2Handler]:
    """(the object to serve, the handler behind it)."""
    impl = Thrift2Handler(cluster)
    return bind_handler(SERVICE, impl, translate), impl
