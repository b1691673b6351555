"""HBase's own RPC served by the embedded cluster, driven by the project's ``NativeClient``
and judged by independent paths: the cluster's Thrift2 gateway for what a read sees, its
store for what is kept (delete markers included), its region table for ``hbase:meta``.
Every cell type both ways, time ranges, versions, raw scans, rows cut by a scan's byte
limit, a Multi's per-action results, and regions split, moved or lost to a killed server
under a scan and under writes."""

from __future__ import annotations

import socket
import time
from collections.abc import Generator, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import cast

import pytest

from hbase_migrate.cluster.retry import Kind
from hbase_migrate.cluster.zk.zookeeper import HBaseZooKeeper
from hbase_migrate.rpc.client import NativeCallError, NativeClient
from hbase_migrate.rpc.codec import (
    CONNECTION_CALL_ID,
    Call,
    ConnectionHeader,
    Reply,
    ReplyDecoder,
    connection_header,
    encode_cell_block,
    preamble,
)
from hbase_migrate.rpc.connection import Connection
from hbase_migrate.rpc.errors import RemoteError
from hbase_migrate.rpc.locate import META_REGION, encoded_name, region_from_meta
from hbase_migrate.rpc.messages import (
    ALL_VERSIONS,
    Column,
    Get,
    get_message,
    get_request,
    region_specifier,
)
from hbase_migrate.rpc.multi import (
    DELETE,
    PUT,
    decode_get_results,
    decode_multi_response,
    multi_request,
    mutation,
)
from hbase_migrate.rpc.scan import (
    Scan,
    ScanResponse,
    decode_scan_response,
    next_scan_request,
    open_scan_request,
)
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType, cell_order
from hbase_migrate.wal.protobuf import bytes_field, string_field, varint_field
from minihbase.rpc.listener import CallContext, ServiceError
from minihbase.rpc.regionserver import RegionServerRpc
from minihbase.server import MiniHBase
from minihbase.zookeeper import ZooKeeperServer
from stackprocs.admin_client import call_admin
from tests.minihbase.rpc_requests import cluster_of, create, stored
from tests.rpc.cells import ROWS, every_kind, flat

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def native(rpc_mini: MiniHBase) -> Iterator[NativeClient]:
    with NativeClient(rpc_mini.zookeeper or "", rpc_mini.znode_parent, max_backoff=0.2,
                      rows_per_call=7) as client:
        yield client


@pytest.fixture(scope="module")
def thrift2(rpc_mini: MiniHBase) -> Iterator[Thrift2Client]:
    with Thrift2Client(rpc_mini.endpoints.thrift2 or "") as client:
        yield client


def same_reads(native: NativeClient, thrift2: Thrift2Client, table: str) -> None:
    """What a read sees, natively and through Thrift2: whole scans, time ranges, versions,
    columns and gets."""
    assert flat(native.scan(table)) == flat(thrift2.scan(table))
    for time_range in ((101, 104), (0, 101), (104, 2**62)):
        assert flat(native.scan(table, time_range=time_range)) == \
            flat(thrift2.scan(table, time_range=time_range))
    assert flat(native.scan(table, max_versions=2)) == flat(thrift2.scan(table, max_versions=2))
    assert flat(native.scan(table, b"g", b"q")) == flat(thrift2.scan(table, b"g", b"q"))
    for row in ROWS:
        assert native.get(table, row) == thrift2.get(table, row)
        assert native.get(table, row, max_versions=1, time_range=(100, 103)) == \
            thrift2.get(table, row, max_versions=1, time_range=(100, 103))


