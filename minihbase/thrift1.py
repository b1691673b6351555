"""The Thrift1 gateway (``hbase thrift``): happybase's own ``Hbase`` IDL over the cluster.

The mapping follows HBase's ``thrift/ThriftHBaseServiceHandler.java``: columns are split at
the first ``:`` (``"cf:"`` = empty qualifier); a delete mutation is DeleteFamily (family
only) or DeleteColumn, at the call's timestamp; every put cell carries the call's single
timestamp; ``mutateRowTs`` sends its Delete before its Put and ignores a family-only put
(with a warning), ``mutateRowsTs`` sends all Puts before all Deletes and refuses a
family-only put before writing anything; ``writeToWAL=false`` gives ``SKIP_WAL``;
``*Ts`` reads use the time range ``[0, ts)``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import happybase  # noqa: F401 - loads the Hbase_thrift module from happybase's IDL
import Hbase_thrift as H  # type: ignore[import-not-found]

from hbase_migrate.cluster.descriptors import FOREVER, FamilyDescriptor
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
    TableExistsError,
    parse_column,
)

log = logging.getLogger(__name__)
SERVICE = H.Hbase
HREGION_VERSION = 1
COMPRESSIONS = {"NONE", "GZ", "SNAPPY", "LZ4", "LZO", "BZIP2", "ZSTD"}
BLOOMS = {"NONE", "ROW", "ROWCOL", "ROWPREFIX_FIXED_LENGTH"}


def translate(exc: MiniHBaseError, declared: tuple[type, ...]) -> Exception:
    error: Exception
    if isinstance(exc, TableExistsError) and H.AlreadyExists in declared:
        error = H.AlreadyExists(message="table name already in use")
    elif isinstance(exc, IllegalArgumentError) and H.IllegalArgument in declared:
        error = H.IllegalArgument(message=str(exc))
    else:
        error = H.IOError(message=str(exc))
    return error


def _name(table: bytes) -> str:
    return table.decode("utf-8")


def _durability(write_to_wal: bool | None) -> Durability:
    return Durability.SKIP_WAL if write_to_wal is False else Durability.SYNC_WAL


def _selection(query: Query, columns: Sequence[bytes] | None) -> Query:
    for column in columns or ():
        family, qualifier = parse_column(column)
        if qualifier is None:
            query.columns.add_family(family)
        else:
            query.columns.add_column(family, qualifier)
    return query


def _row_mutations(row: bytes, mutations: Sequence[Any], ts: int,
                   strict: bool) -> tuple[Mutation | None, Mutation | None]:
    """(Delete, Put) of one row; ``strict`` refuses a family-only put (mutateRows)."""
    deletes: list[ClientCell] = []
    puts: list[ClientCell] = []
    delete_durability = put_durability = Durability.USE_DEFAULT
    for m in mutations:
        family, qualifier = parse_column(m.column or b"")
        if m.isDelete:
            kind = CellType.DELETE_FAMILY if qualifier is None else CellType.DELETE_COLUMN
            deletes.append(ClientCell(family, qualifier or b"", ts, kind))
            delete_durability = _durability(m.writeToWAL)
            continue
        if qualifier is None:
            if strict:
                raise IllegalArgumentError("Invalid famAndQf provided.")
            log.warning("No column qualifier specified. Delete is the only mutation supported "
                        "over the whole column family.")
        else:
            puts.append(ClientCell(family, qualifier, ts, CellType.PUT, m.value or b""))
        put_durability = _durability(m.writeToWAL)
    delete = Mutation(row, tuple(deletes), delete_durability) if deletes else None
    put = Mutation(row, tuple(puts), put_durability) if puts else None
    return delete, put


def _tcells(cells: Sequence[Cell]) -> list[Any]:
    return [H.TCell(value=c.value, timestamp=c.timestamp) for c in cells]


def _row_result(cells: Sequence[Cell], sort_columns: bool) -> Any:
    pairs = [(c.family + b":" + c.qualifier, H.TCell(value=c.value, timestamp=c.timestamp))
             for c in cells]
    if sort_columns:
        return H.TRowResult(row=cells[0].row, sortedColumns=[
            H.TColumn(columnName=n, cell=t) for n, t in pairs])
    return H.TRowResult(row=cells[0].row, columns=dict(pairs))


def _family_from_thrift(col: Any) -> FamilyDescriptor:
    if not col.name:
        raise IllegalArgumentError("column name is empty")
    compression = (col.compression or "NONE").upper()
    bloom = col.bloomFilterType or "NONE"
    if compression not in COMPRESSIONS or bloom not in BLOOMS:
        raise IllegalArgumentError(f"unknown compression {col.compression!r} or bloom filter "
                                   f"type {col.bloomFilterType!r}")
    if col.maxVersions is None or col.maxVersions < 1:
        raise IllegalArgumentError("Maximum versions must be positive")
    ttl = col.timeToLive if col.timeToLive and col.timeToLive > 0 else FOREVER
    return FamilyDescriptor(name=parse_column(col.name)[0], max_versions=col.maxVersions,
                            ttl=ttl, compression=compression, bloom_filter=bloom,
                            in_memory=bool(col.inMemory), block_cache=bool(col.blockCacheEnabled))


class Thrift1Handler:
    """Implements the ``Hbase`` service; bind with :func:`make_handler`."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.scanners = ScannerRegistry()
        # a fault for tests: the next listings fail as a region in transition makes them
        self.listings_in_transition = 0

    # --- tables -------------------------------------------------------------------------
    def enableTable(self, table: bytes) -> None:
        self.cluster.enable_table(_name(table))

    def disableTable(self, table: bytes) -> None:
        self.cluster.disable_table(_name(table))

    def isTableEnabled(self, table: bytes) -> bool:
        return self.cluster.table(_name(table)).enabled

    def compact(self, table_or_region: bytes) -> None:
        self.cluster.table(_name(table_or_region.split(b",")[0]))  # minor: nothing to drop

    def majorCompact(self, table_or_region: bytes) -> None:
        self.cluster.major_compact(_name(table_or_region.split(b",")[0]))

    def getTableNames(self) -> list[bytes]:
        return [n.encode() for n in self.cluster.table_names()]

    def getColumnDescriptors(self, table: bytes) -> dict[bytes, Any]:
        desc = self.cluster.table(_name(table)).descriptor
        return {f.name + b":": H.ColumnDescriptor(
            name=f.name + b":", maxVersions=f.max_versions, compression=f.compression,
            inMemory=f.in_memory, bloomFilterType=f.bloom_filter,
            blockCacheEnabled=f.block_cache, timeToLive=f.ttl) for f in desc.families}

    def getTableRegions(self, table: bytes) -> list[Any]:
        if self.listings_in_transition > 0:
            self.listings_in_transition -= 1
            raise in_transition("getTableRegions")
        if not self.cluster.store.has_table(_name(table)):
            return []
        return [H.TRegionInfo(startKey=r.start_key, endKey=r.end_key, id=r.region_id,
                              name=r.region_name, version=HREGION_VERSION,
                              serverName=r.server_host.encode(), port=r.server_port)
                for r in self.cluster.regions(_name(table))]

    def createTable(self, table: bytes, families: list[Any]) -> None:
        self.cluster.create_table(_name(table), [_family_from_thrift(c) for c in families])

    def deleteTable(self, table: bytes) -> None:
        self.cluster.delete_table(_name(table))

    # --- reads --------------------------------------------------------------------------
    def get(self, table: bytes, row: bytes, column: bytes, attrs: Any) -> list[Any]:
        return self.getVerTs(table, row, column, LATEST_TIMESTAMP, 1, attrs)

    def getVer(self, table: bytes, row: bytes, column: bytes, versions: int,
               attrs: Any) -> list[Any]:
        return self.getVerTs(table, row, column, LATEST_TIMESTAMP, versions, attrs)

    def getVerTs(self, table: bytes, row: bytes, column: bytes, ts: int, versions: int,
                 attrs: Any) -> list[Any]:
        query = _selection(Query(max_ts=ts, max_versions=versions), [column])
        return _tcells(self.cluster.get(_name(table), row, query))

    def getRow(self, table: bytes, row: bytes, attrs: Any) -> list[Any]:
        return self.getRowsWithColumnsTs(table, [row], None, LATEST_TIMESTAMP, attrs)

    def getRowWithColumns(self, table: bytes, row: bytes, columns: list[bytes],
                          attrs: Any) -> list[Any]:
        return self.getRowsWithColumnsTs(table, [row], columns, LATEST_TIMESTAMP, attrs)

    def getRowTs(self, table: bytes, row: bytes, ts: int, attrs: Any) -> list[Any]:
        return self.getRowsWithColumnsTs(table, [row], None, ts, attrs)

    def getRowWithColumnsTs(self, table: bytes, row: bytes, columns: list[bytes], ts: int,
                            attrs: Any) -> list[Any]:
        return self.getRowsWithColumnsTs(table, [row], columns, ts, attrs)

    def getRows(self, table: bytes, rows: list[bytes], attrs: Any) -> list[Any]:
        return self.getRowsWithColumnsTs(table, rows, None, LATEST_TIMESTAMP, attrs)

    def getRowsWithColumns(self, table: bytes, rows: list[bytes], columns: list[bytes],
                           attrs: Any) -> list[Any]:
        return self.getRowsWithColumnsTs(table, rows, columns, LATEST_TIMESTAMP, attrs)

    def getRowsTs(self, table: bytes, rows: list[bytes], ts: int, attrs: Any) -> list[Any]:
        return self.getRowsWithColumnsTs(table, rows, None, ts, attrs)

    def getRowsWithColumnsTs(self, table: bytes, rows: list[bytes], columns: list[bytes] | None,
                             ts: int, attrs: Any) -> list[Any]:
        out = []
        for row in rows:
            query = _selection(Query(max_ts=ts), columns)
            cells = self.cluster.get(_name(table), row, query)
            if cells:
                out.append(_row_result(cells, sort_columns=False))
        return out

    # --- writes -------------------------------------------------------------------------
    def mutateRow(self, table: bytes, row: bytes, mutations: list[Any], attrs: Any) -> None:
        self.mutateRowTs(table, row, mutations, LATEST_TIMESTAMP, attrs)

    def mutateRowTs(self, table: bytes, row: bytes, mutations: list[Any], ts: int,
                    attrs: Any) -> None:
        delete, put = _row_mutations(row, mutations, ts, strict=False)
        self.cluster.mutate(_name(table), [m for m in (delete, put) if m is not None])

    def mutateRows(self, table: bytes, batches: list[Any], attrs: Any) -> None:
        self.mutateRowsTs(table, batches, LATEST_TIMESTAMP, attrs)

    def mutateRowsTs(self, table: bytes, batches: list[Any], ts: int, attrs: Any) -> None:
        pairs = [_row_mutations(b.row, b.mutations or [], ts, strict=True) for b in batches]
        puts = [p for _, p in pairs if p is not None]
        deletes = [d for d, _ in pairs if d is not None]
        self.cluster.mutate(_name(table), puts + deletes)

    def atomicIncrement(self, table: bytes, row: bytes, column: bytes, amount: int) -> int:
        family, qualifier = parse_column(column)
        cell = self.cluster.increment(_name(table), row, family, qualifier or b"", amount)
        return int.from_bytes(cell.value, "big", signed=True)

    def increment(self, inc: Any) -> None:
        self.atomicIncrement(inc.table, inc.row, inc.column, inc.ammount)

    def incrementRows(self, incs: list[Any]) -> None:
        for inc in incs:
            self.increment(inc)

    def append(self, app: Any) -> list[Any]:
        out = []
        for column, value in zip(app.columns, app.values, strict=True):
            family, qualifier = parse_column(column)
            out.append(self.cluster.append(_name(app.table), app.row, family,
                                           qualifier or b"", value))
        return _tcells(out)

    def deleteAll(self, table: bytes, row: bytes, column: bytes, attrs: Any) -> None:
        self.deleteAllTs(table, row, column, LATEST_TIMESTAMP, attrs)

    def deleteAllTs(self, table: bytes, row: bytes, column: bytes, ts: int, attrs: Any) -> None:
        family, qualifier = parse_column(column)
        kind = CellType.DELETE_FAMILY if qualifier is None else CellType.DELETE_COLUMN
        cell = ClientCell(family, qualifier or b"", ts, kind)
        self.cluster.mutate(_name(table), [Mutation(row, (cell,))])

    def deleteAllRow(self, table: bytes, row: bytes, attrs: Any) -> None:
        self.deleteAllRowTs(table, row, LATEST_TIMESTAMP, attrs)

    def deleteAllRowTs(self, table: bytes, row: bytes, ts: int, attrs: Any) -> None:
        self.cluster.mutate(_name(table), [Mutation(row, whole_row=True, row_timestamp=ts)])

    # --- scanners -----------------------------------------------------------------------
    def scannerOpenWithScan(self, table: bytes, scan: Any, attrs: Any) -> int:
        if scan.filterString:
            raise IllegalArgumentError("filter strings are not supported by this cluster")
        query = Query(start=scan.startRow or b"", stop=scan.stopRow or b"",
                      max_ts=scan.timestamp if scan.timestamp is not None else LATEST_TIMESTAMP,
                      batch=scan.batchSize or 0, reversed=bool(scan.reversed))
        return self._open(table, _selection(query, scan.columns), bool(scan.sortColumns))

    def scannerOpen(self, table: bytes, start: bytes, columns: list[bytes], attrs: Any) -> int:
        return self._open(table, _selection(Query(start=start), columns))

    def scannerOpenWithStop(self, table: bytes, start: bytes, stop: bytes, columns: list[bytes],
                            attrs: Any) -> int:
        return self._open(table, _selection(Query(start=start, stop=stop), columns))

    def scannerOpenWithPrefix(self, table: bytes, prefix: bytes, columns: list[bytes],
                              attrs: Any) -> int:
        return self._open(table, _selection(Query(start=prefix, prefix=prefix), columns))

    def scannerOpenTs(self, table: bytes, start: bytes, columns: list[bytes], ts: int,
                      attrs: Any) -> int:
        return self._open(table, _selection(Query(start=start, max_ts=ts), columns))

    def scannerOpenWithStopTs(self, table: bytes, start: bytes, stop: bytes,
                              columns: list[bytes], ts: int, attrs: Any) -> int:
        return self._open(table, _selection(Query(start=start, stop=stop, max_ts=ts), columns))

    def _open(self, table: bytes, query: Query, sort_columns: bool = False) -> int:
        results = self.cluster.scan(_name(table), query)
        first = next(results, None)  # fail now (unknown table, family) rather than later

        def rows() -> Any:
            if first is not None:
                yield _row_result(first, sort_columns)
                for cells in results:
                    yield _row_result(cells, sort_columns)
        return self.scanners.open(rows())

    def scannerGetList(self, scanner_id: int, count: int) -> list[Any]:
        rows = self.scanners.next(scanner_id, count)
        if rows is None:
            raise IllegalArgumentError("scanner ID is invalid")
        return rows

    def scannerGet(self, scanner_id: int) -> list[Any]:
        return self.scannerGetList(scanner_id, 1)

    def scannerClose(self, scanner_id: int) -> None:
        if not self.scanners.close(scanner_id):
            raise IllegalArgumentError("scanner ID is invalid")


def make_handler(cluster: Cluster) -> tuple[object, Thrift1Handler]:
    """(the object to serve, the handler behind it)."""
    impl = Thrift1Handler(cluster)
    return bind_handler(SERVICE, impl, translate), impl
