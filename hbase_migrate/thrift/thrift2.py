"""A typed client of HBase's Thrift2 gateway (THBaseService), the exact write path.

Thrift2 carries a timestamp per cell and every delete type, so WAL cells map one to one
(:mod:`hbase_migrate.thrift.mutations`, written by :meth:`Thrift2Client.write_cells`),
tags aside: HBase's gateway builds a put's cells without a TColumnValue's tags
(``ThriftUtilities.putFromThrift``), so none are sent; a read keeps those it gets.
Calls that fail on the transport are retried with exponential backoff on a new
connection, the gateway's endpoint looked up again first (``locate``: a gateway restarted on
new ports is found on the next attempt). An error answered by the server is retried the
same way only when the one classification (:func:`~hbase_migrate.cluster.retry.classify_thrift`:
HBase's ``canRetry``, not a DoNotRetryIOException, and no cause that never succeeds) says
so and the call is idempotent (reads; puts and deletes carry their timestamps); others
(TIllegalArgument, a missing table, a create) are not. What stays unreachable raises
:class:`Thrift2UnreachableError`, and the next call then makes a single attempt until one
succeeds (a gateway known to be down is not waited for call after call).

Calls are sized by bytes (:mod:`hbase_migrate.cluster.sizing`): a scan asks for about
``max_result_bytes`` per call and splits rows wider than that into pieces
(:mod:`hbase_migrate.thrift.thrift2_scan`); ``put_cells`` sends at most
``max_put_bytes`` per ``putMultiple``. A call that times out is retried smaller, at most
``timeout_retries`` times in a row, then fails with one line saying what to change. A
server error's message is cut to its first line (HBase sends Java stack traces). A secured
cluster's connection speaks SASL/GSSAPI (:mod:`hbase_migrate.thrift.sasl`), as the
Thrift1 client's do; with transport ``"http"`` calls are HTTP POSTs
(:mod:`hbase_migrate.thrift.thrift_http`, SPNEGO when secured).
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from types import TracebackType
from typing import Any, Self, TypeVar

from thriftpy2.protocol import TBinaryProtocolFactory, TCompactProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.thrift import TApplicationException, TClient
from thriftpy2.transport import (
    TBufferedTransportFactory,
    TFramedTransportFactory,
    TSocket,
    TTransportException,
)

from hbase_migrate.bytesutil import short_binary
from hbase_migrate.cluster import requests
from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.descriptors import (
    ALL_VERSIONS,
    FOREVER,
    Columns,
    FamilyDescriptor,
    RegionDescriptor,
    TableDescriptor,
)
from hbase_migrate.cluster.endpoints import (
    PROTOCOL_ERRORS,
    RETRIES,
    Locate,
    mismatch,
    parse_host_port,
    reason,
    relocated,
    unreachable,
)
from hbase_migrate.cluster.errors import ClusterError, GatewayUnreachableError
from hbase_migrate.cluster.regions import settled_regions
from hbase_migrate.cluster.retry import Kind, Retry, classify_thrift, first_line
from hbase_migrate.cluster.scanning import kind_of, pieces_of, range_text, resumed_batches
from hbase_migrate.cluster.sizing import (
    DEFAULT_MAX_PUT_BYTES,
    DEFAULT_MAX_RESULT_BYTES,
    DEFAULT_MAX_ROWS,
    DEFAULT_REGION_WAIT,
    DEFAULT_TIMEOUT_RETRIES,
    ClientSettings,
    cells_bytes,
    format_bytes,
)
from hbase_migrate.cluster.waves import Row, RowCells, row_calls, rows_of, stages
from hbase_migrate.tablename import split_table_name
from hbase_migrate.thrift.mutations import deletes_from_rows, puts_from_rows
from hbase_migrate.thrift.sasl import (
    credentials_missing,
    open_secured,
    sasl_required,
    sasl_transport,
)
from hbase_migrate.thrift.thrift2_idl import hbase2
from hbase_migrate.thrift.thrift2_scan import Thrift2Scanner
from hbase_migrate.thrift.thrift_http import http_transport
from hbase_migrate.wal.cells import parse_tags
from hbase_migrate.wal.model import Cell, CellType

log = logging.getLogger(__name__)

GETS_PER_CALL = 1_000  # rows of one getMultiple
RAW_ATTRIBUTE = b"_raw_"  # Scan.RAW_ATTR, Bytes.toBytes(true) for a raw scan
_T = TypeVar("_T")
TRANSPORT_ERRORS = (TTransportException, OSError, EOFError, socket.timeout)
_TRANSPORT_ERRORS = TRANSPORT_ERRORS
# Answers that are no result: an application error, or a reply no Thrift of ours.
_UNREADABLE: tuple[type[Exception], ...] = (TApplicationException, *PROTOCOL_ERRORS)


class Thrift2Error(ClusterError):
    """The gateway refused a call, or stayed unreachable after every retry; ``kind`` says
    what was decided about it (:mod:`hbase_migrate.cluster.retry`)."""

    def __init__(self, message: str, *, endpoint: str | None = None,
                 kind: Kind = Kind.NEVER) -> None:
        super().__init__(message, endpoint=endpoint)
        self.kind = kind


class Thrift2UnreachableError(Thrift2Error, GatewayUnreachableError):
    """Every attempt of a call failed on the transport (refused, reset, timed out)."""

    def __init__(self, message: str, *, endpoint: str | None = None) -> None:
        super().__init__(message, endpoint=endpoint, kind=Kind.OUTAGE)


class PutTimeoutError(Thrift2Error):
    """A put kept timing out, even split down to one cell: the message names the table,
    the row and cell size reached and what to change."""


_PUT = int(CellType.PUT)


def cells_from_result(result: Any) -> list[Cell]:
    """A TResult's cells, with the tags a TColumnValue carries (HBase's gateway sets them
    only for cells its own connection received with tags: none with HBase's default
    ``hbase.client.rpc.codec``, KeyValueCodec)."""
    row, make = result.row, Cell._make
    return [make((row, cv.family, cv.qualifier, cv.timestamp,
                  _PUT if cv.type is None else cv.type, cv.value,
                  () if cv.tags is None else parse_tags(cv.tags, 0, len(cv.tags))))
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
        keep_deleted_cells=_enum_name(hbase2.TKeepDeletedCells, col.keepDeletedCells, "FALSE"),
        encryption=(col.attributes or {}).get(b"ENCRYPTION", b"").decode("utf-8", "replace"),
        **_mob_from(col.attributes or {}))


def _mob_from(attributes: dict[bytes, bytes]) -> dict[str, Any]:
    """The MOB settings among a family's attributes (Thrift2 has no fields of them)."""
    found: dict[str, Any] = {}
    if attributes.get(b"IS_MOB", b"").lower() == b"true":
        found["mob"] = True
    threshold = attributes.get(b"MOB_THRESHOLD", b"")
    if threshold.isdigit():
        found["mob_threshold"] = int(threshold)
    return found