def test_native_writes_every_cell_type(rpc_mini: MiniHBase, native: NativeClient,
                                       thrift2: Thrift2Client) -> None:
    """Written natively: a raw native scan gives back exactly what was written (the store
    keeps the same), and every read agrees with Thrift2's."""
    create(rpc_mini, "rpc_w")
    written = every_kind(ROWS)
    native.write("rpc_w", written)
    assert flat(native.scan("rpc_w", raw=True)) == sorted(written, key=cell_order) == \
        stored(rpc_mini, "rpc_w")
    assert flat(native.scan("rpc_w", raw=True, time_range=(101, 103))) == \
        [c for c in sorted(written, key=cell_order) if 101 <= c.timestamp < 103]
    same_reads(native, thrift2, "rpc_w")


def test_thrift2_writes_read_natively(rpc_mini: MiniHBase, native: NativeClient,
                                      thrift2: Thrift2Client) -> None:
    """Written through Thrift2: the native raw scan shows what the store keeps, markers
    with their exact timestamps, and every read agrees with Thrift2's."""
    create(rpc_mini, "rpc_t2")
    thrift2.write_cells("rpc_t2", every_kind(ROWS))
    raw = flat(native.scan("rpc_t2", raw=True))
    assert raw == stored(rpc_mini, "rpc_t2")
    assert {(c.row, c.type, c.timestamp) for c in raw if c.type != CellType.PUT} == {
        (b"a", CellType.DELETE, 103), (b"g", CellType.DELETE_COLUMN, 102),
        (b"h", CellType.DELETE_FAMILY, 101), (b"p", CellType.DELETE_FAMILY_VERSION, 100)}
    same_reads(native, thrift2, "rpc_t2")


def test_multi_answers_each_action(rpc_mini: MiniHBase, native: NativeClient,
                                   thrift2: Thrift2Client) -> None:
    """One Multi to one server: a put, a put to a family the table lacks, a row outside its
    region and a whole-row delete each get their own result; a region not served there
    fails as a whole with NotServingRegionException."""
    create(rpc_mini, "rpc_multi", [b"m"])
    native.write("rpc_multi", [Cell(b"c", b"f", b"q", 5, CellType.PUT, b"old"),
                               Cell(b"c", b"g", b"q", 5, CellType.PUT, b"old")])
    low, high = native.regions("rpc_multi")
    block = [Cell(b"a", b"f", b"q", 7, CellType.PUT, b"kept"),
             Cell(b"b", b"nope", b"q", 7, CellType.PUT, b"lost"),
             Cell(b"x", b"f", b"q", 7, CellType.PUT, b"outside")]
    request = multi_request([
        (low.name, [(0, mutation(b"a", PUT, 1)), (1, mutation(b"b", PUT, 1)),
                    (2, mutation(b"x", PUT, 1)), (3, mutation(b"c", DELETE, 0))]),
        (b"rpc_multi,zz,1.00000000000000000000000000000000.", [(4, mutation(b"zz", PUT, 0))]),
    ])
    conn = native.pool.get(low.host, low.port)
    first, unknown = decode_multi_response(
        conn.call("Multi", request, encode_cell_block(block)).response or b"")
    outcomes = {r.action: r.exception[0].rsplit(".", 1)[-1] if r.exception else None
                for r in first.results}
    assert outcomes == {0: None, 1: "NoSuchColumnFamilyException", 2: "WrongRegionException",
                        3: None}
    assert unknown.exception is not None and \
        unknown.exception[0] == "org.apache.hadoop.hbase.NotServingRegionException"
    assert high.start == b"m"
    assert flat(thrift2.scan("rpc_multi")) == [block[0]]
    assert {c.type for c in flat(native.scan("rpc_multi", raw=True)) if c.row == b"c"} == \
        {CellType.PUT, CellType.DELETE_FAMILY}


