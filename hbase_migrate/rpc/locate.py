"""Where a table's regions are: ZooKeeper (or the RPC registry, ``rpc.registry``) names the
server of ``hbase:meta``; ``hbase:meta`` names every other region's server. Cached per
table, as HBase's client does.

The lookup of a row follows HBase 2.x's ``AsyncNonMetaRegionLocator.locateInMeta``: a
reversed scan of ``hbase:meta`` from ``<table>,<row>,99999999999999`` (``HConstants.NINES``).
Meta rows are ``<table>,<start key>,<region id>.<encoded name>.``; region ids are 13-digit
times, so the first row at or before that key is the region whose start key is the greatest
one <= ``row``: a row equal to a split key belongs to the region that starts with it.
(``hbase:meta`` orders its rows by table, start key and id, ``MetaCellComparator``, not as
plain bytes: scan bounds are built as HBase builds them.) Split
parents (``split``) are passed over, as HBase does; an offline region is not served.

A meta row's columns (family ``info``)::

    regioninfo       "PBUF" + RegionInfo (HBase.proto: 1 region_id  2 table_name
                     (TableName: 1 namespace  2 qualifier)  3 start_key  4 end_key
                     5 offline  6 split  7 replica_id)
    server           "host:port" of the server holding it (absent while in transition)
    serverstartcode  int64-BE start code of that server
    seqnumDuringOpen int64-BE sequence id the region opened at
    sn               the server's name, ``host,port,startcode``
    state            the region's state (``OPEN``)

A table's own row (its name, no comma) holds ``table:state``: a TableState (1 state:
ENABLED 0, DISABLED 1, DISABLING 2, ENABLING 3), with no PBUF magic (``TableState.parseFrom``
reads it from its first byte).
"""

from __future__ import annotations

import bisect
import logging
import struct
import threading
from collections.abc import Sequence
from typing import NamedTuple, Protocol

from hbase_migrate.cluster.zk.zkpayload import PB_MAGIC
from hbase_migrate.cluster.zk.zookeeper import HBaseZooKeeper
from hbase_migrate.rpc.connection import Connection, Pool
from hbase_migrate.rpc.errors import RegionNotFoundError, RpcError
from hbase_migrate.rpc.messages import Column
from hbase_migrate.rpc.registry import RpcRegistry
from hbase_migrate.rpc.scan import (
    Scan,
    decode_scan_response,
    next_scan_request,
    open_scan_request,
    region_done,
    whole_rows,
)
from hbase_migrate.tablename import split_table_name, table_string
from hbase_migrate.wal.messages import TableName, decode_table_name, encode_table_name
from hbase_migrate.wal.model import Cell, CellType
from hbase_migrate.wal.protobuf import Message, ProtobufError, bytes_field, varint_field

log = logging.getLogger(__name__)

META_REGION = b"hbase:meta,,1"
INFO = b"info"
NINES = b"99999999999999"
LOOKUP_ROWS = 10  # meta rows read per lookup (HBase: hbase.client.locate.prefetch.limit)
LIST_ROWS = 1000


class Region(NamedTuple):
    """One region and the server holding it (``host`` empty: none, in transition)."""

    table: str
    start: bytes
    end: bytes  # b"": the end of the table
    region_id: int
    name: bytes  # the full region name: the meta row key
    host: str = ""
    port: int = 0
    start_code: int = 0
    offline: bool = False
    split: bool = False

    @property
    def encoded(self) -> str:
        """The encoded name (``<table>,<start>,<id>.<encoded>.``)."""
        return encoded_name(self.name)

    @property
    def server(self) -> str:
        return f"{self.host}:{self.port}" if self.host else "(no server)"

    def contains(self, row: bytes) -> bool:
        return self.start <= row and (not self.end or row < self.end)


def encoded_name(region_name: bytes) -> str:
    """The encoded name of a full region name (``<table>,<start>,<id>.<encoded>.``)."""
    return region_name.rstrip(b".").rsplit(b".", 1)[-1].decode("latin-1")


def region_from_meta(row_key: bytes, cells: Sequence[Cell]) -> Region | None:
    """The region of one ``hbase:meta`` row (None when it has no ``info:regioninfo``)."""
    columns = {c.qualifier: c.value for c in cells if c.family == INFO}
    info = columns.get(b"regioninfo")
    if info is None:
        return None
    if info[:4] != PB_MAGIC:
        raise ProtobufError(f"hbase:meta row {row_key!r}: info:regioninfo lacks PBUF")
    m = Message(info[4:], "RegionInfo")
    table = decode_table_name(m.req_bytes(2, "table_name"))
    host, port, code = "", 0, 0
    server = columns.get(b"server", b"")
    if server:
        host_text, _, port_text = server.decode().rpartition(":")
        host, port = host_text, int(port_text)
        start_code = columns.get(b"serverstartcode", b"")
        code = struct.unpack(">q", start_code)[0] if len(start_code) == 8 else 0
    return Region(table_string(*table), m.opt_bytes(3) or b"", m.opt_bytes(4) or b"",
                  m.req_int(1, "region_id"), row_key, host, port, code,
                  bool(m.opt_int(5)), bool(m.opt_int(6)))


