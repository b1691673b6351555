"""Region location without HBase: the session's real ZooKeeper holds a
``meta-region-server`` znode (metadata prefix, PBUF, under a non-default parent) naming a
scripted server that answers the reversed ``hbase:meta`` scans with meta rows built from
HBase.proto's field numbers."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient

from hbase_migrate.cluster.zk.zkpayload import (
    MetaRegionServer,
    add_metadata,
    encode_meta_region_server,
)
from hbase_migrate.rpc.codec import Call, encode_reply
from hbase_migrate.rpc.connection import Pool
from hbase_migrate.rpc.errors import RegionNotFoundError
from hbase_migrate.rpc.locate import META_REGION, Locator, meta_order
from hbase_migrate.rpc.scan import ScanResponse, decode_scan_request, scan_response
from hbase_migrate.wal.model import Cell, CellType
from hbase_migrate.wal.names import ServerName
from hbase_migrate.wal.protobuf import bytes_field, varint_field
from tests.rpc.scripted import ScriptedServer

pytestmark = pytest.mark.integration


def meta_row(table: bytes, start: bytes, end: bytes, port: int, *, split: bool = False,
             region_id: int = 1700000000000) -> tuple[Cell, ...]:
    key = b"%s,%s,%d.%s." % (table, start, region_id, (start.hex() or "0").ljust(32, "0").encode())
    info = (varint_field(1, region_id)
            + bytes_field(2, bytes_field(1, b"default") + bytes_field(2, table))
            + bytes_field(3, start) + bytes_field(4, end)
            + (varint_field(5, 1) + varint_field(6, 1) if split else b""))
    put = CellType.PUT
    return (Cell(key, b"info", b"regioninfo", 1, put, b"PBUF" + info),
            Cell(key, b"info", b"server", 1, put, b"127.0.0.1:%d" % port),
            Cell(key, b"info", b"serverstartcode", 1, put, (5).to_bytes(8, "big")))


@pytest.fixture
def meta(zookeeper: Any) -> Iterator[tuple[ScriptedServer, list[list[tuple[Cell, ...]]], str]]:
    """A scripted meta server; the test puts each answer's rows in the returned list."""
    answers: list[list[tuple[Cell, ...]]] = []

    def script(call: Call, conn: socket.socket) -> None:
        rows = answers.pop(0)
        resp = ScanResponse(1, tuple(rows), (False,) * len(rows), True, False)
        conn.sendall(encode_reply(call.call_id, *scan_response(resp)))

    parent = "/custom-hbase"
    zk = KazooClient(hosts=zookeeper.address)
    zk.start()
    with ScriptedServer(script) as server:
        payload = encode_meta_region_server(MetaRegionServer(
            ServerName("127.0.0.1", server.port, 5)))
        zk.create(f"{parent}/meta-region-server", add_metadata(payload, "master:16000"),
                  makepath=True)
        try:
            yield server, answers, parent
        finally:
            zk.delete(parent, recursive=True)
            zk.stop()
            zk.close()


def test_locate_reads_meta_as_hbase_does(zookeeper: Any, meta: Any) -> None:
    server, answers, parent = meta
    port = server.port
    locator = Locator(zookeeper.address, parent, Pool(call_timeout=5))
    # the reversed scan from "t,g,99999999999999" meets the region starting at g first
    answers.append([meta_row(b"t", b"g", b"p", port), meta_row(b"t", b"", b"g", port)])
    region = locator.locate("t", b"g")
    assert (region.start, region.end, region.port, region.start_code) == (b"g", b"p", port, 5)
    assert locator.locate("t", b"h") is region  # from the cache: no call
    request = decode_scan_request(server.calls[0].request)
    assert request.region == META_REGION and request.close
    assert request.scan is not None and request.scan.reversed
    assert request.scan.start == b"t,g,99999999999999"
    # a split parent is passed over; its daughter behind it is taken
    answers.append([meta_row(b"t", b"p", b"", port, split=True, region_id=2),
                    meta_row(b"t", b"p", b"x", port, region_id=3)])
    assert locator.locate("t", b"q").region_id == 3
    # nothing of the table: no such table, not retried
    answers.append([meta_row(b"s", b"", b"", port)])
    with pytest.raises(RegionNotFoundError, match="no such table") as info:
        locator.locate("u", b"a")
    assert not info.value.retryable
    locator.pool.close()


def test_meta_rows_compare_as_hbase_compares_them() -> None:
    """``hbase:meta`` rows in HBase's ``MetaCellComparator`` order (branch-2.6): the table,
    then the start key, then the region id; a bound with one comma (``tb,``) compares its
    whole self where the region id would be, so it sorts after the table's first region
    (whose empty start key ties) and before its second ('' < 'm')."""
    first = b"tb,,1700000000000.0123456789abcdef0123456789abcdef."
    second = b"tb,m,1700000000001.fedcba9876543210fedcba9876543210."
    assert meta_order(b"tb") < meta_order(first)  # no comma: before every row with one
    assert meta_order(b"ta,zzz,1.x.") < meta_order(first)
    assert meta_order(first) < meta_order(b"tb,") < meta_order(second)
    assert meta_order(second) < meta_order(b"tb,\xff")
