"""HBase's own Java client (``hbase-client`` 2.6.1, ``tests/minihbase/javaclient``) against
the embedded cluster, found through ZooKeeper as on HBase: it creates a table with split
keys, puts one by one and in a batch, deletes a version, a column, a family and a row, scans
(all versions, raw, a time range, through a stop row), gets one by one, in a batch and for
existence, rides a region move in the middle of a scan and writes to the moved region, then
disables and deletes the table; and a typical application's other calls: counters,
increments, appends, a table flush, the table list, a checkAndPut. What it reads is judged by the
embedded cluster's Thrift2 gateway and its store."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from hbase_migrate.jvm.maven import java_command, module_classpath
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType
from minihbase.server import MiniHBase
from tests.realstack.fixtures import skip_without_real_stack
from tests.realstack.java_cells import cells_of
from tests.rpc.cells import flat

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.realstack]

MODULE = Path(__file__).with_name("javaclient")
TABLE = "java_made"
ROWS = [b"a", b"h", b"m", b"q", b"z"]


def run_java(mini: MiniHBase, phase: str, *extra: str, table: str = TABLE) -> list[str]:
    skip_without_real_stack()  # Java 17 and Maven
    classpath = module_classpath(MODULE, {"hbase.version": "2.6.1"})
    command = java_command(classpath, "hbasemigrate.check.EmbeddedClient",
                           [mini.zookeeper or "", mini.znode_parent, table, phase, *extra],
                           heap="256m")
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"HBase's Java client, {phase}: {done.stderr[-3000:]}"
    return done.stdout.splitlines()


def test_hbase_java_client(rpc_mini: MiniHBase) -> None:
    lines = run_java(rpc_mini, "write")
    assert "STATE exists true" in lines and "STATE regions 3" in lines
    cluster = rpc_mini.cluster
    assert cluster is not None
    assert [(r.start_key, r.end_key) for r in cluster.regions(TABLE)] == \
        [(b"", b"g"), (b"g", b"p"), (b"p", b"")]
    stored = [c for _, cells in cluster.store.raw_rows(TABLE, b"", True, b"") for c in cells]
    assert cells_of(lines, "raw") == stored
    markers = {(c.row, c.qualifier, c.type) for c in stored if c.type != CellType.PUT}
    assert markers == {(b"h", b"q", CellType.DELETE), (b"m", b"r", CellType.DELETE_COLUMN),
                       (b"q", b"", CellType.DELETE_FAMILY), (b"z", b"", CellType.DELETE_FAMILY)}
    with Thrift2Client(rpc_mini.endpoints.thrift2 or "") as t2:
        visible = flat(t2.scan(TABLE))
        assert cells_of(lines, "scan") == visible
        assert cells_of(lines, "through") == flat(t2.scan(TABLE, stop=b"m\x00", max_versions=1))
        assert "EXISTS true false" in lines
        assert cells_of(lines, "range") == flat(t2.scan(TABLE, time_range=(101, 103)))
        assert cells_of(lines, "get") == [c for row in ROWS for c in t2.get(TABLE, row)] == \
            cells_of(lines, "batch")  # a batch of gets is one Multi per server
        assert t2.get(TABLE, b"a", columns=[(b"f", b"q")])[-1] == \
            Cell(b"a", b"f", b"q", 100, CellType.PUT, b"one")
    first = cluster.regions(TABLE)[0]
    lines = run_java(rpc_mini, "move", rpc_mini.describe()["admin"])
    moved = next(json.loads(line[6:])["result"] for line in lines if line.startswith("MOVED "))
    assert moved["region"] == first.encoded_name and moved["to"] != moved["from"]
    assert cluster.regions(TABLE)[0].server_port != first.server_port  # it did move
    assert [bytes.fromhex(line[4:]) for line in lines if line.startswith("ROW ")] == \
        sorted({c.row for c in visible})  # each row once, z deleted whole
    assert "AFTER after" in lines
    lines = run_java(rpc_mini, "drop")
    assert lines == ["STATE disabled true", "STATE exists false"]
    assert not cluster.store.has_table(TABLE)


def test_hbase_java_client_everyday_calls(rpc_mini: MiniHBase) -> None:
    """Counters, increments and appends return what HBase's semantics give (8-byte longs,
    the new cells, by qualifier); ``Admin.flush(table)`` (the 2.6 client's FlushTable)
    writes a flush marker per region; ``listTableNames`` lists the table; a checkAndPut
    whose condition holds is done."""
    cluster, servers = rpc_mini.cluster, rpc_mini.region_servers
    assert cluster is not None and servers is not None
    entries = servers.counters["entries"]
    lines = run_java(rpc_mini, "everyday", table="java_everyday")
    assert [line for line in lines if line.startswith("COUNTER ")] == \
        ["COUNTER 5", "COUNTER -2"]
    increment = cells_of(lines, "increment")
    assert [(c.row, c.qualifier, c.value) for c in increment] == [
        (b"x", b"a", (1).to_bytes(8, "big")), (b"x", b"b", (2).to_bytes(8, "big"))]
    assert [c.value for c in cells_of(lines, "append")] == [b"ab", b"abcd"]
    assert "FLUSHED" in lines and servers.counters["entries"] >= entries + 2
    assert "TABLE java_everyday" in lines
    assert "CHECKED" in lines
    assert not cluster.store.has_table("java_everyday")
