"""NativeClient's scan and write against scripted servers: partial Results joined into
rows, a heartbeat, a region that moves mid-scan (reopened after the last row with its
mvcc read point), Multi grouped per server with per-action and per-region failures retried
alone, and several Multis in flight answered last first keeping every cell's order."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Generator
from typing import Any, cast

from hbase_migrate.cluster.retry import Kind
from hbase_migrate.rpc.client import NativeClient
from hbase_migrate.rpc.codec import Call, RemoteException, encode_reply
from hbase_migrate.rpc.locate import Region
from hbase_migrate.rpc.multi import (
    ActionResult,
    MutationAction,
    RegionResult,
    decode_multi_request,
    decode_region_actions,
    multi_response,
)
from hbase_migrate.rpc.scan import ScanResponse, decode_scan_request, scan_response
from hbase_migrate.rpc.writes import _parts
from hbase_migrate.wal.model import Cell, CellType
from tests.rpc.scripted import OutOfOrder, ScriptedServer

NSRE = "org.apache.hadoop.hbase.NotServingRegionException"
BUSY = "org.apache.hadoop.hbase.RegionTooBusyException"
Scanning = Generator[list[Cell], None, None]  # what NativeClient.scan returns


def cell(row: bytes, q: bytes = b"q", ts: int = 1, kind: int = CellType.PUT) -> Cell:
    return Cell(row, b"f", q, ts, kind, row + q if kind == CellType.PUT else b"")


def region(start: bytes, end: bytes, port: int) -> Region:
    name = b"t,%s,1.%s." % (start, (start or b"0").hex().ljust(32, "0").encode())
    return Region("t", start, end, 1, name, "127.0.0.1", port, 1)


class Regions:
    """A locator stand-in over fixed regions; records what was invalidated."""

    def __init__(self, *regions: Region) -> None:
        self.regions = regions
        self.invalidated: list[Region | None] = []

    def locate(self, table: str, row: bytes, **_: Any) -> Region:
        return next(r for r in self.regions if r.contains(row))

    def invalidate(self, table: str, region: Region | None = None) -> None:
        self.invalidated.append(region)


def scripted_client(regions: Regions, **kw: Any) -> NativeClient:
    return NativeClient("127.0.0.1:1", max_backoff=0.01, call_timeout=5, locator=regions,
                        **kw)


def test_scan_joins_partials_rides_a_heartbeat_and_a_move() -> None:
    """Region [-, m) sends a row in two partial Results, then moves; the scan reopens after
    the last whole row with the region's read point. Region [m, -) answers its open with a
    heartbeat. The next region's open goes out early, after the first rows (the first of
    them is dropped with the move: its scanner is closed). The server answers each call by
    what it asks, so replies may come in any order."""
    a1, a2, c, n = cell(b"a", b"1"), cell(b"a", b"2"), cell(b"c"), cell(b"n")
    opened_m: list[int] = []

    def answer(call: Call) -> ScanResponse | RemoteException:
        r = decode_scan_request(call.request)
        if r.scan is not None and r.scan.start == b"":
            return ScanResponse(1, ((a1,),), (True,), True, True, mvcc_read_point=42)
        if r.scan is not None and r.scan.start == b"b":
            return ScanResponse(2, ((c,),), (False,), True, False)
        if r.scan is not None:  # at m: scanners 3, 4, ...
            opened_m.append(3 + len(opened_m))
            return ScanResponse(opened_m[-1], (), (), True, True, heartbeat=True)
        if r.close:
            return ScanResponse(None)
        if r.scanner_id == 1:
            return (ScanResponse(1, ((a2,), (cell(b"b"),)), (False, False), True, True)
                    if r.next_call_seq == 0 else RemoteException(NSRE, "moved"))
        return ScanResponse(r.scanner_id, ((n,),), (False,), True, False)

    def script(call: Call, conn: socket.socket) -> None:
        reply = answer(call)
        if isinstance(reply, RemoteException):
            conn.sendall(encode_reply(call.call_id, exception=reply))
        else:
            conn.sendall(encode_reply(call.call_id, *scan_response(reply)))

    with ScriptedServer(script) as server:
        regions = Regions(region(b"", b"m", server.port), region(b"m", b"", server.port))
        client = scripted_client(regions)
        rows = list(client.scan("t"))
        client.close()
    assert rows == [[a1, a2], [cell(b"b")], [c], [n]]
    requests = [decode_scan_request(c.request) for c in server.calls]
    assert [(r.scan.start, r.scan.include_start_row, r.scan.mvcc_read_point)
            for r in requests if r.scan] == [
        (b"", True, 0), (b"m", True, 0),
        (b"b", False, 42),  # reopened after the last whole row, same read point
        (b"m", True, 0)]
    assert all(r.scan.raw is False and r.scan.max_versions == 0x7FFFFFFF
               for r in requests if r.scan)
    calls = {(r.scanner_id, r.next_call_seq, r.close) for r in requests if not r.scan}
    assert {(1, 0, False), (1, 1, False), (4, 0, False)} <= calls
    assert any(call[0] == 3 and call[2] for call in calls)  # the early open's, closed
    assert not any(call[0] == 4 and call[2] for call in calls)  # 4 ended with its region
    assert regions.invalidated == [regions.regions[0]]
    assert client.retried[Kind.RELOCATE] == 1


def test_the_next_regions_server_reads_while_this_region_is_read() -> None:
    """Two regions on two servers: the second region's open goes out after the first
    region's first rows, and its next call as soon as the open is answered, while the
    first region's next reply is still awaited (server A holds it until server B has that
    call, at most 5 s)."""
    b_asked = threading.Event()
    seen: list[bool] = []

    def server_a(call: Call, conn: socket.socket) -> None:
        r = decode_scan_request(call.request)
        if r.scan is not None:
            resp = ScanResponse(1, ((cell(b"a"),),), (False,), True, True)
        elif r.close:
            resp = ScanResponse(None)
        else:
            seen.append(b_asked.wait(5))
            resp = ScanResponse(1, ((cell(b"b"),),), (False,), True, False)
        conn.sendall(encode_reply(call.call_id, *scan_response(resp)))

    def server_b(call: Call, conn: socket.socket) -> None:
        r = decode_scan_request(call.request)
        if r.scan is not None:
            resp = ScanResponse(2, ((cell(b"m"),),), (False,), True, True)
        else:
            b_asked.set()
            resp = ScanResponse(2, ((cell(b"n"),),), (False,), True, False)
        conn.sendall(encode_reply(call.call_id, *scan_response(resp)))

    with ScriptedServer(server_a) as a, ScriptedServer(server_b) as b:
        client = scripted_client(Regions(region(b"", b"m", a.port), region(b"m", b"", b.port)))
        rows = list(client.scan("t"))
        client.close()
    assert rows == [[cell(b"a")], [cell(b"b")], [cell(b"m")], [cell(b"n")]]
    assert seen == [True]
    assert len(a.calls) == len(b.calls) == 2  # open and next each, no close: both ran out


def test_a_next_region_held_beyond_half_its_lease_is_closed_and_opened_again() -> None:
    """A slow consumer of a region (a lease of 0.4 s, 0.4 s a row): the next region's
    scanner, opened early, is closed once held 0.2 s, and that region is opened again when
    its rows are wanted; no more reading ahead during that region."""
    opened_b: list[int] = []

    def server_a(call: Call, conn: socket.socket) -> None:
        r = decode_scan_request(call.request)
        if r.scan is not None:
            resp = ScanResponse(1, ((cell(b"a0"),),), (False,), True, True, ttl=400)
        else:
            seq = r.next_call_seq or 0
            resp = ScanResponse(1, ((cell(b"a%d" % (seq + 1)),),), (False,), True, seq < 3)
        conn.sendall(encode_reply(call.call_id, *scan_response(resp)))

    def server_b(call: Call, conn: socket.socket) -> None:
        r = decode_scan_request(call.request)
        if r.scan is not None:
            opened_b.append(10 + len(opened_b))
            resp = ScanResponse(opened_b[-1], ((cell(b"m"),),), (False,), True, True, ttl=400)
        elif r.close:
            resp = ScanResponse(None)
        else:
            resp = ScanResponse(r.scanner_id, ((cell(b"n"),),), (False,), True, False)
        conn.sendall(encode_reply(call.call_id, *scan_response(resp)))

    with ScriptedServer(server_a) as a, ScriptedServer(server_b) as b:
        client = scripted_client(Regions(region(b"", b"m", a.port), region(b"m", b"", b.port)))
        rows = []
        for row in client.scan("t"):
            rows.append(row)
            if row[0].row.startswith(b"a"):
                time.sleep(0.4)
        client.close()
    assert rows == [[cell(b"a%d" % i)] for i in range(5)] + [[cell(b"m")], [cell(b"n")]]
    assert opened_b == [10, 11]
    b_calls = [decode_scan_request(c.request) for c in b.calls]
    assert [(r.scanner_id, r.close) for r in b_calls if not r.scan] == [
        (10, False), (10, True), (11, False)]  # read ahead, closed; then read when wanted


def test_a_partial_flag_ends_at_the_next_row_and_at_the_regions_end() -> None:
    """A Result flagged partial that turns out whole (the next Result is another row, or
    the region ends): each row handed out alone, none lost (real HBase 2.6.1 flags rows of
    one cell so when a scan's limits are reached between cells)."""
    a, b, c = cell(b"a"), cell(b"b"), cell(b"c")
    replies = [ScanResponse(1, ((a,),), (True,), True, True),
               ScanResponse(1, ((b,), (c,)), (False, True), True, False)]

    def script(call: Call, conn: socket.socket) -> None:
        conn.sendall(encode_reply(call.call_id, *scan_response(replies.pop(0))))

    with ScriptedServer(script) as server:
        client = scripted_client(Regions(region(b"", b"", server.port)))
        assert list(client.scan("t")) == [[a], [b], [c]]
        client.close()


def test_an_early_stop_closes_the_scanner() -> None:
    """The next call was sent before the first rows were handed out (prefetch): its reply
    is awaited, then the scanner closed with the call sequence after it."""
    def script(call: Call, conn: socket.socket) -> None:
        resp = ScanResponse(7, ((cell(b"a"),), (cell(b"b"),)), (False, False), True, True)
        conn.sendall(encode_reply(call.call_id, *scan_response(resp)))

    with ScriptedServer(script) as server:
        client = scripted_client(Regions(region(b"", b"", server.port)))
        scan = cast(Scanning, client.scan("t", raw=True, time_range=(5, 6)))
        assert next(scan) == [cell(b"a")]
        scan.close()
        client.close()
    first, last = (decode_scan_request(c.request) for c in (server.calls[0], server.calls[-1]))
    assert first.scan is not None and first.scan.raw and first.scan.time_range == (5, 6)
    ahead = decode_scan_request(server.calls[1].request)
    assert (ahead.scanner_id, ahead.close, ahead.next_call_seq) == (7, False, 0)
    assert len(server.calls) == 3
    assert (last.scanner_id, last.close, last.next_call_seq) == (7, True, 1)


def test_writes_group_per_server_and_retry_only_what_failed() -> None:
    """Rows a and b on server 1, n on server 2. Server 1 fails b's action (busy) once;
    server 2 fails its whole region action (not serving) once. Every delete type keeps
    its type and timestamp in the cell block."""
    def one(call: Call, conn: socket.socket, first: RegionResult) -> None:
        seen = decode_multi_request(call.request, call.cell_block)
        ok = RegionResult(tuple(ActionResult(m[0]) for m in seen[0].mutations))
        conn.sendall(encode_reply(call.call_id, multi_response(
            [first if call.call_id == 0 else ok])))

    def server1(call: Call, conn: socket.socket) -> None:
        one(call, conn, RegionResult((ActionResult(0), ActionResult(1, (BUSY, "busy")))))

    def server2(call: Call, conn: socket.socket) -> None:
        one(call, conn, RegionResult((), (NSRE, "elsewhere")))

    deletes = [cell(b"n", b"q", 3, CellType.DELETE), cell(b"n", b"q", 4, CellType.DELETE_COLUMN),
               cell(b"n", b"", 5, CellType.DELETE_FAMILY),
               cell(b"n", b"", 6, CellType.DELETE_FAMILY_VERSION)]
    with ScriptedServer(server1) as s1, ScriptedServer(server2) as s2:
        regions = Regions(region(b"", b"m", s1.port), region(b"m", b"", s2.port))
        client = scripted_client(regions)
        puts = [cell(b"a"), cell(b"b"), cell(b"a", b"r", 2)]
        rounds = client.write("t", puts + deletes)
        client.close()
    sent1 = [decode_multi_request(c.request, c.cell_block) for c in s1.calls]
    sent2 = [decode_multi_request(c.request, c.cell_block) for c in s2.calls]
    assert [[(m[1], m[2]) for m in r[0].mutations] for r in sent1] == [
        [(2, (cell(b"a"), cell(b"a", b"r", 2))), (2, (cell(b"b"),))],
        [(2, (cell(b"b"),))]]
    assert [[(m[1], m[2]) for m in r[0].mutations] for r in sent2] == [
        [(3, tuple(deletes))], [(3, tuple(deletes))]]
    assert rounds == 4  # puts: 2 rounds (server 1 only); deletes: 2 rounds (server 2)
    assert client.retried[Kind.RETRY] == 1 and client.retried[Kind.RELOCATE] == 1


def test_multis_in_flight_answered_out_of_order_keep_each_cells_order() -> None:
    """Rows whose cells share one column and timestamp, puts and deletes alternating, some
    rows cut by a stage's end: the server holds two Multis and answers the second first,
    applying each when it answers. Every cell key reaches its store in the order written
    (what a writer sending one cell at a time would leave), with two Multis in flight to
    the server and never a row in both."""
    store: dict[tuple[bytes, bytes, bytes, int], list[tuple[int, bytes]]] = {}

    def answer(call: Call) -> bytes:
        regions = decode_multi_request(call.request, call.cell_block)
        for r in regions:
            for _, _, cells in r.mutations:
                for c in cells:
                    store.setdefault((c.row, c.family, c.qualifier, c.timestamp), []).append(
                        (c.type, c.value))
        return encode_reply(call.call_id, multi_response(
            [RegionResult(tuple(ActionResult(m[0]) for m in r.mutations)) for r in regions]))

    kinds = (CellType.PUT, CellType.PUT, CellType.DELETE, CellType.PUT, CellType.DELETE_COLUMN,
             CellType.PUT, CellType.PUT)
    written = [cell(b"r%04d" % i, b"q", 7, kind)._replace(value=b"v%d" % k if kind == 4 else b"")
               for i in range(600) for k, kind in enumerate(kinds)]
    script = OutOfOrder(answer, hold=2, linger=0.05)
    with ScriptedServer(script) as server:
        client = scripted_client(Regions(region(b"", b"r0300", server.port),
                                         region(b"r0300", b"", server.port)),
                                 max_multi_bytes=12_000)
        client.write("t", written)
        client.close()
    expected: dict[tuple[bytes, bytes, bytes, int], list[tuple[int, bytes]]] = {}
    for c in written:
        expected.setdefault((c.row, c.family, c.qualifier, c.timestamp), []).append(
            (c.type, c.value))
    assert store == expected
    assert script.most_held == 2 and client.writes.slots.peak == 2
    for group in script.rounds:
        rows = [{m.row for r in decode_region_actions(c.request, c.cell_block)
                 for m in r.actions if isinstance(m, MutationAction)} for c in group]
        assert sum(map(len, rows)) == len(set().union(*rows))  # no row in two at once
    sent = [m for c in server.calls for r in decode_multi_request(c.request, c.cell_block)
            for m in r.mutations]
    assert any(len(cells) == 1 and cells[0].value in (b"v0", b"v1", b"v5", b"v6")
               for _, _, cells in sent)  # a run of two puts cut by a stage's end


def test_the_next_regions_scanner_opens_before_the_last_rows_are_handed_out() -> None:
    """Region [, m) answers its open with its only rows and says it is done: the open of
    [m, ) reaches the server before the consumer asks for more (the prefetch across
    regions). A consumer that stops there closes the scanner that open made; one that goes
    on gets every row once, each region opened once."""
    def script(call: Call, conn: socket.socket) -> None:
        request = decode_scan_request(call.request)
        if request.close:
            conn.sendall(encode_reply(call.call_id, *scan_response(ScanResponse(None))))
            return
        if request.scan is None:  # the next call of [m, ): its end
            resp = ScanResponse(2, (), (), False, False)
        elif request.scan.start == b"":
            resp = ScanResponse(1, ((cell(b"a"),),), (False,), True, False)
        else:
            resp = ScanResponse(2, ((cell(b"n"),),), (False,), True, True)
        conn.sendall(encode_reply(call.call_id, *scan_response(resp)))

    def opens(server: ScriptedServer) -> list[tuple[bytes, bool]]:
        return [(r.scan.start, r.scan.include_start_row) for r in
                (decode_scan_request(c.request) for c in list(server.calls)) if r.scan]

    with ScriptedServer(script) as server:
        client = scripted_client(Regions(region(b"", b"m", server.port),
                                         region(b"m", b"", server.port)))
        scan = cast(Scanning, client.scan("t"))
        assert next(scan) == [cell(b"a")]
        deadline = time.monotonic() + 5
        while len(opens(server)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert opens(server) == [(b"", True), (b"m", True)]
        scan.close()
        requests = [decode_scan_request(c.request) for c in server.calls]
        closes = [(r.scanner_id, r.next_call_seq) for r in requests if r.close]
        # the open's answer may already have sent [m, )'s next call (read ahead): the close
        # then follows it, one call later
        nexts = sum(1 for r in requests if r.scan is None and not r.close)
        assert nexts <= 1 and closes == [(2, nexts)]
        assert list(client.scan("t")) == [[cell(b"a")], [cell(b"n")]]
        client.close()
    assert opens(server)[2:] == [(b"", True), (b"m", True)]


def test_a_servers_rows_go_in_multis_of_whole_regions() -> None:
    """A server applies a Multi's regions one after the other: its share of a round is cut
    along regions (the largest halved while Multis are fewer than allowed, the regions
    shared out largest first when more), every row once, each region's rows in order, and
    every server's first Multi sent before any second."""
    s1, s2 = ("127.0.0.1", 1), ("127.0.0.1", 2)
    a, b, c = region(b"", b"g", 1), region(b"g", b"p", 1), region(b"p", b"t", 1)
    d = region(b"t", b"", 2)

    def rows(prefix: bytes, n: int) -> list[tuple[bytes, list[Cell]]]:
        return [(b"%s%04d" % (prefix, i), [cell(b"%s%04d" % (prefix, i))]) for i in range(n)]

    ra, rb, rc, rd = rows(b"a", 300), rows(b"h", 100), rows(b"q", 90), rows(b"u", 200)
    batches = {s1: {a.name: (a, ra), b.name: (b, rb), c.name: (c, rc)}, s2: {d.name: (d, rd)}}
    parts = _parts(batches, 2)
    assert [(server, {r.start: len(items) for r, items in part.values()})
            for server, part in parts] == [
        (s1, {b"": 300}), (s2, {b"t": 100}), (s1, {b"g": 100, b"p": 90}), (s2, {b"t": 100})]
    assert [item for _, part in parts[1::2] for _, items in part.values() for item in items] == rd
    assert [(server, {r.start: len(items) for r, items in part.values()})
            for server, part in _parts(batches, 4)] == [
        (s1, {b"": 150}), (s2, {b"t": 100}), (s1, {b"": 150}), (s2, {b"t": 100}),
        (s1, {b"g": 100}), (s1, {b"p": 90})]
    small = {s2: {d.name: (d, rd[:100])}}  # under 2 * MIN_PART_ROWS rows: one Multi
    assert [len(items) for _, part in _parts(small, 2)
            for _, items in part.values()] == [100]
