"""A scan over HBase's RPC, region after region (:class:`NativeScanner`), holding only its
seam (:class:`ScanSeam`: where a row's region is, a connection to a server, rows per call),
as gohbase's scanner holds only its RPC client. :class:`~hbase_migrate.rpc.client.NativeClient`
builds the seam over its region locator and connection pool and resumes the scan after the
last row handed out (:func:`hbase_migrate.cluster.scanning.resumed`)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass
from typing import NamedTuple

from hbase_migrate.rpc.connection import Connection, PendingCall
from hbase_migrate.rpc.errors import CALL_FAILURES, RemoteError, RpcError
from hbase_migrate.rpc.locate import Region
from hbase_migrate.rpc.scan import (
    Scan,
    ScanResponse,
    decode_scan_response,
    next_scan_request,
    open_scan_request,
    region_done,
    whole_rows,
)
from hbase_migrate.wal.model import Cell

log = logging.getLogger(__name__)
DEFAULT_LEASE_MS = 60_000  # hbase.client.scanner.timeout.period, when a reply has no ttl


@dataclass(frozen=True)
class ScanSeam:
    """What a scanner needs of its client: ``locate`` (table, row) -> the region holding the
    row; ``connection`` (host, port) -> the connection to that server; ``rows_per_call``."""

    locate: Callable[[str, bytes], Region]
    connection: Callable[[str, int], Connection]
    rows_per_call: int


class NativeScanner:
    """A scan's :class:`~hbase_migrate.cluster.scanning.Scanner` over HBase's RPC
    (``AsyncClientScanner`` / ``ClientScanner`` of HBase's client): a scanner in the region
    holding the next row, ``next`` called until the region is done, then on at its end key.
    Rows are handed out whole (the parts of a row the server sends as partial Results are
    joined first), so a scan reopens right after the last row handed out; the region's
    ``mvcc_read_point`` is kept when its scanner is reopened, reset for the next region.

    The next region's scanner is opened once the current region's first rows are handed
    out, and its second call is sent as soon as the open is answered (looked at while the
    current region's reply is awaited): the next region's server reads ahead while this one
    is read and its rows consumed, two regions' scanners and at most four replies at once.
    Only while the current region is younger than half its scanner lease: a next region's
    scanner held longer is closed (before its lease ends), and opened again when its rows
    are wanted."""

    def __init__(self, seam: ScanSeam, table: str, spec: Scan) -> None:
        self.seam = seam
        self.table = table
        self.spec = spec
        self.mvcc = 0
        self.region: Region | None = None
        self.current: _RegionScanner | None = None
        # the next region's open, sent early; once answered, its scanner
        self.following: _Opening | _RegionScanner | None = None

    def open(self, start: bytes, after: Cell | None) -> None:
        self._open_at(start, after is None)

    def _open_at(self, row: bytes, inclusive: bool) -> None:
        self.region = None
        following, self.following = self.following, None
        if following is not None and (following.row, inclusive) != (row, True):
            self._drop(following)  # a reopen after a failure: not the open sent early
            following = None
        if isinstance(following, _RegionScanner):
            self.region = following.region
            self.mvcc = following.mvcc or self.mvcc
            self.current = following
            return
        opening = following or self._send_open(row, inclusive)
        self.region = opening.region
        self.current = self._opened(opening)
        self.mvcc = self.current.mvcc or self.mvcc

    def _opened(self, opening: _Opening) -> _RegionScanner:
        """The scanner of an open sent (waits for its answer)."""
        reply = opening.call.result()
        return _RegionScanner(self.seam, opening.row, opening.region,
                              decode_scan_response(reply.response or b"", reply.cell_block))

    def _send_open(self, row: bytes, inclusive: bool) -> _Opening:
        region = self.seam.locate(self.table, row)
        self.region = region
        scan = self.spec._replace(start=row, include_start_row=inclusive,
                                  mvcc_read_point=self.mvcc)
        call = self.seam.connection(region.host, region.port).start(
            "Scan", open_scan_request(region.name, scan, self.seam.rows_per_call))
        return _Opening(row, region, call)

    def _after(self, current: _RegionScanner) -> bytes | None:
        """Where the scan goes on once ``current`` is done (None: it ends there)."""
        region, stop = current.region, self.spec.stop
        if current.scan_done or not region.end or (stop and region.end >= stop):
            return None
        return region.end

    def next(self) -> list[list[Cell]] | None:
        while self.current is not None:
            self._ask_ahead(self.current.awaited())
            rows = self.current.next()
            if rows is not None:
                self._read_ahead(self.current)
                return rows
            after = self._after(self.current)
            self.current = None
            if after is None:
                return None
            self.mvcc = 0
            self._open_at(after, True)
        return None

    def _read_ahead(self, current: _RegionScanner) -> None:
        """Open the next region early while ``current`` is young; drop a next region's
        scanner held beyond half its lease (a long region: its rows are read when wanted,
        as they were before, not after a lost scanner)."""
        following = self.following
        if isinstance(following, _RegionScanner) and following.held():
            self.following = None
            self._drop(following)
        elif following is None and not current.held():
            self._open_early(current)
        self._ask_ahead(None)

    def _open_early(self, current: _RegionScanner) -> None:
        """Send the next region's open (the prefetch, across regions). One that cannot be
        sent now is left to be sent when its rows are wanted, where a failure is judged as
        any open's."""
        after = self._after(current)
        if after is None:
            return
        mvcc, self.mvcc = self.mvcc, 0
        try:
            self.following = self._send_open(after, True)
        except CALL_FAILURES as exc:
            log.debug("table %s: the open at %r not sent early: %s", self.table, after, exc)
        finally:
            self.mvcc = mvcc
            self.region = current.region

    def _ask_ahead(self, awaited: PendingCall | None) -> None:
        """When the open sent early has been answered, send its scanner's next call; with
        the current region's call ``awaited``, wait for whichever answer comes first. A
        failed open is left to fail again, and be judged, when its rows are wanted."""
        opening = self.following
        if not isinstance(opening, _Opening):
            return
        if awaited is not None and not opening.call.done():
            wait((awaited.future, opening.call.future), awaited.remaining(),
                 FIRST_COMPLETED)
        if not opening.call.done():
            return
        try:
            self.following = following = self._opened(opening)
            following.ask_ahead()
        except (*CALL_FAILURES, RpcError) as exc:
            log.debug("table %s: the open at %r sent early: %s", self.table, opening.row, exc)

    def _drop(self, following: _Opening | _RegionScanner) -> None:
        """Close the scanner an open sent early made (its rows never wanted)."""
        if isinstance(following, _Opening):
            try:
                following = self._opened(following)
            except (*CALL_FAILURES, RpcError) as exc:
                log.debug("table %s: the open at %r sent early: %s", self.table,
                          following.row, exc)
                return
        following.close()

    def close(self) -> None:
        if self.following is not None:
            following, self.following = self.following, None
            self._drop(following)
        if self.current is not None:
            self.current.close()
            self.current = None


class _Opening(NamedTuple):
    """A region's scanner open, sent: the row it starts at, the region, the call."""

    row: bytes
    region: Region
    call: PendingCall


class _RegionScanner:
    """One region's scanner from its first reply on: ``next()`` gives the whole rows of a
    reply (partial Results joined), None once the region is done. ``scan_done``: the
    server said the whole scan is over. ``row``: where it was opened; ``mvcc``: the read
    point of its first reply; ``held()``: whether it is older than half its lease."""

    def __init__(self, seam: ScanSeam, row: bytes, region: Region,
                 first: ScanResponse) -> None:
        self.seam = seam
        self.row = row
        self.region = region
        self.resp: ScanResponse | None = first
        self.conn = seam.connection(region.host, region.port)
        self.scanner = first.scanner_id
        self.mvcc = first.mvcc_read_point
        self.since = time.monotonic()
        self.hold = (first.ttl or DEFAULT_LEASE_MS) / 2000  # seconds
        self.live = not region_done(first)  # else the server closed it already
        self.seq = 0
        self.part: list[Cell] = []
        self.finished = False
        self.scan_done = False
        self.ahead: PendingCall | None = None

    def next(self) -> list[list[Cell]] | None:
        if self.resp is None:
            if self.finished:
                return None
            self.resp = self._next_reply()
        resp, self.resp = self.resp, None
        if region_done(resp):
            self.live, self.finished = False, True
            self.scan_done = resp.more_results is False
        else:
            self.ask_ahead()  # before this reply's rows are handed out: the prefetch
        rows, self.part = whole_rows(resp, self.part)
        return rows

    def held(self) -> bool:
        return time.monotonic() - self.since > self.hold

    def awaited(self) -> PendingCall | None:
        """The call whose reply ``next()`` would wait for, if any."""
        return self.ahead if self.resp is None else None

    def ask_ahead(self) -> None:
        """Send the next call, unless one is in flight or the region is done."""
        if self.ahead is not None or self.finished or (
                self.resp is not None and region_done(self.resp)):
            return
        if self.scanner is None:
            raise RemoteError("java.io.IOException", "a ScanResponse without scanner_id",
                              server=self.region.server, call="Scan")
        self.ahead = self.conn.start("Scan", next_scan_request(
            self.scanner, self.seam.rows_per_call, self.seq))

    def _next_reply(self) -> ScanResponse:
        call, self.ahead = self.ahead, None
        assert call is not None, "a region scanner's next reply was never asked for"
        try:
            reply = call.result()
        except RpcError:
            self.live = False  # a failed next leaves nothing to close (or it is gone)
            raise
        self.seq += 1
        return decode_scan_response(reply.response or b"", reply.cell_block)

    def close(self) -> None:
        if self.ahead is not None:  # the consumer stopped with a call in flight
            call, self.ahead = self.ahead, None
            try:
                call.result()
                self.seq += 1
            except RpcError:
                self.live = False
        if self.live and self.scanner is not None and not self.conn.closed:
            self.live = False
            try:
                self.conn.call("Scan", next_scan_request(self.scanner, 0, self.seq,
                                                         close=True))
            except RpcError as exc:
                log.debug("closing scanner %d on %s: %s", self.scanner, self.region.server,
                          exc)
