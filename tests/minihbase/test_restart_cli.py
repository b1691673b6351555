"""The ``minicluster start`` command: ready line, cluster.json, clean stop, and durability
of every acknowledged write across SIGTERM and SIGKILL restarts."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from pathlib import Path

import happybase
import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import load_cluster_json
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType

pytestmark = pytest.mark.integration


def write_some(info: dict, table: str, first: int, count: int) -> list[Cell]:
    """Write through both gateways; returns the cells acknowledged."""
    cells = [Cell(b"row%04d" % i, b"f", b"q", 1000 + i, CellType.PUT, b"v%d" % i)
             for i in range(first, first + count)]
    with Thrift2Client(info["thrift2"]) as t2:
        if not t2.table_exists(table):
            if ":" in table:
                t2.create_namespace(table.partition(":")[0])
            t2.create_table(TableDescriptor(table, (FamilyDescriptor(b"f", max_versions=3),)),
                            [b"row0050"])
        t2.put_cells(table, cells[: count // 2])
    host, port = info["thrift"].split(":")
    conn = happybase.Connection(host, int(port))
    with conn.table(table).batch() as batch:
        for c in cells[count // 2:]:
            batch.put(c.row, {b"f:q": c.value}, )
    conn.close()
    return cells


def read_all(info: dict, table: str) -> list[tuple[bytes, bytes]]:
    with Thrift2Client(info["thrift2"]) as t2:
        return [(c.row, c.value) for row in t2.scan(table) for c in row]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_restart_finds_every_acknowledged_write(tmp_path: Path, cli_cluster_factory, sig):
    """Writes acknowledged before a stop (clean or kill -9) are all there after a restart
    on the same directory, with the table's regions and descriptor."""
    first = cli_cluster_factory(tmp_path, "--name", "src")
    assert set(first.info) >= {"name", "thrift", "thrift2", "transport", "protocol", "pid",
                               "dir"}
    assert json.loads((tmp_path / "cluster.json").read_text()) == first.info
    written = write_some(first.info, "ns1:durable", 0, 100)
    code = first.stop(sig)
    assert code == (0 if sig == signal.SIGTERM else -signal.SIGKILL)
    second = cli_cluster_factory(tmp_path, "--name", "src")
    assert sorted(read_all(second.info, "ns1:durable")) == sorted(
        (c.row, c.value) for c in written)
    with Thrift2Client(second.info["thrift2"]) as t2:
        assert [r.start_key for r in t2.regions("ns1:durable")] == [b"", b"row0050"]
        assert t2.table_descriptor("ns1:durable").families[0].max_versions == 3
    assert second.stop() == 0


def test_options_and_cluster_json(tmp_path: Path, cli_cluster_factory, zookeeper):
    """Chosen transport/protocol/ports are used and reported; --zookeeper is recorded."""
    ports = []
    for _ in range(5):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    cluster = cli_cluster_factory(
        tmp_path, "--thrift-port", str(ports[0]), "--thrift2-port", str(ports[1]),
        "--transport", "framed", "--protocol", "compact", "--zookeeper", zookeeper.address,
        "--master-rpc-port", str(ports[2]), "--rpc-ports", f"{ports[3]},{ports[4]}")
    assert cluster.info["thrift"] == f"127.0.0.1:{ports[0]}"
    assert cluster.info["master_rpc"] == f"127.0.0.1:{ports[2]}"
    assert [int(n.split(",")[1]) for n in cluster.info["region_servers"]] == ports[3:]
    endpoints = load_cluster_json(tmp_path / "cluster.json")
    assert (endpoints.transport, endpoints.protocol, endpoints.zookeeper) == (
        "framed", "compact", zookeeper.address)
    conn = happybase.Connection("127.0.0.1", ports[0], transport="framed", protocol="compact")
    assert conn.tables() == []
    conn.close()


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hbase_migrate", "minicluster", "start",
                           *args], capture_output=True, text=True, timeout=60, check=False)


def test_port_in_use_is_a_clear_error(tmp_path: Path):
    """A taken port fails the start with exit code 2 and a message naming the port."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli("--dir", str(tmp_path), "--thrift-port", str(port))
    assert result.returncode == 2
    assert f"port {port}" in result.stderr and "already in use" in result.stderr


def test_unusable_dir_is_a_clear_error(tmp_path: Path):
    """A data directory that cannot be created fails the start with exit code 2, naming
    the folder (a path below a regular file fails even for root)."""
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    result = run_cli("--dir", str(blocker / "data"))
    assert result.returncode == 2
    assert "not usable" in result.stderr and str(blocker) in result.stderr
