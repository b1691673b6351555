"""``hbase-migrate minicluster start`` with region servers, WAL and ZooKeeper options, and the
operations (info, bulk-load, flush, move, roll, kill, restart, service, webhdfs-latency,
finish-split, clean, replication) sent to the running cluster through its admin endpoint."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import requests
from click.testing import CliRunner

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import load_cluster_json
from hbase_migrate.cluster.zk.zookeeper import HBaseZooKeeper
from hbase_migrate.thrift.thrift1 import Thrift1Client
from hbase_migrate.thrift.thrift2 import Thrift2Client, Thrift2UnreachableError
from hbase_migrate.wal import markers as mk
from minihbase.cli.minicluster import minicluster

from .walutil import all_entries, markers_of

pytestmark = pytest.mark.integration


def op(cluster_json: Path, *args: str) -> Any:
    result = CliRunner().invoke(minicluster, [args[0], "--cluster", str(cluster_json),
                                              *args[1:]])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_cli_start_and_operations(tmp_path: Path, cli_cluster_factory, zookeeper) -> None:
    parent = f"/hbase-{uuid.uuid4().hex[:8]}"
    cluster = cli_cluster_factory(
        tmp_path, "--region-servers", "3", "--roll-period", "1h", "--roll-size", "4096",
        "--wal-compression", "dict+tags+gz", "--zookeeper", zookeeper.address,
        "--znode-parent", parent, "--replication-peer", "7", "--archive-ttl", "10m",
        "--split-delay", "1h")
    info = cluster.info
    assert {"webhdfs", "zookeeper", "znode_parent", "hbase_root", "hbase_root_dir", "admin",
            "region_servers"} <= set(info)
    assert len(info["region_servers"]) == 3 and info["znode_parent"] == parent
    cluster_json = tmp_path / "cluster.json"
    endpoints = load_cluster_json(cluster_json)
    assert (endpoints.hbase_root, endpoints.zookeeper) == ("/hbase", zookeeper.address)
    assert endpoints.webhdfs and endpoints.webhdfs.startswith("http://127.0.0.1:")
    with Thrift2Client(info["thrift2"]) as t2:
        t2.create_table(TableDescriptor("t", (FamilyDescriptor(b"d"),)), [b"bulk-5"])
        assert {f"{r.server_host},{r.server_port},{r.server_start_code}"
                for r in t2.regions("t")} <= set(info["region_servers"])
    # Thrift1 tells region ids (Thrift2 locations, as HBase's, carry none).
    with Thrift1Client(info["thrift"]) as t1:
        regions = t1.regions("t")

    loaded = op(cluster_json, "bulk-load", "--table", "t", "--generate", "12", "--seed", "3")
    assert sorted(x["region"] for x in loaded) == sorted(r.encoded_name for r in regions)
    with Thrift2Client(info["thrift2"]) as t2:
        assert sum(len(row) for row in t2.scan("t")) == sum(x["cells"] for x in loaded)
    lines = tmp_path / "cells.jsonl"
    lines.write_text(json.dumps({"row": "a\\x00b", "family": "d", "qualifier": "q",
                                 "timestamp": 9, "value": "v"}) + "\n")
    one, = op(cluster_json, "bulk-load", "--table", "t", "--cells", str(lines))
    assert one["region"] == regions[0].encoded_name and one["cells"] == 1

    assert sorted(op(cluster_json, "flush", "--table", "t")) == sorted(
        r.encoded_name for r in regions)
    moved = op(cluster_json, "move", regions[0].encoded_name, "--server", "2")
    assert moved["to"] == info["region_servers"][2]
    assert len(op(cluster_json, "roll")) == 3
    dead = op(cluster_json, "kill", "1")
    assert dead["server"] == info["region_servers"][1]
    with HBaseZooKeeper(zookeeper.address, parent) as zk:
        assert sorted(str(s) for s in zk.live_servers()) == sorted(
            info["region_servers"][i] for i in (0, 2))
    state = op(cluster_json, "info")
    assert state["splitting"] == [dead["splitting"]]
    assert [s["alive"] for s in state["servers"]] == [True, False, True]
    archived = op(cluster_json, "finish-split")
    assert archived and op(cluster_json, "info")["splitting"] == []
    assert op(cluster_json, "replication", "disable") == {"peer": "7", "enabled": False}
    assert op(cluster_json, "clean") == []

    root = Path(info["hbase_root_dir"])
    found = markers_of(all_entries(root))
    bulk = [m for _, _, m in found if isinstance(m, mk.BulkLoadDescriptor)]
    assert len(bulk) == len(loaded) + 1
    bad = CliRunner().invoke(minicluster, ["move", "--cluster", str(cluster_json), "nope"])
    assert bad.exit_code != 0 and "no open region" in str(bad.exception)
    # the command is reachable through the installed entry point too
    out = subprocess.run([sys.executable, "-m", "hbase_migrate", "minicluster", "info",
                          "--cluster", str(cluster_json)], capture_output=True, text=True,
                         timeout=60, check=True)
    assert json.loads(out.stdout)["servers"][1]["alive"] is False
    assert cluster.stop() == 0


def test_cli_restart_service_and_webhdfs_latency(tmp_path: Path, cli_cluster_factory,
                                                 zookeeper) -> None:
    """The chaos soak's faults: a killed server back under a new start code, a gateway
    closed and reopened on its port, a slow WebHDFS."""
    parent = f"/hbase-{uuid.uuid4().hex[:8]}"
    cluster = cli_cluster_factory(tmp_path, "--region-servers", "2", "--zookeeper",
                                  zookeeper.address, "--znode-parent", parent)
    info, cluster_json = cluster.info, tmp_path / "cluster.json"
    with Thrift2Client(info["thrift2"]) as t2:
        t2.create_table(TableDescriptor("t", (FamilyDescriptor(b"d"),)), [b"m"])
    op(cluster_json, "kill", "1")
    back = op(cluster_json, "restart", "1")
    old = info["region_servers"][1]
    assert back["was"] == old and back["server"] != old
    assert back["server"].rsplit(",", 1)[0] == old.rsplit(",", 1)[0]  # host and port kept
    assert int(back["server"].rsplit(",", 1)[1]) > int(old.rsplit(",", 1)[1])
    with HBaseZooKeeper(zookeeper.address, parent) as zk:
        assert sorted(str(s) for s in zk.live_servers()) == sorted([info["region_servers"][0],
                                                                    back["server"]])
    region = op(cluster_json, "info")["servers"][0]["regions"][0]
    assert op(cluster_json, "move", region, "--server", "1")["to"] == back["server"]
    bad = CliRunner().invoke(minicluster, ["restart", "--cluster", str(cluster_json), "0"])
    assert bad.exit_code != 0 and "is running" in str(bad.exception)

    assert op(cluster_json, "service", "thrift2", "stop")["changed"] is True
    with pytest.raises(Thrift2UnreachableError):
        Thrift2Client(info["thrift2"], retries=0).table_exists("t")
    bad = CliRunner().invoke(minicluster, ["service", "--cluster", str(cluster_json),
                                           "webhdfs", "stop"])
    assert bad.exit_code != 0 and "one service at a time" in str(bad.exception)
    assert op(cluster_json, "service", "thrift2", "start")["changed"] is True
    with Thrift2Client(info["thrift2"]) as t2:
        assert t2.table_exists("t")

    url = f"{info['webhdfs']}/webhdfs/v1/hbase/WALs?op=LISTSTATUS"

    def listing_seconds() -> float:
        began = time.monotonic()
        requests.get(url, timeout=30).raise_for_status()
        return time.monotonic() - began

    assert op(cluster_json, "webhdfs-latency", "0.5") == {"webhdfs_latency": 0.5}
    assert listing_seconds() >= 0.5
    op(cluster_json, "webhdfs-latency", "0")
    assert listing_seconds() < 0.5
    assert cluster.stop() == 0