def test_a_multi_of_gets_reads_each_row_as_thrift2_does(rpc_mini: MiniHBase,
                                                        native: NativeClient,
                                                        thrift2: Thrift2Client) -> None:
    """One Multi of Gets to one server, its region's rows read together: each Get answers
    as Thrift2's Get of the same row does (every version, one column, a time range with one
    version, a missing row, a row asked twice), each Get's PageFilter counts its own row
    (HBase makes a filter per Get), a put sent before a Get of its row in the same
    RegionAction is applied after the Gets are read (HBase applies a run of puts and deletes
    where the run ends, a Get where it is met), and a row outside the region fails alone."""
    create(rpc_mini, "rpc_gets", [b"m"])
    native.write("rpc_gets", every_kind(ROWS))
    low, _ = native.regions("rpc_gets")
    page = bytes_field(4, string_field(1, "org.apache.hadoop.hbase.filter.PageFilter")
                       + bytes_field(2, varint_field(1, 1)))
    gets = [Get(b"a", max_versions=ALL_VERSIONS), Get(b"g", max_versions=ALL_VERSIONS),
            Get(b"h", (Column(b"f", (b"q1",)),), max_versions=ALL_VERSIONS),
            Get(b"a", time_range=(101, 104)), Get(b"b", max_versions=ALL_VERSIONS),
            Get(b"a", max_versions=ALL_VERSIONS)]
    sent = [get_message(g) for g in gets] + [
        get_message(Get(b"a")) + page, get_message(Get(b"g")) + page,
        get_message(Get(b"e", max_versions=ALL_VERSIONS)),
        get_message(Get(b"x", max_versions=ALL_VERSIONS))]
    actions = [bytes_field(3, varint_field(1, i) + bytes_field(3, m))
               for i, m in enumerate(sent)]
    actions.insert(0, bytes_field(3, varint_field(1, len(sent))  # sent first, applied last
                                  + bytes_field(2, mutation(b"e", PUT, 1))))
    request = bytes_field(1, bytes_field(1, region_specifier(low.name)) + b"".join(actions))
    put = Cell(b"e", b"f", b"q1", 7, CellType.PUT, b"put in the Multi")
    reply = native.pool.get(low.host, low.port).call("Multi", request,
                                                     encode_cell_block([put]))
    region, = decode_get_results(reply.response or b"", reply.cell_block)
    answers = {r.action: r for r in region.results}
    expected = [thrift2.get("rpc_gets", b"a"), thrift2.get("rpc_gets", b"g"),
                thrift2.get("rpc_gets", b"h", columns=[(b"f", b"q1")]),
                thrift2.get("rpc_gets", b"a", time_range=(101, 104), max_versions=1), [],
                thrift2.get("rpc_gets", b"a"),
                thrift2.get("rpc_gets", b"a", max_versions=1),
                thrift2.get("rpc_gets", b"g", max_versions=1), []]
    assert [list(answers[i].cells) for i in range(len(expected))] == expected
    assert thrift2.get("rpc_gets", b"e") == [put]  # stored, after the Gets were read
    assert all(expected[i] for i in (0, 1, 2, 3, 6, 7))
    assert len(expected[0]) > len(expected[3])
    refused = answers[len(expected)].exception
    assert refused is not None and refused[0].endswith("WrongRegionException")


def test_rows_asked_together_over_both_servers_and_a_moved_region(
        rpc_mini: MiniHBase, native: NativeClient, thrift2: Thrift2Client) -> None:
    """``get_rows`` of more rows than a Multi holds, in three regions over both servers,
    asked out of order with a missing row and a row twice, one region moved after the
    client found it: each row's cells as Thrift2's ``getMultiple`` reads them, in the order
    asked; the moved region's rows got again, each alone, from where it went."""
    create(rpc_mini, "rpc_rows", [b"r0100", b"r1500"])
    rows = [b"r%04d" % i for i in range(2_400)]
    native.write("rpc_rows", [Cell(r, b"f", b"q%d" % (i % 3), ts, CellType.PUT, b"%d" % ts)
                              for i, r in enumerate(rows) for ts in (1, 2)])
    first, *_ = native.regions("rpc_rows")
    _, servers = cluster_of(rpc_mini)
    assert len({(r.host, r.port) for r in native.regions("rpc_rows")}) == 2
    native.locator.locate("rpc_rows", b"r0000")  # the client holds the first region's place
    servers.move(first.encoded)
    relocations = native.retried[Kind.RELOCATE]
    asked = [*rows[::-1], b"r9999", rows[7]]
    expected = thrift2.get_rows("rpc_rows", asked)
    assert native.get_rows("rpc_rows", asked) == expected
    assert expected[-1] == expected[len(rows) - 1 - 7] and expected[len(rows)] == []
    assert all(len(cells) == 2 for cells in expected[:len(rows)])
    assert native.retried[Kind.RELOCATE] > relocations