def region_info_message(table: str, start: bytes, end: bytes, region_id: int, *,
                        offline: bool = False, split: bool = False) -> bytes:
    """A ``RegionInfo`` message (no PBUF magic; ``info:regioninfo`` holds it with)."""
    namespace, qualifier = split_table_name(table)
    out = varint_field(1, region_id)
    out += bytes_field(2, encode_table_name(TableName(namespace.encode(), qualifier.encode())))
    out += bytes_field(3, start) + bytes_field(4, end)
    if offline:
        out += varint_field(5, 1)
    if split:
        out += varint_field(6, 1)
    return out


def meta_row(region: Region, timestamp: int, open_seq: int = 1) -> list[Cell]:
    """The cells of a region's ``hbase:meta`` row, in HBase's order (family ``info``;
    the location columns only when ``region.host`` names a server)."""
    info = PB_MAGIC + region_info_message(region.table, region.start, region.end,
                                          region.region_id, offline=region.offline,
                                          split=region.split)
    columns = [(b"regioninfo", info)]
    if region.host:
        columns += [(b"seqnumDuringOpen", struct.pack(">q", open_seq)),
                    (b"server", f"{region.host}:{region.port}".encode()),
                    (b"serverstartcode", struct.pack(">q", region.start_code)),
                    (b"sn", f"{region.host},{region.port},{region.start_code}".encode()),
                    (b"state", b"OPEN")]
    return [Cell(region.name, INFO, q, timestamp, CellType.PUT, v) for q, v in columns]


def table_state_row(table: str, state: int, timestamp: int) -> list[Cell]:
    """A table's own ``hbase:meta`` row: ``table:state``."""
    value = varint_field(1, state)
    return [Cell(table.encode(), b"table", b"state", timestamp, CellType.PUT, value)]


def meta_order(row: bytes) -> tuple[bytes, int, bytes, bytes]:
    """The sort key of an ``hbase:meta`` row (``MetaCellComparator.compareRows``): the
    table (up to the first comma; a row with no comma before every row with one), the
    start key (up to the last comma), then the region id and encoded name. A row with one
    comma (``t,``) ends with the whole row, as HBase compares its missing region id from
    the row's first byte: ``t,`` sorts after ``t,,<id>.`` (a table's first region)."""
    table, comma, rest = row.partition(b",")
    if not comma:
        return table, 0, b"", b""
    start, comma, region_id = rest.rpartition(b",")
    return (table, 1, start, region_id) if comma else (table, 1, rest, row)


class _TableCache:
    """Regions of one table by start key (``starts`` kept sorted alongside)."""

    def __init__(self) -> None:
        self.starts: list[bytes] = []
        self.regions: list[Region] = []

    def find(self, row: bytes) -> Region | None:
        i = bisect.bisect_right(self.starts, row) - 1
        if i >= 0 and self.regions[i].contains(row):
            return self.regions[i]
        return None

    def add(self, region: Region) -> None:
        """Add a region, dropping cached ones it overlaps (a split or a merge)."""
        keep = [r for r in self.regions if not _overlap(r, region)]
        keep.append(region)
        keep.sort(key=lambda r: r.start)
        self.regions = keep
        self.starts = [r.start for r in keep]

    def remove(self, region: Region) -> None:
        keep = [r for r in self.regions if r.name != region.name]
        self.regions = keep
        self.starts = [r.start for r in keep]


def _overlap(a: Region, b: Region) -> bool:
    return (not a.end or b.start < a.end) and (not b.end or a.start < b.end)


class RegionLocator(Protocol):
    """What a client asks of its region locator (:class:`Locator`; a test passes its own
    to ``NativeClient(locator=...)``)."""

    def locate(self, table: str, row: bytes, *, cached: bool = True) -> Region: ...

    def regions(self, table: str) -> list[Region]: ...

    def invalidate(self, table: str, region: Region | None = None) -> None: ...

    def meta_server(self) -> tuple[str, int]: ...

    def forget_meta(self) -> None: ...


