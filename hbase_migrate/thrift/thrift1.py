"""A typed client of HBase's Thrift1 gateway, over happybase: reads, DDL and regions.

A small pool of ours lends happybase connections and replaces one after a failed call. This
adapter retries calls that failed on the transport (not scans already under way) with
backoff, on a new pool when ``locate`` says the gateway moved (restarted on a new port);
turns the gateway's IOError / IllegalArgument into :class:`Thrift1Error`, and one that stays
unreachable into :class:`Thrift1UnreachableError`, after which the next call makes a single
attempt until one succeeds. Thrift1 reads see only the newest version of each column in
scans; use the Thrift2 client for every version. A secured cluster's connections speak
SASL/GSSAPI (:mod:`hbase_migrate.thrift.sasl`); a client without credentials that reaches
a SASL gateway is told so in one line instead of waiting it out as an outage.
"""

from __future__ import annotations

import logging
import queue
import socket
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from types import TracebackType
from typing import Any, Self, TypeVar

import happybase
from happybase.connection import Hbase
from thriftpy2.thrift import TApplicationException, TClient, TException
from thriftpy2.transport import TSocket, TTransportException

from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.descriptors import (
    FOREVER,
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
    relocated,
    unreachable,
)
from hbase_migrate.cluster.errors import ClusterError, GatewayUnreachableError
from hbase_migrate.cluster.regions import settled_regions
from hbase_migrate.cluster.retry import Kind, Retry
from hbase_migrate.cluster.sizing import DEFAULT_REGION_WAIT
from hbase_migrate.thrift.sasl import (
    credentials_missing,
    open_secured,
    sasl_required,
    sasl_transport,
)
from hbase_migrate.thrift.thrift_http import http_transport
from hbase_migrate.wal.model import Cell, CellType

log = logging.getLogger(__name__)

_T = TypeVar("_T")
_TRANSPORT_ERRORS = (TTransportException, OSError, EOFError, socket.timeout)
Row = dict[bytes, tuple[bytes, int]]  # b"family:qualifier" -> (value, timestamp)


class Thrift1Error(ClusterError):
    """The gateway refused a call, or stayed unreachable after every retry; ``kind`` says
    what was decided about it (:mod:`hbase_migrate.cluster.retry`)."""

    kind = Kind.NEVER


class Thrift1UnreachableError(Thrift1Error, GatewayUnreachableError):
    """Every attempt of a call failed on the transport (refused, reset, timed out)."""

    kind = Kind.OUTAGE


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def family_from_happybase(name: bytes, spec: dict[str, Any]) -> FamilyDescriptor:
    ttl = int(spec.get("time_to_live", FOREVER))
    return FamilyDescriptor(
        name=name, max_versions=int(spec.get("max_versions", 1)),
        ttl=ttl if ttl > 0 else FOREVER,
        compression=_text(spec.get("compression", "NONE")).upper(),
        bloom_filter=_text(spec.get("bloom_filter_type", "NONE")),
        in_memory=bool(spec.get("in_memory", False)),
        block_cache=bool(spec.get("block_cache_enabled", True)))


def split_column(column: bytes) -> tuple[bytes, bytes]:
    family, _, qualifier = column.partition(b":")
    return family, qualifier


class _SecuredConnection(happybase.Connection):  # type: ignore[misc]  # untyped library
    """A happybase connection over SASL/GSSAPI (the SASL layer replaces the transport)."""

    def __init__(self, *, security: ClusterSecurity, cluster: str, **options: Any) -> None:
        self._security, self._cluster = security, cluster
        super().__init__(**options)

    def _refresh_thrift_client(self) -> None:
        self._socket = TSocket(  # type: ignore[no-untyped-call]
            host=self.host, port=self.port, socket_timeout=self.timeout)
        self.transport = sasl_transport(self._security, self.host, self._socket)
        protocol = self._protocol_class(self.transport, decode_response=False)
        self.client = TClient(Hbase, protocol)

    def open(self) -> None:
        if not self.transport.is_open():
            open_secured(self.transport, self._socket, self._security, self._cluster,
                         f"{self.host}:{self.port}")