def test_meta_as_hbase_lays_it_out(rpc_mini: MiniHBase, native: NativeClient,
                                   zookeeper: ZooKeeperServer) -> None:
    """ZooKeeper names the server holding hbase:meta; its rows, read with a plain scan, are
    the cluster's regions with their servers' RPC addresses, in MetaCellComparator order
    (start key ``k`` before ``k!``, though ``rpc_m2,k!,`` sorts first as bytes). The scan
    starts at ``rpc_m,``, which that comparator puts after ``rpc_m``'s first region (a row
    with one comma compares its whole self where a region id would be: 'r' > '1')."""
    create(rpc_mini, "rpc_m")
    create(rpc_mini, "rpc_m2", [b"k", b"k!"])
    cluster, servers = cluster_of(rpc_mini)
    with HBaseZooKeeper(zookeeper.address, rpc_mini.znode_parent) as zk:
        meta = zk.meta_server()
    assert meta is not None and meta == servers.servers[rpc_mini.meta_slot].name
    conn = native.pool.get(meta.host, meta.port)
    scan = Scan(start=b"rpc_m,", stop=b"rpc_m3")
    resp = decode_scan_response(*_reply(conn.call("Scan", open_scan_request(
        META_REGION, scan, 100, close=True))))
    rows = [cells for cells in resp.results]
    regions = [region_from_meta(cells[0].row, cells) for cells in rows]
    expected = [(r.region_name, r.server_host, r.server_port, r.server_start_code)
                for table in ("rpc_m", "rpc_m2") for r in cluster.regions(table)
                if (table, r.start_key) != ("rpc_m", b"")]
    assert [(r.name, r.host, r.port, r.start_code) for r in regions if r] == expected
    addresses = rpc_mini.describe()["region_server_rpc"]
    for cells in rows:
        columns = {c.qualifier: c.value for c in cells}
        if b"regioninfo" not in columns:
            assert cells[0].family == b"table"  # rpc_m2's table state row
            continue
        assert list(columns) == [b"regioninfo", b"seqnumDuringOpen", b"server",
                                 b"serverstartcode", b"sn", b"state"]
        assert columns[b"regioninfo"][:4] == b"PBUF" and columns[b"state"] == b"OPEN"
        sn = columns[b"sn"].decode()
        assert addresses[sn].rpartition(":")[2] == columns[b"server"].decode().rpartition(
            ":")[2]
    assert [(r.start, r.end) for r in native.regions("rpc_m")] == \
        [(b"", b"g"), (b"g", b"p"), (b"p", b"")]