class Locator:
    """Region locations of a cluster, cached per table; thread-safe."""

    def __init__(self, quorum: str, znode_parent: str, pool: Pool,
                 zk_timeout: float = 10.0, registry: RpcRegistry | None = None) -> None:
        """``registry``: meta found through HBase's RPC registry, no ZooKeeper."""
        self.registry = registry
        self.quorum = quorum
        self.znode_parent = znode_parent
        self.pool = pool
        self.zk_timeout = zk_timeout
        self._lock = threading.Lock()
        self._tables: dict[str, _TableCache] = {}
        self._meta: tuple[str, int] | None = None

    # --- meta ---------------------------------------------------------------------------

    def meta_server(self) -> tuple[str, int]:
        """``(host, port)`` of the server holding ``hbase:meta``, from ZooKeeper (or the
        registry)."""
        with self._lock:
            if self._meta is not None:
                return self._meta
        if self.registry is not None:
            found = self.registry.meta_server()
            with self._lock:
                self._meta = (found.host, found.port)
                return self._meta
        with HBaseZooKeeper(self.quorum, self.znode_parent, self.zk_timeout,
                            security=self.pool.security, cluster=self.pool.cluster) as zk:
            server = zk.meta_server()
        if server is None:
            raise RegionNotFoundError(f"ZooKeeper {self.quorum}: no "
                                      f"{self.znode_parent}/meta-region-server yet")
        with self._lock:
            self._meta = (server.host, server.port)
            return self._meta

    def forget_meta(self) -> None:
        """Read the meta location from ZooKeeper again next time."""
        with self._lock:
            self._meta = None

    def _meta_connection(self) -> Connection:
        return self.pool.get(*self.meta_server())

    def _meta_scan(self, scan: Scan, rows: int, first_only: bool) -> list[Region]:
        """The regions of the meta rows a scan returns (all of them, or the first call's).
        Any failure, a meta server refusing the connection too (dead), forgets where meta
        is: the next lookup asks ZooKeeper again."""
        try:
            conn = self._meta_connection()
            reply = conn.call("Scan", open_scan_request(META_REGION, scan, rows,
                                                        close=first_only))
            resp = decode_scan_response(reply.response or b"", reply.cell_block)
            whole, part = whole_rows(resp, [])
            regions = _regions(whole)
            seq = 0  # the first next call after the open carries 0 (RegionScannerHolder)
            while not first_only and not region_done(resp) and resp.scanner_id is not None:
                reply = conn.call("Scan", next_scan_request(resp.scanner_id, rows, seq))
                seq += 1
                resp = decode_scan_response(reply.response or b"", reply.cell_block)
                whole, part = whole_rows(resp, part)
                regions += _regions(whole)
            return regions
        except RpcError:
            self.forget_meta()
            raise

    # --- lookups ------------------------------------------------------------------------

    def locate(self, table: str, row: bytes, *, cached: bool = True) -> Region:
        """The region holding ``row`` (RegionNotFoundError when meta has none)."""
        if cached:
            with self._lock:
                cache = self._tables.get(table)
                found = cache.find(row) if cache else None
            if found is not None:
                return found
        key = table.encode() + b"," + row + b"," + NINES
        scan = Scan(start=key, columns=(Column(INFO),), reversed=True, caching=LOOKUP_ROWS)
        seen = False
        for region in self._meta_scan(scan, LOOKUP_ROWS, first_only=True):
            if region.table != table:
                break
            seen = True
            if region.split or region.offline:
                continue
            if region.contains(row) and region.host:
                self._remember(region)
                return region
            break
        what = "no region with a server yet" if seen else "no region (no such table?)"
        raise RegionNotFoundError(f"table {table}: hbase:meta (server {self._meta_text()}) "
                                  f"holds {what} for row {row!r}", retryable=seen)

    def regions(self, table: str) -> list[Region]:
        """Every online region of ``table`` by start key (split parents and offline regions
        left out), as ``hbase:meta`` lists them now; the cache is refreshed with them."""
        prefix = table.encode()
        # MetaTableAccessor.getTableStartRowForMeta / getTableStopRowForMeta: meta rows
        # sort by (table, start key, id) (MetaCellComparator), not as bytes, so the bounds
        # are "<table>,," and "<table> ,,"; "<table>," would miss the first region.
        scan = Scan(start=prefix + b",,", stop=prefix + b" ,,", columns=(Column(INFO),),
                    caching=LIST_ROWS)
        found = [r for r in self._meta_scan(scan, LIST_ROWS, first_only=False)
                 if r.table == table and not r.split and not r.offline]
        if not found:
            raise RegionNotFoundError(f"table {table}: hbase:meta (server {self._meta_text()}) "
                                      "lists no region (no such table?)")
        cache = _TableCache()
        for region in found:
            cache.add(region)
        with self._lock:
            self._tables[table] = cache
        return sorted(found, key=lambda r: r.start)

    def invalidate(self, table: str, region: Region | None = None) -> None:
        """Forget a region's location (or a whole table's) after it moved or split."""
        with self._lock:
            cache = self._tables.get(table)
            if cache is None:
                return
            if region is None:
                del self._tables[table]
            else:
                cache.remove(region)

    def _remember(self, region: Region) -> None:
        with self._lock:
            self._tables.setdefault(region.table, _TableCache()).add(region)

    def _meta_text(self) -> str:
        meta = self._meta
        return f"{meta[0]}:{meta[1]}" if meta else "unknown"


def _regions(results: list[list[Cell]]) -> list[Region]:
    """The regions of whole meta rows."""
    out = []
    for cells in results:
        if cells:
            region = region_from_meta(cells[0].row, cells)
            if region is not None:
                out.append(region)
    return out