def family_to_thrift(f: FamilyDescriptor) -> Any:
    mob = {b"IS_MOB": b"true", b"MOB_THRESHOLD": str(f.mob_threshold).encode()} if f.mob \
        else None
    return hbase2.TColumnFamilyDescriptor(attributes=mob,
        name=f.name, maxVersions=f.max_versions, minVersions=f.min_versions,
        timeToLive=f.ttl, scope=f.scope, inMemory=f.in_memory,
        blockCacheEnabled=f.block_cache, blockSize=f.block_size,
        compressionType=getattr(hbase2.TCompressionAlgorithm, f.compression, None),
        bloomnFilterType=getattr(hbase2.TBloomFilterType, f.bloom_filter, None),
        dataBlockEncoding=getattr(hbase2.TDataBlockEncoding, f.data_block_encoding, None),
        keepDeletedCells=getattr(hbase2.TKeepDeletedCells, f.keep_deleted_cells, None))


def _put_multiple(table: str, puts: list[Any]) -> Callable[[Any], None]:
    return lambda client: _sent(client.putMultiple)(table.encode(), puts)


def _sent(call: Callable[..., _T]) -> Callable[..., _T]:
    """``call``, counted as a request to the region servers when made
    (:mod:`hbase_migrate.cluster.requests`)."""
    def counted(*args: Any) -> _T:
        requests.sent()
        return call(*args)
    return counted