def test_a_split_parent_stays_in_meta_until_the_janitor(rpc_mini: MiniHBase,
                                                        native: NativeClient) -> None:
    """After a split, hbase:meta keeps the parent's row as HBase does: its regioninfo
    marked offline and split, splitA and splitB naming the daughters, state SPLIT; clients
    skip it (regions and lookups give the daughters). The catalog janitor removes it."""
    create(rpc_mini, "rpc_sp", [])
    _, servers = cluster_of(rpc_mini)
    parent, = native.regions("rpc_sp")
    daughters = servers.split(parent.encoded, b"m")["daughters"]

    def meta_of_table() -> dict[str, dict[bytes, bytes]]:
        meta = native.locator.meta_server()
        scan = Scan(start=b"rpc_sp,,", stop=b"rpc_sp ,,")
        resp = decode_scan_response(*_reply(native.pool.get(*meta).call(
            "Scan", open_scan_request(META_REGION, scan, 100, close=True))))
        return {encoded_name(cells[0].row): {c.qualifier: c.value for c in cells}
                for cells in resp.results}

    rows = meta_of_table()
    assert set(rows) == {parent.encoded, *daughters}
    kept = rows[parent.encoded]
    assert list(kept) == [b"regioninfo", b"splitA", b"splitB", b"state"]
    assert kept[b"state"] == b"SPLIT"
    found = region_from_meta(parent.name, [Cell(parent.name, b"info", q, 1, CellType.PUT, v)
                                           for q, v in kept.items()])
    assert found is not None and found.offline and found.split
    assert (found.start, found.end, found.region_id) == (b"", b"", parent.region_id)
    named = [region_from_meta(parent.name, [Cell(parent.name, b"info", b"regioninfo", 1,
                                                 CellType.PUT, kept[q])])
             for q in (b"splitA", b"splitB")]
    assert [(d.start, d.end, d.region_id) for d in named if d] == \
        [(r.start, r.end, r.region_id) for r in native.regions("rpc_sp")]
    assert [(r.start, r.end) for r in native.regions("rpc_sp")] == [(b"", b"m"), (b"m", b"")]
    assert native.locator.locate("rpc_sp", b"a", cached=False).end == b"m"
    assert call_admin(rpc_mini.write_cluster_json(), "janitor") == [parent.encoded]
    assert set(meta_of_table()) == set(daughters)


def _reply(reply: Reply) -> tuple[bytes, bytes]:
    return reply.response or b"", reply.cell_block


def _call_error(conn: Connection, method: str, request: bytes) -> RemoteError:
    with pytest.raises(RemoteError) as caught:
        conn.call(method, request)
    return caught.value


def test_scanners_leases_order_and_partial_rows(rpc_mini: MiniHBase,
                                                native: NativeClient,
                                                thrift2: Thrift2Client) -> None:
    """A next out of step is OutOfOrderScannerNextException; a scanner whose lease ran out
    is UnknownScannerException; a row larger than the scan's byte limit comes in partial
    Results, which the client joins into the row Thrift2 reads."""
    create(rpc_mini, "rpc_s", [])
    big = [Cell(b"r%d" % i, b"f", b"q%02d" % q, 1, CellType.PUT, bytes([65 + q]) * 1000)
           for i in range(3) for q in range(10)]
    native.write("rpc_s", big)
    region, = native.regions("rpc_s")
    conn = native.pool.get(region.host, region.port)
    opened = decode_scan_response(*_reply(conn.call("Scan", open_scan_request(
        region.name, Scan(max_result_size=2500), 1))))
    assert opened.partial and opened.partial[0] and 0 < len(opened.results[0]) < 10
    assert opened.scanner_id is not None
    following = decode_scan_response(*_reply(conn.call("Scan", next_scan_request(
        opened.scanner_id, 1, 0))))  # the scan's byte limit holds for every call
    assert following.partial[0] and 0 < len(following.results[0]) < 10
    assert following.results[0][0] == big[len(opened.results[0])]
    error = _call_error(conn, "Scan", next_scan_request(opened.scanner_id, 1, 5))  # not 1
    assert error.class_name.endswith("OutOfOrderScannerNextException")
    assert error.kind is Kind.SCANNER
    server = rpc_mini.region_rpc[rpc_mini.region_servers.server(  # type: ignore[union-attr]
        f"{region.host},{region.port},{region.start_code}").slot]
    server.lease_seconds = 0.2
    try:
        lease = decode_scan_response(*_reply(conn.call("Scan", open_scan_request(
            region.name, Scan(), 1))))
        assert lease.ttl == 200 and lease.scanner_id is not None
        time.sleep(0.5)
        error = _call_error(conn, "Scan", next_scan_request(lease.scanner_id, 1, 0))
        assert error.class_name == "org.apache.hadoop.hbase.UnknownScannerException"
    finally:
        server.lease_seconds = 60.0
    with NativeClient(rpc_mini.zookeeper or "", rpc_mini.znode_parent,
                      max_result_bytes=2500) as small:
        rows = list(small.scan("rpc_s"))
    assert [len(r) for r in rows] == [10, 10, 10]
    assert flat(iter(rows)) == flat(thrift2.scan("rpc_s")) == big


