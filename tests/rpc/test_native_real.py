"""The native RPC client against real Apache HBase 2.6.1 (the session's ``real_hbase``) and
against the embedded cluster alike (real HBase is the judge: where they differ, the embedded
cluster is wrong), with the Thrift2 gateway as the independent reader and writer: every cell
type and several versions written one way and read back the other, rows read in batches,
raw scans with their
delete markers, time ranges, a row equal to a split key, region listings, and a region move
ridden out by a scan and by writes."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from typing import Any

import pytest

from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.cluster.retry import Kind
from hbase_migrate.rpc import writes as writes_module
from hbase_migrate.rpc.client import NativeClient
from hbase_migrate.rpc.codec import encode_cell_block
from hbase_migrate.rpc.errors import RemoteError
from hbase_migrate.rpc.multi import PUT, decode_multi_response, row_multi
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType, Tag, cell_order
from minihbase.regionserver import WalSettings
from stackprocs.admin_client import call_admin
from tests.rpc.cells import FAMILIES, ROWS, SPLITS, every_kind, flat
from tests.support.minicluster import EmbeddedClusters

pytestmark = pytest.mark.integration



@pytest.fixture(scope="module",
                params=["minihbase", pytest.param("real", marks=pytest.mark.realstack)])
def described(request: pytest.FixtureRequest,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Real HBase (the session's), or an embedded cluster of two region servers in the
    session's ZooKeeper: the same calls, the same expectations."""
    if request.param == "real":
        real = request.getfixturevalue("real_hbase")
        yield {**real.described, "cluster_json": real.cluster_json, "stack": "real"}
        return
    zookeeper = request.getfixturevalue("zookeeper")
    with EmbeddedClusters(tmp_path_factory.mktemp("native"), lambda: zookeeper) as clusters:
        mini = clusters(over="native", wal=WalSettings(region_servers=2, roll_period=3600))
        yield {**mini.describe(), "cluster_json": mini.write_cluster_json(),
               "stack": "minihbase"}


@pytest.fixture(scope="module")
def native(described: dict[str, Any]) -> Iterator[NativeClient]:
    with NativeClient(described["zookeeper"], described["znode_parent"],
                      max_backoff=1.0) as client:
        yield client


def create(described: dict[str, Any], table: str, splits: list[bytes] = SPLITS) -> None:
    with Thrift2Client(described["thrift2"]) as t2:
        t2.create_table(TableDescriptor(table, FAMILIES), splits)


def thrift2_cells(described: dict[str, Any], table: str, **kw: Any) -> list[Cell]:
    with Thrift2Client(described["thrift2"]) as t2:
        return flat(t2.scan(table, **kw))


def test_native_writes_read_by_thrift2_and_raw(described: dict[str, Any],
                                               native: NativeClient) -> None:
    """Cells of every type written natively: a raw native scan gives back exactly what was
    written (puts hidden by deletes, and the markers), in HBase's order; the visible cells,
    and those of a time range, are what Thrift2 reads."""
    create(described, "native_w")
    written = every_kind(ROWS)
    native.write("native_w", written)
    raw = flat(native.scan("native_w", raw=True))
    assert raw == sorted(written, key=cell_order)
    visible = flat(native.scan("native_w"))
    assert visible == thrift2_cells(described, "native_w")
    assert len(visible) < len([c for c in written if c.type == CellType.PUT])
    ranged = flat(native.scan("native_w", time_range=(101, 103)))
    assert ranged == thrift2_cells(described, "native_w", time_range=(101, 103))
    assert {c.timestamp for c in ranged} == {101, 102}
    assert flat(native.scan("native_w", b"g", b"q")) == \
        thrift2_cells(described, "native_w", start=b"g", stop=b"q")
    with Thrift2Client(described["thrift2"]) as t2:
        for row in ROWS:
            assert native.get("native_w", row) == t2.get("native_w", row), row
            assert native.get("native_w", row, time_range=(100, 102)) == \
                t2.get("native_w", row, time_range=(100, 102)), row


def test_rows_asked_together_are_each_row_s_every_version(described: dict[str, Any],
                                                          native: NativeClient) -> None:
    """``get_rows`` (a Multi of Gets per region server) reads each row as Thrift2's Get of
    every version does, rows of every region and a missing one among them, in the order
    asked; Thrift2's ``getMultiple`` the same."""
    create(described, "native_rows")
    native.write("native_rows", every_kind(ROWS))
    asked = [*reversed(ROWS), b"no such row", ROWS[0]]
    with Thrift2Client(described["thrift2"]) as t2:
        expected = [t2.get("native_rows", row) for row in asked]
        assert t2.get_rows("native_rows", asked) == expected
    assert native.get_rows("native_rows", asked) == expected
    assert any(len({c.timestamp for c in cells}) > 1 for cells in expected)  # versions