class _HttpConnection(happybase.Connection):  # type: ignore[misc]  # untyped library
    """A happybase connection over Thrift-over-HTTP (SPNEGO when the cluster is secured)."""

    def __init__(self, *, security: ClusterSecurity | None, cluster: str, **options: Any
                 ) -> None:
        self._security, self._cluster = security, cluster
        super().__init__(**{**options, "transport": "buffered"})  # happybase's check

    def _refresh_thrift_client(self) -> None:
        self.transport = http_transport(
            self.host, self.port, self.timeout / 1000 if self.timeout else None,
            security=self._security, cluster=self._cluster, gateway="thrift")
        protocol = self._protocol_class(self.transport, decode_response=False)
        self.client = TClient(Hbase, protocol)


def open_connection(security: ClusterSecurity | None, cluster: str, **options: Any) -> Any:
    """A happybase connection (``options`` as ``happybase.Connection`` takes them, plus
    transport ``"http"``), over SASL/GSSAPI when ``security`` (of the cluster named
    ``cluster``) says Kerberos, or over HTTP (with SPNEGO when it does)."""
    if options.get("transport") == "http":
        return _HttpConnection(security=security, cluster=cluster, **options)
    if security is None or not security.kerberos:
        return happybase.Connection(**options)
    return _SecuredConnection(security=security, cluster=cluster, **options)


class _Pool:
    """``size`` happybase connections to one gateway, each opened on first use and lent to
    one caller at a time (thread-safe). A connection whose call raised is closed and replaced
    by a fresh one (its transport may be broken); :meth:`close` closes them all."""

    def __init__(self, size: int, **options: Any) -> None:
        self._options = options
        self._lock = threading.Lock()
        self._all = [open_connection(**options) for _ in range(size)]
        self._free: queue.LifoQueue[Any] = queue.LifoQueue()
        for conn in self._all:
            self._free.put(conn)

    @contextmanager
    def connection(self) -> Iterator[Any]:
        conn = self._free.get()
        try:
            conn.open()
            yield conn
        except BaseException:
            conn = self._replace(conn)
            raise
        finally:
            self._free.put(conn)

    def _replace(self, conn: Any) -> Any:
        conn.close()
        fresh = open_connection(**self._options)
        with self._lock:
            self._all[self._all.index(conn)] = fresh
        return fresh

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()


