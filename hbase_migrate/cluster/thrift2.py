"""A typed client of HBase's Thrift2 gateway (THBaseService), the exact write path.

Thrift2 carries a timestamp per cell and every delete type, so WAL cells map one to one:
Put -> TColumnValue with its timestamp; Delete(8) -> DELETE_COLUMN, DeleteColumn(12) ->
DELETE_COLUMNS, DeleteFamily(14) -> DELETE_FAMILY, DeleteFamilyVersion(10) ->
DELETE_FAMILY_VERSION, each TColumn with its own timestamp (the server then ignores the
TDelete's). Calls that fail on the transport are retried with exponential backoff on a new
connection, the gateway's endpoint looked up again first (``locate``: a gateway restarted on
new ports is found on the next attempt); an error answered by the server (TIOError,
TIllegalArgument) is not retried. What stays unreachable raises
:class:`Thrift2UnreachableError`, and the next call then makes a single attempt until one
succeeds (a gateway known to be down is not waited for call after call).
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

import thriftpy2
from thriftpy2.protocol import TBinaryProtocolFactory, TCompactProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.thrift import TApplicationException
from thriftpy2.transport import (
    TBufferedTransportFactory,
    TFramedTransportFactory,
    TTransportException,
)

from hbase_migrate.cluster.descriptors import (
    FOREVER,
    FamilyDescriptor,
    RegionDescriptor,
    TableDescriptor,
)
from hbase_migrate.cluster.endpoints import Locate, parse_host_port, reason, relocated, tried
from hbase_migrate.cluster.errors import ClusterError, GatewayUnreachableError
from hbase_migrate.tablename import split_table_name
from hbase_migrate.wal.model import Cell, CellType

log = logging.getLogger(__name__)

IDL_PATH = Path(__file__).with_name("hbase2.thrift")
hbase2: Any = thriftpy2.load(str(IDL_PATH), module_name="hbase2_thrift")

ALL_VERSIONS = FOREVER  # the server caps versions at each family's VERSIONS
Columns = Sequence[tuple[bytes, bytes | None]]  # (family, qualifier or None = whole family)
_T = TypeVar("_T")
_TRANSPORT_ERRORS = (TTransportException, OSError, EOFError, socket.timeout)


class Thrift2Error(ClusterError):
    """The gateway refused a call, or stayed unreachable after every retry."""


class Thrift2UnreachableError(Thrift2Error, GatewayUnreachableError):
    """Every attempt of a call failed on the transport (refused, reset, timed out)."""


def puts_from_cells(cells: Sequence[Cell], durability: int | None = None) -> list[Any]:
    """One TPut per row (rows in order of first appearance), each cell with its timestamp."""
    by_row: dict[bytes, list[Any]] = {}
    for c in cells:
        if c.type != CellType.PUT:
            raise ValueError(f"not a Put cell: type {c.type} at row {c.row!r}")
        by_row.setdefault(c.row, []).append(hbase2.TColumnValue(
            family=c.family, qualifier=c.qualifier, value=c.value, timestamp=c.timestamp))
    return [hbase2.TPut(row=row, columnValues=values, durability=durability)
            for row, values in by_row.items()]


def cells_from_result(result: Any) -> list[Cell]:
    return [Cell(result.row, cv.family, cv.qualifier, cv.timestamp,
                 cv.type if cv.type is not None else CellType.PUT, cv.value)
            for cv in result.columnValues or ()]


def _tcolumns(columns: Columns | None) -> list[Any] | None:
    if columns is None:
        return None
    return [hbase2.TColumn(family=f, qualifier=q) for f, q in columns]


def _ttable(name: str) -> Any:
    ns, qualifier = split_table_name(name)
    return hbase2.TTableName(ns=ns.encode(), qualifier=qualifier.encode())


def _enum_name(enum: Any, value: int | None, default: str) -> str:
    return str(enum._VALUES_TO_NAMES.get(value, default)) if value is not None else default


def family_from_thrift(col: Any) -> FamilyDescriptor:
    d = FamilyDescriptor(name=col.name)
    return FamilyDescriptor(
        name=col.name, max_versions=col.maxVersions or d.max_versions,
        min_versions=col.minVersions or 0,
        ttl=col.timeToLive if col.timeToLive and col.timeToLive > 0 else FOREVER,
        scope=col.scope or 0,
        compression=_enum_name(hbase2.TCompressionAlgorithm, col.compressionType, "NONE"),
        bloom_filter=_enum_name(hbase2.TBloomFilterType, col.bloomnFilterType, "ROW"),
        in_memory=bool(col.inMemory),
        block_cache=d.block_cache if col.blockCacheEnabled is None else col.blockCacheEnabled,
        block_size=col.blockSize or d.block_size,
        data_block_encoding=_enum_name(hbase2.TDataBlockEncoding, col.dataBlockEncoding,
                                       "NONE"),
        keep_deleted_cells=_enum_name(hbase2.TKeepDeletedCells, col.keepDeletedCells, "FALSE"))


def family_to_thrift(f: FamilyDescriptor) -> Any:
    return hbase2.TColumnFamilyDescriptor(
        name=f.name, maxVersions=f.max_versions, minVersions=f.min_versions,
        timeToLive=f.ttl, scope=f.scope, inMemory=f.in_memory,
        blockCacheEnabled=f.block_cache, blockSize=f.block_size,
        compressionType=getattr(hbase2.TCompressionAlgorithm, f.compression, None),
        bloomnFilterType=getattr(hbase2.TBloomFilterType, f.bloom_filter, None),
        dataBlockEncoding=getattr(hbase2.TDataBlockEncoding, f.data_block_encoding, None),
        keepDeletedCells=getattr(hbase2.TKeepDeletedCells, f.keep_deleted_cells, None))


def _open_scanner(table: bytes, tscan: Any) -> Callable[[Any], int]:
    return lambda client: int(client.openScanner(table, tscan))


class Thrift2Client:
    """One connection to a Thrift2 gateway (not thread-safe: one client per thread)."""

    def __init__(self, endpoint: str, transport: str = "buffered", protocol: str = "binary",
                 timeout: float = 30.0, retries: int = 5, backoff: float = 0.2, *,
                 locate: Locate | None = None) -> None:
        """``locate``, when given, says where the gateway answers now (``host:port``, e.g.
        re-read from the cluster's ``cluster.json``); it is asked before each reconnection."""
        self.endpoint = endpoint
        self.host, self.port = parse_host_port(endpoint, "thrift2 endpoint")
        if transport not in ("buffered", "framed") or protocol not in ("binary", "compact"):
            raise Thrift2Error(f"{endpoint}: unsupported transport/protocol "
                               f"{transport}/{protocol}")
        self.transport, self.protocol = transport, protocol
        self.timeout, self.retries, self.backoff = timeout, retries, backoff
        self.locate = locate
        self.unreachable = False  # the last call used up its retries on the transport
        self._client: Any = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        if self._client is not None:
            try:
                self._client.close()
            finally:
                self._client = None

    def _connect(self) -> Any:
        if self._client is None:
            trans = (TFramedTransportFactory() if self.transport == "framed"
                     else TBufferedTransportFactory())
            proto = (TCompactProtocolFactory() if self.protocol == "compact"  # type: ignore[no-untyped-call]
                     else TBinaryProtocolFactory())  # type: ignore[no-untyped-call]
            self._client = make_client(hbase2.THBaseService, self.host, self.port,
                                       timeout=int(self.timeout * 1000),
                                       trans_factory=trans, proto_factory=proto)
        return self._client

    def relocate(self) -> None:
        """Ask ``locate`` where the gateway answers now; switch to it (closing the
        connection) when it moved. A lookup that fails keeps the current endpoint."""
        found = relocated(self.locate, self.endpoint, "thrift2")
        if found is not None:
            self.close()
            self.endpoint, (self.host, self.port) = found

    def probe(self, attempts: int = 1) -> None:
        """One round trip to the gateway, retried at most ``attempts - 1`` times: raises
        :class:`Thrift2UnreachableError` when it cannot be reached (an error the server
        answers still proves it reachable)."""
        try:
            self._call("connect",
                       lambda c: c.tableExists(_ttable("hbase:meta")), attempts)
        except Thrift2UnreachableError:
            raise
        except Thrift2Error:
            pass

    def _call(self, what: str, func: Callable[[Any], _T], attempts: int | None = None) -> _T:
        """Run ``func(client)``, reconnecting (to where ``locate`` says) and retrying on
        transport errors: ``retries`` times, or not at all while the gateway is known to be
        unreachable."""
        if attempts is None:
            attempts = 1 if self.unreachable else self.retries + 1
        delay, began = self.backoff, time.monotonic()
        for attempt in range(attempts):
            if attempt or self.unreachable:
                self.relocate()
            try:
                result = func(self._connect())
            except (hbase2.TIOError, hbase2.TIllegalArgument) as exc:
                self.unreachable = False
                raise Thrift2Error(f"{self.endpoint}: {what}: {exc.message}") from exc
            except TApplicationException as exc:
                self.unreachable = False
                raise Thrift2Error(f"{self.endpoint}: {what}: {exc}") from exc
            except _TRANSPORT_ERRORS as exc:
                self.close()
                if attempt + 1 >= attempts:
                    self.unreachable = True
                    raise Thrift2UnreachableError(
                        f"thrift2 gateway {self.endpoint}: {what}: unreachable"
                        f"{tried(attempt + 1, began)}: {reason(exc)}") from exc
                log.warning("%s: %s failed (%s); retrying in %.1fs", self.endpoint, what, exc,
                            delay)
                time.sleep(delay)
                delay = min(delay * 2, 10.0)
            else:
                self.unreachable = False
                return result
        raise AssertionError("unreachable")

    # --- writes -------------------------------------------------------------------------

    def put_cells(self, table: str, cells: Sequence[Cell], durability: int | None = None) -> None:
        """Write Put cells with their own timestamps (one TPut per row, one call)."""
        if cells:
            puts = puts_from_cells(cells, durability)
            self._call(f"putMultiple {table}",
                       lambda c: c.putMultiple(table.encode(), puts))

    def delete_multiple(self, table: str, deletes: Sequence[Any]) -> None:
        """Send Thrift2 ``TDelete`` structs in one ``deleteMultiple`` call."""
        if deletes:
            self._call(f"deleteMultiple {table}",
                       lambda c: c.deleteMultiple(table.encode(), list(deletes)))

    # --- reads --------------------------------------------------------------------------

    def get(self, table: str, row: bytes, columns: Columns | None = None,
            time_range: tuple[int, int] | None = None,
            max_versions: int = ALL_VERSIONS) -> list[Cell]:
        """The row's visible cells, every retained version unless ``max_versions``."""
        tget = hbase2.TGet(row=row, columns=_tcolumns(columns), maxVersions=max_versions,
                           timeRange=hbase2.TTimeRange(*time_range) if time_range else None)
        result = self._call(f"get {table}", lambda c: c.get(table.encode(), tget))
        return cells_from_result(result)

    def scan(self, table: str, start: bytes = b"", stop: bytes = b"",
             columns: Columns | None = None, time_range: tuple[int, int] | None = None,
             max_versions: int = ALL_VERSIONS, rows_per_call: int = 500) -> Iterator[list[Cell]]:
        """Rows in ``[start, stop)`` as lists of cells, fetched ``rows_per_call`` at a time.
        A transport error reopens the scanner after the last row returned."""
        next_start = start
        while True:
            tscan = hbase2.TScan(startRow=next_start, stopRow=stop or None,
                                 columns=_tcolumns(columns), maxVersions=max_versions,
                                 timeRange=hbase2.TTimeRange(*time_range) if time_range else None)
            scanner_id: int = self._call(f"openScanner {table}",
                                         _open_scanner(table.encode(), tscan))
            try:
                while True:
                    batch = self._client_rows(table, scanner_id, rows_per_call)
                    if batch is None:
                        break  # reopen after the last row seen
                    if not batch:
                        return
                    for result in batch:
                        cells = cells_from_result(result)
                        next_start = cells[0].row + b"\x00"
                        yield cells
            finally:
                self._close_scanner(scanner_id)

    def _client_rows(self, table: str, scanner_id: int, count: int) -> list[Any] | None:
        try:
            rows: list[Any] = self._connect().getScannerRows(scanner_id, count)
            return rows
        except (hbase2.TIOError, hbase2.TIllegalArgument) as exc:
            raise Thrift2Error(f"{self.endpoint}: scan {table}: {exc.message}") from exc
        except _TRANSPORT_ERRORS as exc:
            log.warning("%s: scan %s interrupted (%s); reopening", self.endpoint, table, exc)
            self.close()
            return None

    def _close_scanner(self, scanner_id: int) -> None:
        if self._client is None:
            return
        try:
            self._client.closeScanner(scanner_id)
        except (hbase2.TIOError, hbase2.TIllegalArgument, *_TRANSPORT_ERRORS):
            self.close()

    # --- schema and regions -------------------------------------------------------------

    def table_exists(self, table: str) -> bool:
        return bool(self._call(f"tableExists {table}", lambda c: c.tableExists(_ttable(table))))

    def table_descriptor(self, table: str) -> TableDescriptor:
        desc = self._call(f"getTableDescriptor {table}",
                          lambda c: c.getTableDescriptor(_ttable(table)))
        families = tuple(family_from_thrift(col) for col in desc.columns or ())
        attributes = tuple(sorted((desc.attributes or {}).items()))
        return TableDescriptor(table, families, attributes)

    def create_table(self, desc: TableDescriptor, split_keys: Sequence[bytes] = ()) -> None:
        tdesc = hbase2.TTableDescriptor(
            tableName=_ttable(desc.name), columns=[family_to_thrift(f) for f in desc.families])
        self._call(f"createTable {desc.name}",
                   lambda c: c.createTable(tdesc, list(split_keys) or None))

    def namespaces(self) -> list[str]:
        return list(self._call("listNamespaces", lambda c: c.listNamespaces()))

    def create_namespace(self, namespace: str) -> None:
        self._call(f"createNamespace {namespace}", lambda c: c.createNamespace(
            hbase2.TNamespaceDescriptor(name=namespace)))

    def delete_table(self, table: str) -> None:
        self._call(f"deleteTable {table}", lambda c: c.deleteTable(_ttable(table)))

    def enable_table(self, table: str) -> None:
        self._call(f"enableTable {table}", lambda c: c.enableTable(_ttable(table)))

    def disable_table(self, table: str) -> None:
        self._call(f"disableTable {table}", lambda c: c.disableTable(_ttable(table)))

    def is_table_enabled(self, table: str) -> bool:
        return bool(self._call(f"isTableEnabled {table}",
                               lambda c: c.isTableEnabled(_ttable(table))))

    def regions(self, table: str) -> list[RegionDescriptor]:
        """The table's regions sorted by start key, with the server holding each."""
        locations = self._call(f"getAllRegionLocations {table}",
                               lambda c: c.getAllRegionLocations(table.encode()))
        regions = [self._region(table, loc) for loc in locations]
        return sorted(regions, key=lambda r: r.start_key)

    def region_for(self, table: str, row: bytes) -> RegionDescriptor:
        loc = self._call(f"getRegionLocation {table}",
                         lambda c: c.getRegionLocation(table.encode(), row, False))
        return self._region(table, loc)

    @staticmethod
    def _region(table: str, loc: Any) -> RegionDescriptor:
        info, server = loc.regionInfo, loc.serverName
        return RegionDescriptor(table, info.startKey or b"", info.endKey or b"", info.regionId,
                                server.hostName, server.port or 0, server.startCode or 0)