def test_a_closed_scanner_is_remembered_for_a_lease_period(rpc_mini: MiniHBase,
                                                           native: NativeClient) -> None:
    """A scanner closed with its region's last row is answered (its id alone) while calls
    on it come within a lease period of each other; left alone longer, it is unknown, as is
    an open one whose lease ran out (HBase's ``closedScanners`` expire after access; a
    lease that runs out does not enter them). The calls go to the region's server's
    handlers built here over the cluster's regions, with a lease clock the test moves."""
    create(rpc_mini, "rpc_closed", [])
    native.write("rpc_closed", [Cell(b"r%d" % i, b"f", b"q", 1, CellType.PUT, b"v")
                                for i in range(3)])
    region, = native.regions("rpc_closed")
    cluster, servers = cluster_of(rpc_mini)
    now = [1000.0]
    rpc = RegionServerRpc(cluster, servers, servers.server(
        f"{region.host},{region.port},{region.start_code}").slot, lambda: False,
        clock=lambda: now[0])

    def scan(request: bytes) -> ScanResponse:
        ctx = CallContext(Call(1, "Scan", request, b"", 0),
                          ConnectionHeader("ClientService", "test", "", None))
        return decode_scan_response(*rpc.scan(ctx))

    whole = scan(open_scan_request(region.name, Scan(), 10))
    assert len(whole.results) == 3 and whole.more_results_in_region is False
    held = scan(open_scan_request(region.name, Scan(), 1))
    assert held.more_results_in_region and held.scanner_id is not None
    assert whole.scanner_id is not None
    for _ in range(3):  # each call within the lease keeps the closed one answered
        now[0] += 50.0
        again = scan(next_scan_request(whole.scanner_id, 1, 1))
        assert (again.scanner_id, again.results, again.more_results,
                again.more_results_in_region) == (whole.scanner_id, (), None, None)
    now[0] += 61.0
    for scanner in (whole.scanner_id, held.scanner_id):  # forgotten; its lease ran out
        with pytest.raises(ServiceError) as caught:
            scan(next_scan_request(scanner, 1, 1))
        assert caught.value.class_name == "org.apache.hadoop.hbase.UnknownScannerException"
        assert caught.value.do_not_retry and f"'{scanner}'" in caught.value.message


def test_scan_and_writes_ride_a_split_and_a_move(rpc_mini: MiniHBase, native: NativeClient,
                                                 thrift2: Thrift2Client) -> None:
    """A region split, then a daughter moved, while a scan is under way: the scan resumes
    after its last row (never a row twice or missed); the old server answers
    RegionMovedException naming the new one; writes after the move reach it."""
    create(rpc_mini, "rpc_sm", [])
    rows = [b"r%03d" % i for i in range(120)]
    native.write("rpc_sm", [Cell(r, b"f", b"q", 1, CellType.PUT, r) for r in rows])
    _, servers = cluster_of(rpc_mini)
    relocations = native.retried[Kind.RELOCATE]
    seen: list[bytes] = []
    region, = native.regions("rpc_sm")
    for i, cells in enumerate(native.scan("rpc_sm")):
        seen.append(cells[0].row)
        if i == 20:
            servers.split(region.encoded, b"r060")
        if i == 40:
            low = native.locator.locate("rpc_sm", b"r000", cached=False)
            moved = servers.move(low.encoded)
    assert seen == rows
    assert native.retried[Kind.RELOCATE] > relocations
    old = native.pool.get(low.host, low.port)
    error = _call_error(old, "Get", get_request(low.name, Get(b"r001")))
    assert error.class_name == "org.apache.hadoop.hbase.exceptions.RegionMovedException"
    assert f"{error.hostname},{error.port}" == moved["to"].rsplit(",", 1)[0]
    native.write("rpc_sm", [Cell(b"r001", b"f", b"q", 2, CellType.PUT, b"after")])
    assert thrift2.get("rpc_sm", b"r001", max_versions=1)[0].value == b"after"
    assert [(r.start, r.end) for r in native.regions("rpc_sm")] == [(b"", b"r060"),
                                                                   (b"r060", b"")]