class Thrift1Client:
    """A small pool of happybase connections to one Thrift1 gateway (thread-safe)."""

    def __init__(self, endpoint: str, transport: str = "buffered", protocol: str = "binary",
                 timeout: float = 30.0, pool_size: int = 2, retries: int = 3,
                 backoff: float = 0.2, *, locate: Locate | None = None,
                 security: ClusterSecurity | None = None, cluster: str = "",
                 region_wait: float = DEFAULT_REGION_WAIT) -> None:
        """``locate``, when given, says where the gateway answers now (``host:port``, e.g.
        re-read from the cluster's ``cluster.json``); it is asked before each retry.
        ``security`` (of the cluster named ``cluster``) makes it a SASL/GSSAPI client.
        ``region_wait``: how long :meth:`regions` reads a listing in transition again."""
        self.endpoint = endpoint
        self.cluster, self.region_wait = cluster or endpoint, region_wait
        self.retries, self.backoff, self.locate = retries, backoff, locate
        self.unreachable = False  # the last call used up its retries on the transport
        self._pool_options: dict[str, Any] = dict(
            size=pool_size, transport=transport, protocol=protocol,
            timeout=int(timeout * 1000), autoconnect=False,
            security=security if security is not None and (
                security.kerberos or transport == "http") else None,  # http: TLS settings too
            cluster=cluster or endpoint)
        self._lock = threading.Lock()
        self.pool = self._make_pool(*parse_host_port(endpoint, "thrift endpoint"))

    def _make_pool(self, host: str, port: int) -> _Pool:
        return _Pool(host=host, port=port, **self._pool_options)

    def relocate(self) -> None:
        """Ask ``locate`` where the gateway answers now; move the pool there when it moved.
        A lookup that fails keeps the current endpoint."""
        with self._lock:
            found = relocated(self.locate, self.endpoint, "thrift")
            if found is not None:
                self.close()
                self.endpoint, (host, port) = found
                self.pool = self._make_pool(host, port)

    def probe(self, attempts: int = 1) -> None:
        """One round trip to the gateway, retried at most ``attempts - 1`` times: raises
        :class:`Thrift1UnreachableError` when it cannot be reached (an error the server
        answers still proves it reachable)."""
        try:
            self._call("connect", lambda c: c.tables(), attempts)
        except Thrift1UnreachableError:
            raise
        except Thrift1Error:
            pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Close every pooled connection."""
        self.pool.close()

    def _error(self, what: str, exc: Exception) -> Thrift1Error:
        message = getattr(exc, "message", None) or str(exc)
        return Thrift1Error(f"{self.endpoint}: {what}: {_text(message)}")

    def _call(self, what: str, func: Callable[[Any], _T], attempts: int | None = None) -> _T:
        """Run ``func(connection)`` in the one retry loop (:mod:`hbase_migrate.cluster.retry`):
        a transport error is retried on a fresh connection (where ``locate`` says the gateway
        is), ``retries`` times, or not at all while the gateway is known to be unreachable;
        an error the server answers is not (happybase's IOError carries no ``canRetry``)."""
        if attempts is None:
            attempts = 1 if self.unreachable else self.retries + 1
        retry = Retry(f"{self.endpoint}: {what}", partial(self._give_up, what),
                      attempts=attempts, backoff=self.backoff, max_backoff=10.0,
                      counter=RETRIES, count_as="thrift", level=logging.WARNING)
        while True:
            if retry.attempt or self.unreachable:
                self.relocate()
            try:
                with self.pool.connection() as conn:
                    result = func(conn)
            except _TRANSPORT_ERRORS as exc:
                if not retry.attempt and self._pool_options["security"] is None and \
                        self._pool_options["transport"] != "http" and sasl_required(
                        *parse_host_port(self.endpoint, "thrift endpoint")):
                    raise credentials_missing(self._pool_options["cluster"], "thrift",
                                              self.endpoint) from exc
                retry.failed(exc, Kind.OUTAGE)
            except PROTOCOL_ERRORS as exc:
                raise Thrift1Error(mismatch(
                    "thrift", self.endpoint, what, self._pool_options["transport"],
                    self._pool_options["protocol"], exc)) from exc
            except (TApplicationException, TException) as exc:
                self.unreachable = False
                retry.failed(exc, Kind.NEVER)
            else:
                self.unreachable = False
                return result

    def _give_up(self, what: str, exc: Exception, kind: Kind, tried: str) -> Thrift1Error:
        """The final error of a call: unreachable (an outage), or what the server said."""
        if kind is Kind.OUTAGE:
            self.unreachable = True
            return Thrift1UnreachableError(unreachable("thrift", self.endpoint, what, tried, exc),
                                           endpoint=str(self.endpoint))
        return self._error(what, exc)

    # --- schema and regions -------------------------------------------------------------

    def mutate_rows(self, table: str, timestamp: int,
                    rows: Mapping[bytes, Sequence[tuple[bytes, bytes | None]]], *,
                    delete: bool = False) -> None:
        """One ``mutateRowsTs`` call at ``timestamp``: put the (column, value) pairs of each
        row, or with ``delete`` delete those columns (DeleteColumn up to the timestamp)."""
        def send(conn: Any) -> None:
            batch = conn.table(table).batch(timestamp=timestamp)
            for row, columns in rows.items():
                if delete:
                    batch.delete(row, columns=[c for c, _ in columns])
                else:
                    batch.put(row, dict(columns))
            batch.send()

        self._call(f"mutateRowsTs {table}", send)

    def tables(self) -> list[str]:
        """Every table name, ``ns:t`` with the default namespace omitted."""
        names = self._call("getTableNames", lambda c: c.tables())
        return [_text(n) for n in names]

    def table_descriptor(self, table: str) -> TableDescriptor:
        families = self._call(f"getColumnDescriptors {table}",
                              lambda c: c.table(table).families())
        return TableDescriptor(table, tuple(
            family_from_happybase(name, spec) for name, spec in sorted(families.items())))

    def create_table(self, table: str, families: Sequence[FamilyDescriptor]) -> None:
        """Create a table (Thrift1 cannot pass split keys; use Thrift2 for those)."""
        specs = {f.name.decode(): {
            "max_versions": f.max_versions, "compression": f.compression,
            "in_memory": f.in_memory, "bloom_filter_type": f.bloom_filter,
            "block_cache_enabled": f.block_cache,
            "time_to_live": f.ttl} for f in families}
        self._call(f"createTable {table}", lambda c: c.create_table(table, specs))

    def regions(self, table: str) -> list[RegionDescriptor]:
        """The table's regions sorted by start key (empty for an unknown table): a
        consistent listing, a region in transition waited for at most ``region_wait``
        seconds (:mod:`hbase_migrate.cluster.regions`)."""
        return settled_regions(lambda: self.listed_regions(table), table, self.cluster,
                               self.region_wait)

    def listed_regions(self, table: str) -> list[RegionDescriptor]:
        """One ``getTableRegions`` call, as the gateway answers it (sorted)."""
        found = self._call(f"getTableRegions {table}", lambda c: c.table(table).regions())
        regions = [RegionDescriptor(table, r["start_key"], r["end_key"], r["id"],
                                    _text(r["server_name"] or ""), r["port"] or 0,
                                    name=r["name"])
                   for r in found]
        return sorted(regions, key=lambda r: r.start_key)

    def major_compact(self, table_or_region: bytes) -> None:
        """Ask for a major compaction of a table or of one region (its full name). HBase's
        Thrift1 gateway (2.x and 3.x) passes the request on as ``Admin.compact``: the store
        files its compaction policy selects are merged, and delete markers drop only when
        they all are; the call returns before the compaction runs."""
        self._call(f"majorCompact {to_string_binary(table_or_region)}",
                   lambda c: c.client.majorCompact(table_or_region))

    waits = False  # a Compactor (cluster.admin) that only asks, region by region

    def compact(self, table: str, regions: Sequence[RegionDescriptor], asked: set[bytes]
                ) -> None:
        """Ask for a major compaction of each of ``regions`` not in ``asked`` (which gains
        their names)."""
        for region in regions:
            if region.region_name not in asked:
                self.major_compact(region.region_name)
                asked.add(region.region_name)

    # --- reads --------------------------------------------------------------------------

    def row(self, table: str, row: bytes, columns: Sequence[bytes] | None = None) -> Row:
        """The newest version of each column of one row, with timestamps."""
        return dict(self._call(f"getRow {table}", lambda c: c.table(table).row(
            row, columns=columns, include_timestamp=True)))

    def cells(self, table: str, row: bytes, column: bytes, versions: int = FOREVER,
              timestamp: int | None = None) -> list[Cell]:
        """Versions of one column, newest first (``timestamp``: only those below it)."""
        found = self._call(f"getVer {table}", lambda c: c.table(table).cells(
            row, column, versions=versions, timestamp=timestamp, include_timestamp=True))
        family, qualifier = split_column(column)
        return [Cell(row, family, qualifier, ts, CellType.PUT, value) for value, ts in found]

    def scan_rows(self, table: str, start: bytes = b"", stop: bytes = b"",
                  prefix: bytes | None = None, columns: Sequence[bytes] | None = None,
                  timestamp: int | None = None,
                  batch_size: int = 1000) -> Iterator[tuple[bytes, Row]]:
        """Rows in ``[start, stop)`` (or with ``prefix``), newest version per column."""
        with self.pool.connection() as conn:
            scanner = conn.table(table).scan(
                row_start=start or None, row_stop=stop or None, row_prefix=prefix,
                columns=columns, timestamp=timestamp, include_timestamp=True,
                batch_size=batch_size)
            try:
                yield from scanner
            except (TApplicationException, TException) as exc:
                if isinstance(exc, TTransportException):
                    raise
                raise self._error(f"scan {table}", exc) from exc

    def scan_cells(self, table: str, start: bytes = b"", stop: bytes = b"",
                   columns: Sequence[bytes] | None = None,
                   batch_size: int = 1000) -> Iterator[list[Cell]]:
        """Rows as Put cells in HBase order (newest version per column)."""
        for row, data in self.scan_rows(table, start, stop, columns=columns,
                                        batch_size=batch_size):
            cells = [Cell(row, *split_column(col), ts, CellType.PUT, value)
                     for col, (value, ts) in data.items()]
            cells.sort(key=lambda c: (c.family, c.qualifier))
            yield cells
