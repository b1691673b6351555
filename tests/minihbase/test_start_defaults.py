"""``minicluster start`` without being told: a second cluster on the same ZooKeeper takes a
parent znode of its own, and a restart on a folder takes the ports and parent znode its
``cluster.json`` names (they once had to be given again by hand, all five)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from minihbase.zookeeper import ZooKeeperServer

pytestmark = pytest.mark.integration


def _held(zookeeper: str, parent: str) -> bool:
    client = KazooClient(hosts=zookeeper)
    client.start(timeout=10)
    try:
        stat = client.exists(f"{parent}/master")
        return stat is not None and bool(stat.ephemeralOwner)
    finally:
        client.stop()
        client.close()


def _ports(info: dict[str, Any]) -> list[str]:
    keys = ("thrift", "thrift2", "webhdfs", "admin", "master_rpc")
    return [re.sub(r".*:", "", str(info[k])) for k in keys] + \
        [re.sub(r".*:", "", a) for a in info["region_server_rpc"].values()]


def test_second_cluster_and_restart(tmp_path: Path, zookeeper: ZooKeeperServer,
                                    cli_cluster_factory: Any) -> None:
    zk = zookeeper.address
    expected_first = "/hbase-za" if _held(zk, "/hbase") else "/hbase"
    first = cli_cluster_factory(tmp_path / "a", "--name", "za", "--zookeeper", zk)
    second = cli_cluster_factory(tmp_path / "b", "--name", "zb", "--zookeeper", zk)
    assert first.info["znode_parent"] == expected_first
    assert second.info["znode_parent"] == "/hbase-zb"
    assert _held(zk, expected_first) and _held(zk, "/hbase-zb")  # both running, registered

    assert first.stop() == 0
    again = cli_cluster_factory(tmp_path / "a", "--name", "za", "--zookeeper", zk)
    assert again.info["znode_parent"] == expected_first
    assert _ports(again.info) == _ports(first.info)
    assert _held(zk, expected_first)
    given = cli_cluster_factory(tmp_path / "c", "--name", "zc", "--zookeeper", zk,
                                "--znode-parent", "/own-zc")
    assert given.info["znode_parent"] == "/own-zc"  # an explicit one is kept