def test_connection_refusals(rpc_mini: MiniHBase) -> None:
    """A bad preamble and a service the port does not serve are answered about the
    connection (call id -1) and the connection closed; an unknown method fails alone."""
    host, port = rpc_mini.describe()["master_rpc"].split(":")

    def refusal(opening: bytes) -> str:
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(opening)
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        reply, = ReplyDecoder().feed(data)
        assert reply.call_id == CONNECTION_CALL_ID and reply.exception is not None
        return reply.exception.class_name

    assert refusal(b"HBas\x01\x50") == "org.apache.hadoop.hbase.ipc.FatalConnectionException"
    assert refusal(preamble(81) + connection_header("MasterService", "u")).endswith(
        "FatalConnectionException")
    assert refusal(preamble() + connection_header("ClientService", "u")).endswith(
        "ipc.UnknownServiceException")
    conn = Connection(host, int(port), service="MasterService")
    try:
        error = _call_error(conn, "Shutdown", b"")
        assert error.class_name == "org.apache.hadoop.hbase.DoNotRetryIOException"
        assert error.do_not_retry and not conn.closed  # the connection serves on
    finally:
        conn.close()


def test_killed_servers(rpc_mini: MiniHBase, native: NativeClient,
                        thrift2: Thrift2Client, zookeeper: ZooKeeperServer) -> None:
    """A killed region server's port refuses connections, as a dead process's; its regions
    reopen elsewhere and hbase:meta says where: reads and writes relocate; when the server
    held meta, ZooKeeper names the new holder; once restarted, on its port under a new start
    code, it serves a region moved to it."""
    create(rpc_mini, "rpc_k")
    native.write("rpc_k", every_kind(ROWS))
    before = flat(thrift2.scan("rpc_k"))
    _, servers = cluster_of(rpc_mini)
    meta_holder = servers.servers[rpc_mini.meta_slot]
    old = meta_holder.name  # the holder is given a new one by its restart
    address = ("127.0.0.1", old.port)
    socket.create_connection(address, timeout=5).close()  # listening while it lives
    servers.kill(meta_holder.slot)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(address, timeout=5)
    with HBaseZooKeeper(zookeeper.address, rpc_mini.znode_parent) as zk:
        assert zk.meta_server() == servers.servers[rpc_mini.meta_slot].name != old
    # the client learns it on its own: its meta server refuses, ZooKeeper is asked again
    assert flat(native.scan("rpc_k")) == before
    native.write("rpc_k", [Cell(b"a", b"f", b"q9", 9, CellType.PUT, b"v")])
    assert thrift2.get("rpc_k", b"a", columns=[(b"f", b"q9")]) == \
        native.get("rpc_k", b"a", columns=[Column(b"f", (b"q9",))]) == \
        [Cell(b"a", b"f", b"q9", 9, CellType.PUT, b"v")]
    assert {r.port for r in native.regions("rpc_k")} == \
        {servers.servers[rpc_mini.meta_slot].name.port}
    back = servers.restart(meta_holder.slot)["server"]  # same port, a new start code
    assert back.rsplit(",", 1)[0] == str(old).rsplit(",", 1)[0] and \
        int(back.rsplit(",", 1)[1]) > old.start_code
    socket.create_connection(address, timeout=5).close()
    region = native.regions("rpc_k")[1]
    servers.move(region.encoded, meta_holder.slot)
    assert native.get("rpc_k", b"h") == thrift2.get("rpc_k", b"h")  # relocated to it
    assert str(native.locator.locate("rpc_k", b"h").start_code) == back.rsplit(",", 1)[1]


