"""The migration lock on the source's ZooKeeper: a second run of the same migration waits,
then gives up with a message naming the holder; once released, runs proceed."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.cluster.errors import MigrationLockedError
from hbase_migrate.config import load_config
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.lock import lock_identifier, migration_lock
from hbase_migrate.replay.run import run_replay
from minihbase.zookeeper import ZooKeeperServer
from tests.support.replay import RS1, Clusters, HBaseRoot, T, puts, source_endpoints, write_config

pytestmark = pytest.mark.integration


def test_a_second_run_of_the_migration_waits_then_names_the_holder(
        clusters: Clusters, table: str, tmp_path: Path, zookeeper: ZooKeeperServer) -> None:
    clusters.create(table)
    root = HBaseRoot(tmp_path / "hbase")
    root.write(RS1, T, table, puts("x", 0, 2))
    source = source_endpoints("localhost:9090", root=root.root, zookeeper=zookeeper.address)
    config = write_config(tmp_path, source=source, target=clusters.dst_endpoints,
                          tables=[table], name=f"lock-{table}")
    job = ReplayJob.from_spec(load_config(config), start=T, lock_timeout=0.5)
    with migration_lock(job) as lock:
        held = lock.identifier
        assert held.startswith(lock_identifier(job).split(":")[0] + ":")  # this host
        with pytest.raises(MigrationLockedError) as caught:
            run_replay(job)
    assert caught.value.holder == held
    assert held in str(caught.value) and job.name in str(caught.value)
    assert run_replay(job).exit_code == 0  # released: the next run proceeds