def test_a_large_cell_both_ways(described: dict[str, Any], native: NativeClient) -> None:
    """A 3 MiB value (a call frame far past one-byte lengths) written natively, read by
    Thrift2; and written by Thrift2, read natively."""
    create(described, "native_big", [])
    big = bytes(range(256)) * (3 * 4096) + b"end"
    native.write("native_big", [Cell(b"n", b"f", b"q", 1, CellType.PUT, big)])
    with Thrift2Client(described["thrift2"]) as t2:
        assert [c.value for c in t2.get("native_big", b"n")] == [big]
        t2.put_cells("native_big", [Cell(b"t", b"f", b"q", 1, CellType.PUT, big[::-1])])
    assert [c.value for c in native.get("native_big", b"t")] == [big[::-1]]
    assert [len(c[0].value) for c in native.scan("native_big")] == [len(big)] * 2


def test_equal_timestamps_in_flight_end_as_written_one_at_a_time(
        described: dict[str, Any]) -> None:
    """Puts and deletes of one cell at one timestamp, 600 rows over three regions, written in
    one call by a client with two Multis in flight per server and stages cut mid-row: the
    table ends cell for cell (raw and visible) as the same cells written one at a time,
    each call after the one before was answered, leave another table; and where only puts
    of one cell were written, the last one is what is read."""
    create(described, "native_eq_batched")
    create(described, "native_eq_single")
    put, f, q, q2 = CellType.PUT, b"f", b"q", b"q2"
    patterns = [[(put, q, b"v0"), (put, q, b"v1"), (put, q, b"v2")],
                [(put, q, b"v0"), (CellType.DELETE, q, b""), (put, q, b"v1")],
                [(put, q, b"v0"), (put, q2, b"v1"), (CellType.DELETE_COLUMN, q, b""),
                 (put, q, b"v2")],
                [(put, q, b"v0"), (CellType.DELETE_FAMILY_VERSION, b"", b""), (put, q, b"v1"),
                 (put, q, b"v2")]]
    rows = [b"%s%04d" % (prefix, i) for prefix in (b"a", b"h", b"q") for i in range(200)]
    written = [Cell(row, f, qualifier, 1_700_000_000_000, kind, value)
               for i, row in enumerate(rows) for kind, qualifier, value in patterns[i % 4]]
    with NativeClient(described["zookeeper"], described["znode_parent"],
                      max_multi_bytes=24_000) as batched:
        batched.write("native_eq_batched", written)
        assert batched.writes.slots.peak == 2
    with NativeClient(described["zookeeper"], described["znode_parent"]) as single:
        for c in written:
            single.write("native_eq_single", [c])
        for raw in (True, False):
            assert flat(single.scan("native_eq_batched", raw=raw)) == \
                flat(single.scan("native_eq_single", raw=raw))
        last_puts = {c.row: c.value for c in flat(single.scan("native_eq_batched"))
                     if c.row in rows[::4]}
    assert last_puts == dict.fromkeys(rows[::4], b"v2")


def test_thrift2_writes_read_natively(described: dict[str, Any], native: NativeClient) -> None:
    """The same cells written through the Thrift2 gateway read back natively, raw and not."""
    create(described, "native_r")
    written = every_kind(ROWS)
    with Thrift2Client(described["thrift2"]) as t2:
        t2.write_cells("native_r", written)
    assert flat(native.scan("native_r", raw=True)) == sorted(written, key=cell_order)
    assert flat(native.scan("native_r")) == thrift2_cells(described, "native_r")


def test_tags_travel_with_keyvalue_codec_with_tags(described: dict[str, Any]) -> None:
    """Cells written with tags by a client of KeyValueCodecWithTags come back with them to
    such a client, and without them to one of the default KeyValueCodec."""
    if described["stack"] == "minihbase":
        pytest.skip("the embedded cluster's store keeps no tags")
    create(described, "native_tags", [])
    tagged = Cell(b"r", b"f", b"q", 3, CellType.PUT, b"v", (Tag(66, b"mark"),))
    with NativeClient(described["zookeeper"], described["znode_parent"], tags=True) as client:
        client.write("native_tags", [tagged])
        assert client.get("native_tags", b"r") == [tagged]
    with NativeClient(described["zookeeper"], described["znode_parent"]) as client:
        assert client.get("native_tags", b"r") == [tagged._replace(tags=())]


