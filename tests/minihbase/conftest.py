"""Fixtures of the embedded cluster: in-process on free loopback ports, and as a subprocess
started through the ``hbase-migrate minicluster start`` command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import happybase
import pytest

from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.rpc.client import NativeClient
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell
from minihbase.model import Durability
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from tests.support.minicluster import EmbeddedClusters

COMBOS = [("buffered", "binary"), ("buffered", "compact"), ("framed", "binary"),
          ("framed", "compact")]


@dataclass
class Recorder:
    """A write hook that keeps every apply() call: what a WAL would receive."""

    calls: list[tuple[str, RegionDescriptor, list[Cell], Durability]] = field(
        default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, table: str, region: RegionDescriptor, cells: Sequence[Cell],
                 durability: Durability) -> None:
        with self.lock:
            self.calls.append((table, region, list(cells), durability))

    def for_table(self, table: str) -> list[tuple[RegionDescriptor, list[Cell], Durability]]:
        with self.lock:
            return [(r, c, d) for t, r, c, d in self.calls if t == table]


@pytest.fixture(scope="session")
def mini_recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def recorder(mini_recorder: Recorder) -> Recorder:
    return mini_recorder


@pytest.fixture(scope="session")
def mini(tmp_path_factory: pytest.TempPathFactory,
         mini_recorder: Recorder) -> Iterator[MiniHBase]:
    """One in-process cluster (buffered/binary) for the session, with a recording hook."""
    with EmbeddedClusters(tmp_path_factory.mktemp("mini")) as clusters:
        yield clusters(write_hook=mini_recorder)


@pytest.fixture(scope="session", params=COMBOS, ids=["-".join(c) for c in COMBOS])
def any_gateway(request: pytest.FixtureRequest,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[MiniHBase]:
    """A cluster per transport/protocol combination."""
    transport, protocol = request.param
    with EmbeddedClusters(tmp_path_factory.mktemp("combo")) as clusters:
        yield clusters(transport=transport, protocol=protocol)


def happybase_connection(cluster: MiniHBase) -> happybase.Connection:
    host, port = cluster.endpoints.thrift.split(":")
    return happybase.Connection(host, int(port), transport=cluster.transport,
                                protocol=cluster.protocol)


@pytest.fixture
def hb(mini: MiniHBase) -> Iterator[happybase.Connection]:
    conn = happybase_connection(mini)
    yield conn
    conn.close()


@pytest.fixture
def t2(mini: MiniHBase) -> Iterator[Thrift2Client]:
    with Thrift2Client(mini.endpoints.thrift2) as client:
        yield client


@pytest.fixture
def table_name() -> str:
    return f"t_{uuid.uuid4().hex[:10]}"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass
class CliCluster:
    proc: subprocess.Popen[str]
    info: dict[str, Any]

    def stop(self, sig: int = signal.SIGTERM) -> int:
        self.proc.send_signal(sig)
        return self.proc.wait(20)


def start_cli(data_dir: Path, *extra: str) -> CliCluster:
    """Run ``hbase-migrate minicluster start`` and wait for its JSON ready line."""
    cmd = [sys.executable, "-m", "hbase_migrate", "minicluster", "start", "--dir",
           str(data_dir), *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        proc.wait(20)
        raise AssertionError(f"minicluster did not start: {proc.stderr.read()}")  # type: ignore[union-attr]
    return CliCluster(proc, json.loads(line))


@pytest.fixture
def cli_cluster_factory() -> Iterator[Any]:
    started: list[CliCluster] = []

    def factory(data_dir: Path, *extra: str) -> CliCluster:
        cluster = start_cli(data_dir, *extra)
        started.append(cluster)
        return cluster
    yield factory
    for cluster in started:
        if cluster.proc.poll() is None:
            cluster.proc.kill()
            cluster.proc.wait(20)


@pytest.fixture(scope="module")
def rpc_mini(tmp_path_factory: pytest.TempPathFactory, zookeeper: Any) -> Iterator[MiniHBase]:
    """A cluster of two region servers registered in the session's ZooKeeper under a parent
    of its own, for the clients of HBase's RPC (found, as on HBase, through ZooKeeper)."""
    with EmbeddedClusters(tmp_path_factory.mktemp("rpc"), lambda: zookeeper) as clusters:
        yield clusters(over="native", wal=WalSettings(region_servers=2, roll_period=3600,
                                                      split_delay=3600))


@pytest.fixture(scope="module")
def native(rpc_mini: MiniHBase) -> Iterator[NativeClient]:
    """The product's native client of :func:`rpc_mini` (a module may have its own)."""
    with NativeClient(rpc_mini.zookeeper or "", rpc_mini.znode_parent,
                      max_backoff=0.2) as client:
        yield client
