"""A migration's ``cluster.json`` files are read once per process, not at every use: a whole
snapshot and a whole replay over the embedded clusters read each file once; a cluster
restarted on new ports (a new file) is read again, once."""

from __future__ import annotations

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
    reads: Counter[str] = Counter()
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
        assert lifecycle.prepare(spec).passed
        assert lifecycle.snapshot(spec).passed
        run_workload(src, "orders", seed=4, ops=60)
        assert lifecycle.replay(spec).exit_code == 0
        assert reads == {"src": 1, "dst": 1}

        dst.write_cluster_json()  # rewritten, as a restart on new ports does
        assert lifecycle.replay(spec).exit_code == 0
        assert reads == {"src": 1, "dst": 2}