def server_kind(exc: Any) -> Kind:
    """The kind of an error the gateway answered (it carries no exception class:
    :func:`~hbase_migrate.cluster.retry.classify_thrift`)."""
    return classify_thrift(exc.message, bool(getattr(exc, "canRetry", False)))


def _scan_kind(exc: Exception) -> Kind | None:
    """What a scan does about a failure: a gateway that stayed unreachable through the
    call's own retries (opening a scanner) ends it at once, as any call's would."""
    if isinstance(exc, Thrift2UnreachableError):
        return None
    return kind_of(exc)


def scanner_kind(exc: Any) -> Kind:
    """The kind of an error of ``getScannerRows``: as :func:`server_kind`, and the
    gateway's own refusal of a scanner id it no longer holds (a ``TIllegalArgument`` with
    this message, HBase's ``ThriftHBaseServiceHandler``, no exception behind it) is a lost
    scanner."""
    if isinstance(exc, hbase2.TIllegalArgument) and exc.message == "Invalid scanner Id":
        return Kind.SCANNER
    return server_kind(exc)


class Thrift2Client:
    """One connection to a Thrift2 gateway (not thread-safe: one client per thread)."""

    def __init__(self, endpoint: str, transport: str = "buffered", protocol: str = "binary",
                 timeout: float = 30.0, retries: int = 5, backoff: float = 0.2, *,
                 locate: Locate | None = None,
                 max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
                 max_put_bytes: int = DEFAULT_MAX_PUT_BYTES,
                 timeout_retries: int = DEFAULT_TIMEOUT_RETRIES,
                 security: ClusterSecurity | None = None, cluster: str = "",
                 region_wait: float = DEFAULT_REGION_WAIT) -> None:
        """``locate``, when given, says where the gateway answers now (``host:port``, e.g.
        re-read from the cluster's ``cluster.json``); it is asked before each reconnection.
        ``max_result_bytes`` and ``max_put_bytes`` bound a scan and a put call by bytes;
        ``timeout_retries`` is how often a call that timed out is retried smaller.
        ``security`` (of the cluster named ``cluster``) makes it a SASL/GSSAPI client.
        ``region_wait``: how long :meth:`regions` reads a listing in transition again."""
        self.endpoint = endpoint
        self.host, self.port = parse_host_port(endpoint, "thrift2 endpoint")
        if transport not in ("buffered", "framed", "http") or protocol not in (
                "binary", "compact") or (transport == "http" and protocol != "binary"):
            raise Thrift2Error(f"{endpoint}: unsupported transport/protocol "
                               f"{transport}/{protocol}")
        self.transport, self.protocol = transport, protocol
        self.timeout, self.retries, self.backoff = timeout, retries, backoff
        self.locate = locate
        if max_result_bytes < 1 or max_put_bytes < 1 or timeout_retries < 0:
            raise Thrift2Error(f"{endpoint}: byte budgets must be >= 1 and timeout retries "
                               f">= 0, got {max_result_bytes}, {max_put_bytes}, "
                               f"{timeout_retries}")
        self.max_result_bytes, self.max_put_bytes = max_result_bytes, max_put_bytes
        self.timeout_retries = timeout_retries
        # Kerberos (SASL or SPNEGO), or over HTTP also an unsecured cluster's TLS settings
        self.security = security if security is not None and (
            security.kerberos or transport == "http") else None
        self.cluster = cluster or endpoint
        self.region_wait = region_wait
        self.put_limit = max_put_bytes  # lowered when a put call times out
        self.last_scan: Thrift2Scanner | None = None  # the figures of the latest scan
        self.unreachable = False  # the last call used up its retries on the transport
        self._client: Any = None

    @classmethod
    def with_settings(cls, endpoint: str, settings: ClientSettings, transport: str = "buffered",
                      protocol: str = "binary", *, locate: Locate | None = None,
                      security: ClusterSecurity | None = None, cluster: str = ""
                      ) -> Thrift2Client:
        """A client sized and timed by a migration's ``[gateway]`` settings."""
        return cls(endpoint, transport, protocol, timeout=settings.call_timeout, locate=locate,
                   max_result_bytes=settings.max_result_bytes,
                   max_put_bytes=settings.max_put_bytes,
                   timeout_retries=settings.timeout_retries, security=security,
                   cluster=cluster, region_wait=settings.region_wait)

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
            if self.transport == "http":
                self._client = self._over_http(proto)
                return self._client
            if self.security is not None:
                self._client = self._secured(proto)
                return self._client
            self._client = make_client(hbase2.THBaseService, self.host, self.port,
                                       timeout=int(self.timeout * 1000),
                                       trans_factory=trans, proto_factory=proto)
        return self._client

    def _over_http(self, proto: Any) -> Any:
        """A client whose calls are HTTP POSTs (SPNEGO when the cluster is secured)."""
        http = http_transport(self.host, self.port, self.timeout, security=self.security,
                              cluster=self.cluster, gateway="thrift2")
        http.open()
        return TClient(hbase2.THBaseService, proto.get_protocol(http))

    def _secured(self, proto: Any) -> Any:
        """A client over SASL/GSSAPI (the SASL layer takes the place of the transport)."""
        assert self.security is not None
        sock = TSocket(self.host, self.port,  # type: ignore[no-untyped-call]
                       socket_timeout=int(self.timeout * 1000))
        trans = sasl_transport(self.security, self.host, sock)
        open_secured(trans, sock, self.security, self.cluster, self.endpoint)
        return TClient(hbase2.THBaseService, proto.get_protocol(trans))

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

    def server_error(self, what: str, exc: Any, tries: str = "",
                     kind: Kind = Kind.NEVER) -> Thrift2Error:
        """The error of a call the server answered with TIOError/TIllegalArgument
        (``tries``: how often it was tried, when more than once), carrying ``kind``."""
        return Thrift2Error(f"{self.endpoint}: {what}: {first_line(exc.message)}{tries}",
                            kind=kind)

    def _unreadable(self, what: str, exc: Exception) -> Thrift2Error:
        """The error of a call answered with a TApplicationException, or with a reply that
        is no Thrift of this client's transport and protocol (the connection is closed)."""
        if isinstance(exc, TApplicationException):
            return Thrift2Error(f"{self.endpoint}: {what}: {first_line(exc)}")
        self.close()
        return Thrift2Error(mismatch("thrift2", self.endpoint, what, self.transport,
                                     self.protocol, exc))

    def _call(self, what: str, func: Callable[[Any], _T], attempts: int | None = None,
              raise_timeouts: bool = False, idempotent: bool = False) -> _T:
        """Run ``func(client)`` in the one retry loop (:mod:`hbase_migrate.cluster.retry`),
        reconnecting (to where ``locate`` says) after a transport error: ``retries`` times,
        or not at all while the gateway is known to be unreachable; an ``idempotent`` call
        also after a server error classified as worth retrying. With ``raise_timeouts``, a
        call that timed out raises TimeoutError at once (the caller retries it smaller)."""
        if attempts is None:
            attempts = 1 if self.unreachable else self.retries + 1
        retry = Retry(f"{self.endpoint}: {what}", partial(self._give_up, what),
                      attempts=max(attempts, self.retries + 1), backoff=self.backoff,
                      max_backoff=10.0, counter=RETRIES, count_as="thrift2",
                      level=logging.WARNING)
        while True:
            if retry.attempt or self.unreachable:
                self.relocate()
            try:
                result = func(self._connect())
            except (hbase2.TIOError, hbase2.TIllegalArgument) as exc:
                self.unreachable = False
                retry.failed(exc, server_kind(exc) if idempotent else Kind.NEVER)
            except _UNREADABLE as exc:
                self.unreachable = False
                raise self._unreadable(what, exc) from exc
            except _TRANSPORT_ERRORS as exc:
                self.close()
                if not retry.attempt and self.security is None and self.transport != "http" \
                        and sasl_required(self.host, self.port):
                    raise credentials_missing(self.cluster, "thrift2", self.endpoint) from exc
                if raise_timeouts and isinstance(exc, TimeoutError):
                    self.unreachable = False
                    raise
                retry.failed(exc, Kind.OUTAGE, attempts)
            else:
                self.unreachable = False
                return result

    def _give_up(self, what: str, exc: Exception, kind: Kind, tried: str) -> Thrift2Error:
        """The final error of a call: unreachable (an outage), or what the server said."""
        if kind is Kind.OUTAGE:
            self.unreachable = True
            return Thrift2UnreachableError(unreachable("thrift2", self.endpoint, what, tried, exc),
                                           endpoint=str(self.endpoint))
        return self.server_error(what, exc, tried, kind)

    # --- writes -------------------------------------------------------------------------

    def put_cells(self, table: str, cells: Sequence[Cell], durability: int | None = None) -> None:
        """Write Put cells with their own timestamps (:meth:`put_rows`, a row's cells
        gathered in one TPut)."""
        for call in row_calls(rows_of(cells)):
            self.put_rows(table, call, durability)

    def put_rows(self, table: str, rows: Sequence[Row], durability: int | None = None) -> None:
        """Write a call's rows of Put cells with their own timestamps: one TPut per row, one
        ``putMultiple`` per ``max_put_bytes`` of cells. A call that times out is sent again in
        parts of half its bytes (puts are idempotent: original timestamps), and later calls
        stay that small; at most ``timeout_retries`` timeouts in a row."""
        pending = list(reversed(list(stages(rows, self.put_limit))))
        failures = 0
        while pending:
            part = pending.pop()
            try:
                self._call(f"putMultiple {table}",
                           _put_multiple(table, puts_from_rows(part, durability)),
                           raise_timeouts=True, idempotent=True)
            except TimeoutError as exc:
                failures += 1
                size = sum(cells_bytes(cells) for _, cells in part)
                count = sum(len(cells) for _, cells in part)
                if failures > self.timeout_retries:
                    raise PutTimeoutError(
                        f"thrift2 gateway {self.endpoint}: putMultiple into table {table} "
                        f"timed out {failures} times in a row at row "
                        f"{short_binary(part[0][0])} ({count} cell(s), "
                        f"{format_bytes(size)}); raise [gateway] call_timeout (now "
                        f"{self.timeout:g} s) or lower [gateway] max_put_bytes (now "
                        f"{format_bytes(self.max_put_bytes)})") from exc
                self.put_limit = max(1, min(self.put_limit, size // 2))
                log.warning("%s: putMultiple into %s of %d cell(s) (%s) timed out (%d of %d); "
                            "sending it again in calls of at most %s", self.endpoint, table,
                            count, format_bytes(size), failures, self.timeout_retries,
                            format_bytes(self.put_limit))
                pending += reversed(list(stages(part, self.put_limit)))
            else:
                failures = 0

    def delete_multiple(self, table: str, deletes: Sequence[Any]) -> None:
        """Send Thrift2 ``TDelete`` structs in one ``deleteMultiple`` call."""
        if deletes:
            self._call(f"deleteMultiple {table}",
                       lambda c: _sent(c.deleteMultiple)(table.encode(), list(deletes)),
                       idempotent=True)

    def write_cells(self, table: str, cells: Sequence[Cell]) -> int:
        """:meth:`write_rows` of cells in their order."""
        return self.write_rows(table, rows_of(cells))

    def write_rows(self, table: str, batch: Sequence[RowCells]) -> int:
        """Write a batch of row mutations exactly, each row's in the order given
        (:mod:`hbase_migrate.thrift.mutations`): puts and deletes in calls of their own, as
        few as that order allows. Returns how many groups of calls were made."""
        calls = row_calls(batch)
        for call in calls:
            if call[0][1][0].type == CellType.PUT:
                self.put_rows(table, call)
            else:
                self.delete_multiple(table, deletes_from_rows(call))
        return len(calls)

    # --- reads --------------------------------------------------------------------------

    def get(self, table: str, row: bytes, columns: Columns | None = None,
            time_range: tuple[int, int] | None = None,
            max_versions: int = ALL_VERSIONS) -> list[Cell]:
        """The row's visible cells, every retained version unless ``max_versions``."""
        tget = hbase2.TGet(row=row, columns=_tcolumns(columns), maxVersions=max_versions,
                           timeRange=hbase2.TTimeRange(*time_range) if time_range else None)
        result = self._call(f"get {table}", lambda c: _sent(c.get)(table.encode(), tget),
                            idempotent=True)
        return cells_from_result(result)

    def get_rows(self, table: str, rows: Sequence[bytes]) -> list[list[Cell]]:
        """Each row's visible cells, ``GETS_PER_CALL`` rows per ``getMultiple``."""
        found: list[list[Cell]] = []
        for at in range(0, len(rows), GETS_PER_CALL):
            tgets = [hbase2.TGet(row=row, maxVersions=ALL_VERSIONS)
                     for row in rows[at:at + GETS_PER_CALL]]

            def call(c: Any, tgets: list[Any] = tgets) -> list[Any]:
                return list(_sent(c.getMultiple)(table.encode(), tgets))
            found += [cells_from_result(r) for r in self._call(
                f"getMultiple {table}", call, idempotent=True)]
        return found

    def scan(self, table: str, start: bytes = b"", stop: bytes = b"",
             columns: Columns | None = None, time_range: tuple[int, int] | None = None,
             max_versions: int = ALL_VERSIONS, rows_per_call: int = DEFAULT_MAX_ROWS,
             raw: bool = False) -> Iterator[list[Cell]]:
        """:meth:`scan_batches`' pieces one by one."""
        return pieces_of(self.scan_batches(table, start, stop, columns, time_range,
                                           max_versions, rows_per_call, raw))

    def scan_batches(self, table: str, start: bytes = b"", stop: bytes = b"",
                     columns: Columns | None = None,
                     time_range: tuple[int, int] | None = None,
                     max_versions: int = ALL_VERSIONS, rows_per_call: int = DEFAULT_MAX_ROWS,
                     raw: bool = False) -> Iterator[list[list[Cell]]]:
        """The cells of ``[start, stop)`` in HBase's order, a call's at a time, as
        *pieces*: lists of cells of one row. A row is one piece unless it is wider than
        ``max_result_bytes``; then it comes as consecutive pieces (a caller counting rows
        counts changes of row key).
        Calls ask for about ``max_result_bytes`` (at most ``rows_per_call`` Results); a
        call that fails on the transport reopens the scanner where the last piece ended,
        asking for less, at most ``timeout_retries`` times in a row
        (:class:`~hbase_migrate.thrift.thrift2_scan.ScanFailedError`). ``raw``: delete
        markers and the cells they hide too (the scan attribute HBase's ``Scan.setRaw`` sets).
        The blocks read stay out of the region server's block cache, as with the native
        client."""
        trange = hbase2.TTimeRange(*time_range) if time_range else None
        tcolumns = _tcolumns(columns)
        attributes = {RAW_ATTRIBUTE: b"\xff"} if raw else None

        def make_tscan(start_row: bytes, batch: int) -> Any:
            return hbase2.TScan(startRow=start_row, stopRow=stop or None, columns=tcolumns,
                                maxVersions=max_versions, timeRange=trange, batchSize=batch,
                                attributes=attributes, cacheBlocks=False)

        scanner = Thrift2Scanner(self, table, start, stop, make_tscan, cells_from_result,
                                 rows_per_call)
        self.last_scan = scanner
        retry = Retry(f"{self.endpoint}: scan {table} {range_text(start, stop)}",
                      scanner.give_up, attempts=self.timeout_retries + 1,
                      max_backoff=1.0, level=logging.WARNING)
        return resumed_batches(scanner, start, retry, _scan_kind)

    def open_scanner(self, table: str, tscan: Any) -> int:
        """Open a scanner on the gateway (retried as any idempotent call): its id."""
        return int(self._call(f"openScanner {table}",
                              lambda c: _sent(c.openScanner)(table.encode(), tscan),
                              idempotent=True))

    def scanner_rows(self, table: str, scanner_id: int, rows: int) -> list[Any]:
        """One ``getScannerRows`` call, not retried: a failure raises a
        :class:`Thrift2Error` carrying its kind (the gateway lost the scanner: SCANNER; the
        transport failed: OUTAGE, the connection closed, the cause a TimeoutError when the
        call timed out)."""
        try:
            results: list[Any] = _sent(self._connect().getScannerRows)(scanner_id, rows)
        except (hbase2.TIOError, hbase2.TIllegalArgument) as exc:
            raise self.server_error(f"scan {table}", exc, kind=scanner_kind(exc)) from exc
        except _TRANSPORT_ERRORS as exc:
            self.close()
            raise Thrift2Error(f"{self.endpoint}: scan {table}: {reason(exc)}",
                               kind=Kind.OUTAGE) from exc
        return results

    def close_scanner(self, scanner_id: int) -> None:
        """Close a scanner on the gateway; a failure closes the connection instead."""
        if self._client is None:
            return
        try:
            self._client.closeScanner(scanner_id)
        except (hbase2.TIOError, hbase2.TIllegalArgument, TApplicationException,
                *_TRANSPORT_ERRORS):
            self.close()

    # --- schema and regions -------------------------------------------------------------

    def table_exists(self, table: str) -> bool:
        return bool(self._call(f"tableExists {table}", lambda c: c.tableExists(_ttable(table)),
                               idempotent=True))

    def table_descriptor(self, table: str) -> TableDescriptor:
        desc = self._call(f"getTableDescriptor {table}",
                          lambda c: c.getTableDescriptor(_ttable(table)), idempotent=True)
        families = tuple(family_from_thrift(col) for col in desc.columns or ())
        attributes = tuple(sorted((desc.attributes or {}).items()))
        return TableDescriptor(table, families, attributes)

    def create_table(self, desc: TableDescriptor, split_keys: Sequence[bytes] = ()) -> None:
        tdesc = hbase2.TTableDescriptor(
            tableName=_ttable(desc.name), columns=[family_to_thrift(f) for f in desc.families],
            attributes=dict(desc.attributes) or None)  # the table's own, as over native
        self._call(f"createTable {desc.name}",
                   lambda c: c.createTable(tdesc, list(split_keys) or None))

    def namespaces(self) -> list[str]:
        return list(self._call("listNamespaces", lambda c: c.listNamespaces(),
                               idempotent=True))

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
                               lambda c: c.isTableEnabled(_ttable(table)), idempotent=True))

    def regions(self, table: str) -> list[RegionDescriptor]:
        """The table's regions sorted by start key, with the server holding each: a
        consistent listing, a region in transition waited for at most ``region_wait``
        seconds (:mod:`hbase_migrate.cluster.regions`)."""
        return settled_regions(lambda: self.listed_regions(table), table, self.cluster,
                               self.region_wait)

    def listed_regions(self, table: str) -> list[RegionDescriptor]:
        """One ``getAllRegionLocations`` call, as the gateway answers it (sorted)."""
        locations = self._call(f"getAllRegionLocations {table}",
                               lambda c: c.getAllRegionLocations(table.encode()),
                               idempotent=True)
        regions = [self._region(table, loc) for loc in locations]
        return sorted(regions, key=lambda r: r.start_key)

    def region_for(self, table: str, row: bytes) -> RegionDescriptor:
        loc = self._call(f"getRegionLocation {table}",
                         lambda c: c.getRegionLocation(table.encode(), row, False),
                         idempotent=True)
        return self._region(table, loc)

    @staticmethod
    def _region(table: str, loc: Any) -> RegionDescriptor:
        info, server = loc.regionInfo, loc.serverName
        if server is None:  # a region no server holds (in transition)
            return RegionDescriptor(table, info.startKey or b"", info.endKey or b"",
                                    info.regionId or 0)
        return RegionDescriptor(table, info.startKey or b"", info.endKey or b"", info.regionId,
                                server.hostName or "", server.port or 0, server.startCode or 0)
