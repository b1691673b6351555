"""A migration's ``cluster.json`` files are read once per process, not at every use: a whole
snapshot and a whole replay over the embedded clusters read each file once; a cluster
restarted on new ports (a new file) is read again, once; a file rewritten in place at once,
its size and (coarse) times unchanged, is still read again."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path

import pytest

from hbase_migrate import lifecycle
from hbase_migrate.cluster import endpoints as E
from hbase_migrate.config import load_config
from minihbase.regionserver import WalSettings
from minihbase.zookeeper import ZooKeeperServer
from tests.support.minicluster import cluster_pair, run_workload, write_migration

pytestmark = pytest.mark.integration


def test_each_cluster_json_is_read_once_per_process_and_again_when_it_changes(
        tmp_path: Path, zookeeper: ZooKeeperServer, transport: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    reads: Counter[str] = Counter()  # by the cluster's folder name
    read = E._read_cluster_json

    def counted(path: str | Path, where: Path) -> E.ClusterEndpoints:
        reads[where.parent.name] += 1
        return read(path, where)

    monkeypatch.setattr(E, "_read_cluster_json", counted)
    monkeypatch.setattr(E, "_READ", {})  # this process has read none yet
    with cluster_pair(tmp_path, transport, zookeeper,
                      wal=WalSettings(region_servers=2)) as (src, dst):
        run_workload(src, "orders", seed=3, ops=60)
        spec = load_config(write_migration(tmp_path, src, dst, "orders"))
        for cluster in (src, dst):  # the clusters started a minute ago
            aged(cluster.write_cluster_json())
        assert lifecycle.prepare(spec).passed
        assert lifecycle.snapshot(spec).passed
        run_workload(src, "orders", seed=4, ops=60)
        assert lifecycle.replay(spec).exit_code == 0
        assert reads == {"src": 1, "dst": 1}

        aged(dst.write_cluster_json())  # rewritten, as a restart on new ports does
        assert lifecycle.replay(spec).exit_code == 0
        assert reads == {"src": 1, "dst": 2}


def aged(path: Path) -> None:
    """``path`` as written a minute ago."""
    then = time.time() - 60
    os.utime(path, (then, then))


def test_a_file_rewritten_in_place_within_a_clock_tick_is_read_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"name": "src", "thrift": "127.0.0.1:19090"}))
    assert E.load_cluster_json(path).thrift == "127.0.0.1:19090"
    first = os.stat(path)
    path.write_text(json.dumps({"name": "src", "thrift": "127.0.0.1:19091"}))  # same size
    # within the same tick of a coarse clock: inode, size and both times as they were
    monkeypatch.setattr(Path, "stat", lambda self, **kw: first)
    assert E.load_cluster_json(path).thrift == "127.0.0.1:19091"