def test_rpc_outage_and_slow_server(rpc_mini: MiniHBase, thrift2: Thrift2Client) -> None:
    """The admin endpoint closes every RPC port (the client fails with a line naming the
    server; Thrift2 serves on) and opens them again on the same ports; a slow server makes
    a call with a shorter timeout time out, and a call without one wait and succeed; calls
    in flight together on one connection wait side by side."""
    create(rpc_mini, "rpc_out", [])
    cluster_json = rpc_mini.write_cluster_json()
    ports = rpc_mini.describe()["region_server_rpc"]
    call_admin(cluster_json, "service", {"name": "rpc", "running": False})
    try:
        with NativeClient(rpc_mini.zookeeper or "", rpc_mini.znode_parent, attempts=2,
                          max_backoff=0.1) as client, \
                pytest.raises(NativeCallError, match=r"rpc_out.*cannot connect"):
            client.write("rpc_out", [Cell(b"r", b"f", b"q", 1, CellType.PUT, b"v")])
        thrift2.write_cells("rpc_out", [Cell(b"r", b"f", b"q", 1, CellType.PUT, b"v")])
    finally:
        call_admin(cluster_json, "service", {"name": "rpc", "running": True})
    assert rpc_mini.describe()["region_server_rpc"] == ports
    call_admin(cluster_json, "rpc-latency", {"seconds": 1.0})
    try:
        with NativeClient(rpc_mini.zookeeper or "", rpc_mini.znode_parent, attempts=1,
                          call_timeout=0.2) as hurried, \
                pytest.raises(NativeCallError, match="rpc_out"):
            hurried.get("rpc_out", b"r")
        with NativeClient(rpc_mini.zookeeper or "", rpc_mini.znode_parent) as patient:
            assert patient.get("rpc_out", b"r") == thrift2.get("rpc_out", b"r")
            # six calls in flight on one connection are served side by side: one after
            # the other, the last would wait 6 s and time out at 4.5 s
            region = patient.locator.locate("rpc_out", b"r")
            conn = patient.pool.get(region.host, region.port)
            request = get_request(region.name, Get(b"r"))
            with ThreadPoolExecutor(6) as callers:
                replies = list(callers.map(lambda _: conn.call("Get", request, timeout=4.5),
                                           range(6)))
            assert len({r.call_id for r in replies}) == 6
    finally:
        call_admin(cluster_json, "rpc-latency", {"seconds": 0})


def test_a_scan_stopped_at_a_regions_end_leaves_no_scanner_open(
        rpc_mini: MiniHBase, native: NativeClient, thrift2: Thrift2Client) -> None:
    """The next region's scanner opens while the last rows of a region are handed out: a
    consumer that stops at the region's last row finds it opened, unasked, in region [g, p),
    and stopping leaves no scanner of the table open on any server; a scan that goes on
    reads what Thrift2 reads."""
    create(rpc_mini, "rpc_ahead")
    native.write("rpc_ahead", [Cell(b"%s%02d" % (prefix, i), b"f", b"q", 1, CellType.PUT,
                                    b"v%d" % i) for prefix in (b"a", b"h", b"q")
                               for i in range(20)])

    def open_scanners() -> list[bytes]:
        return [s.region for rpc in rpc_mini.region_rpc for s in list(rpc._scanners.values())
                if s.region.startswith(b"rpc_ahead,")]

    scan = cast(Generator[list[Cell], None, None], native.scan("rpc_ahead"))
    assert next(row for row in scan if row[0].row == b"a19")  # the first region's last row
    deadline = time.monotonic() + 10
    while not open_scanners() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [name.split(b",")[1] for name in open_scanners()] == [b"g"]
    scan.close()
    assert open_scanners() == []
    assert flat(native.scan("rpc_ahead")) == flat(thrift2.scan("rpc_ahead"))
