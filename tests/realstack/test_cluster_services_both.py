"""The ZooKeeper layout and WebHDFS as the project's readers see them, on both stacks: the
embedded cluster and real Apache HBase (the specification). Operations go through the admin
endpoint both stacks offer, so each test is written once."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hdfs import InsecureClient
from kazoo.client import KazooClient

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.storage.walstore import WebHdfsWalStore
from hbase_migrate.cluster.zk.zkpayload import decode_region_server_info
from hbase_migrate.cluster.zk.zookeeper import HBaseZooKeeper
from hbase_migrate.thrift.thrift2 import Thrift2Client, Thrift2UnreachableError
from hbase_migrate.wal.model import Cell, CellType
from hbase_migrate.wal.reader import read_entries
from minihbase.regionserver import WalSettings
from stackprocs.admin_client import call_admin
from tests.support.minicluster import EmbeddedClusters
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration
STACKS = ["minihbase", pytest.param("real", marks=pytest.mark.realstack)]


@pytest.fixture(scope="module", params=STACKS)
def described(request: pytest.FixtureRequest,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The stack's cluster.json (written to a file for ``call_admin``) with ``cluster_json``."""
    if request.param == "real":
        real = request.getfixturevalue("real_hbase")
        yield {**real.described, "cluster_json": real.cluster_json}
        return
    zookeeper = request.getfixturevalue("zookeeper")
    folder = tmp_path_factory.mktemp("services")
    with EmbeddedClusters(folder) as embedded:
        mini = embedded("minihbase", folder=folder, zookeeper=zookeeper.address,
                        wal=WalSettings(region_servers=2, roll_period=3600),
                        replication_peer="1")
        path = mini.write_cluster_json()
        yield {**json.loads(path.read_text()), "cluster_json": path}


def write(described: dict[str, Any], table: str, rows: list[bytes]) -> None:
    with Thrift2Client(described["thrift2"]) as t2:
        if not t2.table_exists(table):
            t2.create_table(TableDescriptor(table, (FamilyDescriptor(b"f", scope=1),)), [b"m"])
        t2.put_cells(table, [Cell(r, b"f", b"q", 1, CellType.PUT, b"v") for r in rows])


def test_zookeeper_layout(described: dict[str, Any]) -> None:
    """rs/ holds one ephemeral znode per live server (FF-prefixed PBUF payload), master and
    meta-region-server name live servers, hbaseid is set, the peer is listed, and each live
    server queues its current WAL for the peer."""
    write(described, "zk_layout", [b"a", b"z"])
    info = call_admin(described["cluster_json"], "info")
    live = sorted(s["name"] for s in info["servers"] if s["alive"])
    parent = described["znode_parent"]
    with HBaseZooKeeper(described["zookeeper"], parent) as zk:
        assert sorted(str(s) for s in zk.live_servers()) == live
        assert zk.master() is not None
        assert str(zk.meta_server()) in live
        assert zk.cluster_id()
        assert [(p.peer_id, p.enabled) for p in zk.replication_peers()] == [("1", True)]
        queues = {str(q.server): q for q in zk.replication_queues() if not q.recovered}
        for server in info["servers"]:
            if server["alive"]:
                assert server["wal"] in dict(queues[server["name"]].wals)
    raw = KazooClient(hosts=described["zookeeper"])
    raw.start()
    try:
        data, stat = raw.get(f"{parent}/rs/{live[0]}")
        assert stat.ephemeralOwner != 0 and data[0] == 0xFF
        assert decode_region_server_info(data).version_info is not None
    finally:
        raw.stop()
        raw.close()


def test_webhdfs_lists_stats_reads_and_archives(described: dict[str, Any]) -> None:
    """WALs/<server>/ lists each live server's current WAL; status and OPEN (with offset and
    length) give its bytes. Rolled, flushed and rolled again (HBase archives the WALs whose
    edits are all flushed when it rolls), it is in oldWALs/ and gone from WALs/."""
    write(described, "webhdfs_t", [b"a", b"b", b"x"])
    client = InsecureClient(described["webhdfs"], user="hbase")
    root = described["hbase_root"]
    info = call_admin(described["cluster_json"], "info")
    live = {s["name"]: s for s in info["servers"] if s["alive"]}
    assert set(live) <= set(client.list(f"{root}/WALs"))
    name, server = next((n, s) for n, s in live.items() if s["wal_size"])
    path = f"{root}/WALs/{name}/{server['wal']}"
    assert server["wal"] in client.list(f"{root}/WALs/{name}")
    with client.read(path) as reader:
        whole = reader.read()
    assert len(whole) >= server["wal_size"] > 0
    assert client.status(path)["length"] <= len(whole)
    with client.read(path, offset=4, length=10) as reader:
        assert reader.read() == whole[4:14]
    call_admin(described["cluster_json"], "roll", {"server": name})
    call_admin(described["cluster_json"], "flush", {})
    call_admin(described["cluster_json"], "roll", {"server": name})
    wait_for(lambda: server["wal"] in client.list(f"{root}/oldWALs"), 60,
             f"{server['wal']} archived to oldWALs/", every=0.3)
    assert server["wal"] not in client.list(f"{root}/WALs/{name}")