def test_a_region_s_puts_are_answered_in_row_order_and_sent_so(
        described: dict[str, Any], native: NativeClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server answers a Multi's puts of one region sorted by row, whatever order they
    were sent in (HBASE-17924); the client sends each region's rows sorted, so a write of
    rows out of key order (a WAL's) gets replies read without decoding them, and lands."""
    create(described, "native_order")
    region = native.locate("native_order", b"a")
    sent = [b"a3", b"a1", b"a2"]  # action i writes row sent[i]
    multi = row_multi([(region.name, [(row, [Cell(row, b"f", b"q", 1, CellType.PUT, b"v")])
                                      for row in sent])], PUT)
    block = encode_cell_block([Cell(row, b"f", b"q", 1, CellType.PUT, b"v") for row in sent])
    reply = native.pool.get(region.host, region.port).start("Multi", multi, block).result()
    [answered] = decode_multi_response(reply.response or b"")
    assert [sent[r.action] for r in answered.results] == sorted(sent)

    decoded: list[int] = []

    def counted(data: bytes) -> Any:
        decoded.append(len(data))
        return decode_multi_response(data)

    monkeypatch.setattr(writes_module, "decode_multi_response", counted)
    rows = [b"%s%03d" % (p, i) for p in (b"b", b"h", b"q") for i in range(100)]
    random.Random(7).shuffle(rows)
    cells = [Cell(row, b"g", b"q", 5, CellType.PUT, row[::-1]) for row in rows]
    native.write("native_order", cells)
    assert decoded == []
    assert flat(native.scan("native_order", b"b")) == sorted(cells, key=cell_order)


def test_split_key_rows_and_region_listing(described: dict[str, Any],
                                           native: NativeClient) -> None:
    """A row equal to a split key is in the region that starts with it; the listing tiles
    the table and agrees with the gateway's."""
    create(described, "native_split")
    native.write("native_split", [Cell(r, b"f", b"q", 5, CellType.PUT, r) for r in ROWS])
    regions = native.regions("native_split")
    assert [(r.start, r.end) for r in regions] == [(b"", b"g"), (b"g", b"p"), (b"p", b"")]
    assert native.locator.locate("native_split", b"g").start == b"g"
    assert native.locator.locate("native_split", b"p").start == b"p"
    assert native.locator.locate("native_split", b"f\xff").start == b""
    assert [c.value for c in native.get("native_split", b"g")] == [b"g"]
    with Thrift2Client(described["thrift2"]) as t2:
        gateway = t2.regions("native_split")
    assert [(r.start, r.end, r.host, r.port) for r in regions] == \
        [(g.start_key, g.end_key, g.server_host, g.server_port) for g in gateway]
    assert all(len(r.encoded) == 32 for r in regions)


def test_an_unknown_family_is_never_retried(described: dict[str, Any],
                                            native: NativeClient) -> None:
    create(described, "native_nf", [])
    with pytest.raises(Exception, match="NoSuchColumnFamilyException") as info:
        native.write("native_nf", [Cell(b"r", b"nope", b"q", 1, CellType.PUT, b"v")])
    assert "table native_nf" in str(info.value) and "server " in str(info.value)
    cause = info.value.__cause__
    assert isinstance(cause, RemoteError) and not cause.retryable


def test_a_region_move_is_ridden_out_by_scan_and_writes(described: dict[str, Any],
                                                        native: NativeClient) -> None:
    """Mid-scan, the region being read moves to the other server: the scan goes on after
    its last row (every row once); writes to the moved region then succeed after the
    client relocates it; the old location was cached before."""
    table = "native_move"
    create(described, table)
    rows = [b"%s%04d" % (p, i) for p in (b"a", b"h", b"q") for i in range(400)]
    native.write(table, [Cell(r, b"f", b"q", 7, CellType.PUT, r) for r in rows])
    native.get(table, b"h0001")  # the module's client caches the location before the move
    small = NativeClient(described["zookeeper"], described["znode_parent"], rows_per_call=50,
                         max_backoff=1.0)
    try:
        scan = small.scan(table)
        got = [next(scan)[0].row for _ in range(450)]  # into the second region
        region = small.locator.locate(table, got[-1])
        assert region.start == b"g"
        moved = call_admin(described["cluster_json"], "move", {"region": region.encoded})
        assert moved["from"] != moved["to"]
        began = time.monotonic()
        got += [cells[0].row for cells in scan]
        assert got == rows
        assert small.retried[Kind.RELOCATE] + small.retried[Kind.SCANNER] >= 1
    finally:
        small.close()
    assert native.locator.locate(table, b"h0001").port == region.port  # stale
    before = native.retried[Kind.RELOCATE]
    native.write(table, [Cell(b"h0001", b"f", b"q", 8, CellType.PUT, b"after")])
    assert native.retried[Kind.RELOCATE] > before
    assert native.locator.locate(table, b"h0001").port != region.port
    assert [c.value for c in native.get(table, b"h0001")] == [b"after", b"h0001"]
    assert time.monotonic() - began < 30
