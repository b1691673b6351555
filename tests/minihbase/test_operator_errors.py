"""What an operator of the embedded stack sees when something is wrong: one line and exit code
2 through the real command line (``workload`` and ``minicluster`` operations against a live,
a dead or a missing cluster), and a second cluster refused on a znode parent a running
cluster holds, over a real ZooKeeper, while a parent a gone cluster left is reused."""

from __future__ import annotations

import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from hbase_migrate.cluster.zk.zkpayload import decode_cluster_id, strip_metadata
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.names import ServerName
from minihbase.server import MiniHBase
from minihbase.zkregistry import ZkRegistrar
from minihbase.zookeeper import ZooKeeperServer
from stackprocs.process import EmbeddedStackError
from tests.cli_util import fails
from tests.support.minicluster import EmbeddedClusters
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration



@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MiniHBase]:
    """One running cluster the module's tests only read."""
    with EmbeddedClusters(tmp_path_factory.mktemp("ops")) as clusters:
        running = clusters("ops")
        running.write_cluster_json()
        yield running


@pytest.mark.parametrize("table", ["hbase:meta", "hbase:namespace", "hbase:acl"])
def test_the_workload_refuses_system_tables(cluster: MiniHBase, table: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    cluster_json = str(cluster.data_dir / "cluster.json")
    line = fails(["workload", "--cluster", cluster_json, "--table", table, "--ops", "5"],
                 capsys)
    assert line == (f"workload table {table!r}: a system table; the workload writes user "
                    "tables only")
    with Thrift2Client(cluster.endpoints.thrift2) as client:  # nothing was created
        assert not client.table_exists(table)


def test_minicluster_operations_on_unknown_things_are_one_line(
        cluster: MiniHBase, capsys: pytest.CaptureFixture[str]) -> None:
    cluster_json = cluster.data_dir / "cluster.json"
    servers = ", ".join(cluster.describe()["region_servers"])
    assert fails(["minicluster", "kill", "no-such-server", "--cluster", str(cluster_json)],
                 capsys) == (f"minicluster kill ({cluster_json}): no region server "
                             f"'no-such-server'; servers: {servers}")
    assert fails(["minicluster", "move", "no-such-region", "--cluster", str(cluster_json)],
                 capsys) == (f"minicluster move ({cluster_json}): no open region matches "
                             "table=None region='no-such-region'")
    missing = cluster.data_dir / "no-such.json"
    assert fails(["minicluster", "info", "--cluster", str(missing)], capsys) == (
        f"minicluster info: cannot read {missing}: No such file or directory")
    assert fails(["minicluster", "kill", "0", "--cluster", str(cluster.data_dir)], capsys) == (
        f"minicluster kill: cannot read {cluster.data_dir}: Is a directory")
    not_json = cluster.data_dir / "store.sqlite"
    assert fails(["minicluster", "info", "--cluster", str(not_json)], capsys).startswith(
        f"minicluster info: {not_json} is not a cluster.json (not JSON: ")


def test_operations_and_workload_on_a_dead_cluster_are_one_line(
        make_embedded: EmbeddedClusters, capsys: pytest.CaptureFixture[str]) -> None:
    doomed = make_embedded("gone")
    cluster_json = doomed.write_cluster_json()
    admin, thrift = doomed.describe()["admin"], doomed.endpoints.thrift
    doomed.stop()
    for op in ("info", "roll", "clean"):
        assert fails(["minicluster", op, "--cluster", str(cluster_json)], capsys) == (
            f"minicluster {op}: the cluster of {cluster_json} does not answer at {admin} "
            "([Errno 111] Connection refused): is the cluster running?")
    line = fails(["workload", "--cluster", str(cluster_json), "--table", "t", "--ops", "1"],
                 capsys)
    assert line.startswith(f"cluster 'gone': its thrift gateway {thrift} does not answer (")
    assert line.endswith("): is the cluster running?")


# --- one cluster per znode parent ---------------------------------------------------------


def _children(zk: KazooClient, path: str) -> list[str]:
    return sorted(zk.get_children(path)) if zk.exists(path) else []


def _hbase_id(zk: KazooClient, parent: str) -> str:
    data, _ = zk.get(f"{parent}/hbaseid")
    return decode_cluster_id(strip_metadata(data)).cluster_id


def test_a_second_cluster_on_a_live_znode_parent_is_refused_and_changes_nothing(
        tmp_path: Path, zookeeper: ZooKeeperServer, make_embedded: EmbeddedClusters) -> None:
    parent = f"/hbase-{uuid.uuid4().hex[:8]}"
    zk = KazooClient(hosts=zookeeper.address)
    zk.start(timeout=10)
    try:
        first = make_embedded("a", zookeeper=zookeeper.address, znode_parent=parent)
        servers = sorted(first.describe()["region_servers"])
        master = zk.get(f"{parent}/master")
        first_id = (tmp_path / "a" / "hbase" / "hbase.id").read_bytes()
        assert _children(zk, f"{parent}/rs") == servers
        second = subprocess.run(
            [sys.executable, "-m", "hbase_migrate", "minicluster", "start", "--dir",
             str(tmp_path / "b"), "--name", "b", "--zookeeper", zookeeper.address,
             "--znode-parent", parent], capture_output=True, text=True, timeout=120,
            check=False)
        assert second.returncode == 2, second.stderr
        owner = master[1].ephemeralOwner
        assert second.stdout == ""
        assert second.stderr.splitlines() == [
            f"hbase-migrate: error: znode parent {parent} on ZooKeeper "
            f"{zookeeper.address} already has an active master (ephemeral znode of "
            f"session 0x{owner:x}): another cluster runs there; stop it (a killed one's "
            "znode goes when its session expires) or give this cluster its own "
            "--znode-parent"]
        # the running cluster's registration is untouched: its servers, master, id
        assert _children(zk, f"{parent}/rs") == servers
        assert zk.get(f"{parent}/master") == master
        assert _hbase_id(zk, parent) == decode_cluster_id(first_id).cluster_id
        assert not (tmp_path / "b" / "cluster.json").exists()
        first.stop()
        # the first stopped: its persistent znodes remain, its master znode went with its
        # session; the parent is free for another cluster, which registers as its own
        assert zk.exists(f"{parent}/hbaseid") and not zk.exists(f"{parent}/master")
        later = make_embedded("b", zookeeper=zookeeper.address, znode_parent=parent)
        assert later.master is not None
        _, stat = zk.get(f"{parent}/master")
        assert stat.ephemeralOwner == later.master.client.client_id[0]
        assert _children(zk, f"{parent}/rs") == sorted(later.describe()["region_servers"])
        assert _hbase_id(zk, parent) == decode_cluster_id(
            (tmp_path / "b" / "hbase" / "hbase.id").read_bytes()).cluster_id
    finally:
        zk.stop()
        zk.close()


def test_of_two_masters_starting_at_once_exactly_one_wins(zookeeper: ZooKeeperServer) -> None:
    parent = f"/hbase-{uuid.uuid4().hex[:8]}"
    registrars = [ZkRegistrar(zookeeper.address, parent) for _ in range(8)]
    barrier = threading.Barrier(len(registrars))
    outcomes: dict[int, str] = {}

    def become_master(index: int) -> None:
        barrier.wait()
        try:
            registrars[index].set_master(ServerName("localhost", 16000 + index, 1))
            outcomes[index] = "master"
        except EmbeddedStackError:
            outcomes[index] = "refused"

    threads = [threading.Thread(target=become_master, args=(i,)) for i in range(8)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        winners = [i for i, outcome in outcomes.items() if outcome == "master"]
        assert len(outcomes) == 8 and len(winners) == 1, outcomes
        _, stat = registrars[0].client.get(f"{parent}/master")
        assert stat.ephemeralOwner == registrars[winners[0]].client.client_id[0]
        registrars[winners[0]].set_master(ServerName("localhost", 16100, 2))  # its own: kept
    finally:
        for registrar in registrars:
            registrar.close()


def test_a_zookeeper_that_does_not_answer_is_named(closed_port: int) -> None:
    quorum = f"127.0.0.1:{closed_port}"
    with pytest.raises(EmbeddedStackError) as info:
        ZkRegistrar(quorum, "/hbase", timeout=1)
    assert str(info.value) == f"ZooKeeper {quorum} does not answer within 1 s: is it running?"


def test_a_parent_left_by_a_killed_cluster_is_reused_once_its_session_expired(
        tmp_path: Path, zookeeper: ZooKeeperServer, cli_cluster_factory: Any,
        make_embedded: EmbeddedClusters) -> None:
    parent = f"/hbase-{uuid.uuid4().hex[:8]}"
    # its sessions as short as the quorum allows (two ticks): their znodes go 4-6 s after
    # the kill instead of 30-32 s
    killed = cli_cluster_factory(tmp_path / "a", "--zookeeper", zookeeper.address,
                                 "--znode-parent", parent, "--zookeeper-session-timeout", "4s")
    zk = KazooClient(hosts=zookeeper.address)
    zk.start(timeout=10)
    try:
        assert zk.exists(f"{parent}/master") is not None
        killed.proc.kill()  # SIGKILL: no clean shutdown, its znodes stay until expiry
        killed.proc.wait(20)
        wait_for(lambda: zk.exists(f"{parent}/master") is None, 30,
                 "the killed master's session to expire", every=0.2)
        assert zk.exists(f"{parent}/hbaseid") is not None  # the stale parent is still there
        later = make_embedded("b", zookeeper=zookeeper.address, znode_parent=parent)
        assert later.master is not None
        _, stat = zk.get(f"{parent}/master")
        assert stat.ephemeralOwner == later.master.client.client_id[0]
        assert _children(zk, f"{parent}/rs") == sorted(later.describe()["region_servers"])
    finally:
        zk.stop()
        zk.close()