def region_server(described: dict[str, Any], encoded: str) -> str:
    info = call_admin(described["cluster_json"], "info")
    return next(s["name"] for s in info["servers"] if encoded in s["regions"])


def test_move_bulk_load_and_replication_switch(described: dict[str, Any]) -> None:
    """A moved region opens on the other server and its next edits go to that server's WAL;
    bulk-loaded cells are readable and leave a BULK_LOAD marker (no cells) in the WAL; the
    peer can be disabled and enabled again."""
    table = "ops_t"
    write(described, table, [b"a"])
    with Thrift2Client(described["thrift2"]) as t2:
        located = t2.regions(table)
    # Thrift2 tells ranges and servers, not region ids (HBase leaves regionId 0): the
    # region's encoded name comes from the WAL of the server holding it.
    assert {r.region_id for r in located} == {0}
    store = WebHdfsWalStore(described["webhdfs"], described["hbase_root"])
    holder = f"{located[0].server_host},{located[0].server_port},{located[0].server_start_code}"
    encoded = wait_for(lambda: next((
        e.key.encoded_region_name.decode() for f in store.list_wal_files() if f.server == holder
        for e in read_entries(store.open(f.path)) if e.key.table_name == table.encode()
        and any(c.row == b"a" for c in e.cells)), None), 60, "the put of row a in a WAL",
        every=0.3)
    before = region_server(described, encoded)
    assert before == holder
    moved = call_admin(described["cluster_json"], "move", {"region": encoded})
    assert moved["from"] == before and moved["to"] != before
    assert region_server(described, encoded) == moved["to"]
    call_admin(described["cluster_json"], "bulk-load", {"table": table, "cells": [
        {"row": "b", "family": "f", "qualifier": "bulk", "timestamp": 5, "value": "x\\x00y"}]})
    with Thrift2Client(described["thrift2"]) as t2:
        got = {(c.qualifier, c.value) for c in t2.get(table, b"b")}
    assert (b"bulk", b"x\x00y") in got
    markers = wait_for(lambda: [
        e for f in store.list_wal_files() if f.server == moved["to"]
        for e in read_entries(store.open(f.path)) if e.key.table_name == table.encode()
        and any(c.family == b"METAFAMILY" and c.qualifier == b"HBASE::BULK_LOAD"
                for c in e.cells)], 60, "a BULK_LOAD marker in the moved region's WAL",
        every=0.3)
    assert markers[0].key.encoded_region_name == encoded.encode()
    for enabled in (False, True):
        assert call_admin(described["cluster_json"], "replication",
                          {"enabled": enabled})["enabled"] is enabled
        with HBaseZooKeeper(described["zookeeper"], described["znode_parent"]) as zk:
            assert [(p.peer_id, p.enabled) for p in zk.replication_peers()] == [("1", enabled)]


def test_the_thrift2_gateway_stops_and_starts_on_its_port(described: dict[str, Any]) -> None:
    """The chaos soak's target outage: the gateway closed, then open again on its port with
    the data still there."""
    path, endpoint = described["cluster_json"], described["thrift2"]
    with Thrift2Client(endpoint) as t2:
        t2.create_table(TableDescriptor("outage", (FamilyDescriptor(b"d"),)))
        t2.put_cells("outage", [Cell(b"r", b"d", b"q", 5, CellType.PUT, b"v")])
    stopped = call_admin(path, "service", {"name": "thrift2", "running": False})
    assert stopped == {"service": "thrift2", "running": False, "changed": True}
    try:
        with pytest.raises(Thrift2UnreachableError):
            Thrift2Client(endpoint, retries=0).get("outage", b"r")
    finally:
        started = call_admin(path, "service", {"name": "thrift2", "running": True})
    assert started["changed"] is True
    assert call_admin(path, "service", {"name": "thrift2", "running": True})["changed"] is False
    with Thrift2Client(endpoint) as t2:
        assert [c.value for c in t2.get("outage", b"r")] == [b"v"]


def test_a_killed_server_does_not_halt_the_real_stack_later(described: dict[str, Any]) -> None:
    """HBase halts the JVM of a region server whose abort outlasts
    ``hbase.regionserver.abort.timeout`` (20 minutes by default); a realstack JVM holds the
    whole cluster, so 20 minutes after a ``kill`` every server died with it (found by a
    20-minute soak). The real stack raises that timeout beyond any run."""
    if described.get("hbase_version") is None:
        pytest.skip("the embedded cluster runs no abort timer")
    info = call_admin(described["cluster_json"], "info")
    assert info["abort_timeout_ms"] >= 7 * 24 * 3600 * 1000
