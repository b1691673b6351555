"""Helpers of the replay tests against embedded clusters: a migration config over the
clusters' ``cluster.json`` files, the watermark, a seeded workload, bounded waits, and the
state of the source and target tables read back through Thrift2."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hbase_migrate.cluster.thrift.thrift2 import Thrift2Client
from hbase_migrate.config import MigrationSpec, load_config
from hbase_migrate.replay.watermark import fix_watermark
from hbase_migrate.snapshot.schema import copy_schema
from hbase_migrate.validate.compare import Comparison, compare_tables
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from minihbase.workload import Workload, WorkloadReport, WorkloadSpec
from minihbase.zookeeper import ZooKeeperServer


@contextmanager
def clusters_over_rpc(folder: Path, zookeeper: ZooKeeperServer, wal: WalSettings | None = None
                      ) -> Iterator[tuple[MiniHBase, MiniHBase]]:
    """A source (its region servers as ``wal`` says) and a target embedded cluster in
    ``folder``, registered in ``zookeeper`` under znode parents of their own: a migration over
    their ``cluster.json`` reaches both over HBase's own RPC (the tests' workloads and
    judges keep to Thrift2, an independent path)."""
    parent = f"/hbase-{uuid.uuid4().hex[:10]}"
    with MiniHBase(folder / "src", "source", wal=wal, zookeeper=zookeeper.address,
                   znode_parent=f"{parent}-src") as src, \
            MiniHBase(folder / "dst", "target", zookeeper=zookeeper.address,
                      znode_parent=f"{parent}-dst") as dst:
        yield src, dst


def write_migration(folder: Path, source: MiniHBase, target: MiniHBase, table: str, *,
                    name: str = "mig", roll_period: str | None = None,
                    outage_tolerance: str | None = None, archive_ttl: str | None = None
                    ) -> Path:
    """A migration config as a user writes it: both clusters by their ``cluster.json``, the
    source's roll period and archive TTL as its region servers have them (and ``[replay]
    outage_tolerance`` when given)."""
    if roll_period is None:
        roll_period = f"{int(source.wal_settings.roll_period * 1000)}ms"
    if archive_ttl is None:
        archive_ttl = f"{int(source.wal_settings.archive_ttl * 1000)}ms"
    path = folder / "migration.toml"
    path.write_text(
        f'[migration]\nname = "{name}"\nledger = "sqlite:///{folder / "ledger.db"}"\n'
        f'[source]\ncluster_json = "{source.write_cluster_json()}"\n'
        f'[target]\ncluster_json = "{target.write_cluster_json()}"\n'
        f'[[tables]]\nsource = "{table}"\n'
        f'[replay]\nroll_period = "{roll_period}"\nmargin = "1m"\n'
        f'archive_ttl = "{archive_ttl}"\n'
        + (f'outage_tolerance = "{outage_tolerance}"\n' if outage_tolerance else ""),
        encoding="utf-8")
    return path


def edits_after_t0(folder: Path, source: MiniHBase, target: MiniHBase, table: str, *,
                   name: str = "mig", seed: int = 1) -> MigrationSpec:
    """A migration copied at T0 (workload ``seed``), then edits only replay brings over
    (workload ``seed + 1``) in WAL files the region servers rolled; its spec."""
    from hbase_migrate import lifecycle

    run_workload(source, table, seed=seed, ops=150)
    spec = load_config(write_migration(folder, source, target, table, name=name))
    lifecycle.prepare(spec)
    lifecycle.snapshot(spec)
    run_workload(source, table, seed=seed + 1, ops=200)
    assert source.region_servers is not None
    source.region_servers.roll()
    return spec


def set_watermark(config: Path, watermark: int | None = None) -> MigrationSpec:
    """Record the migration, its watermark (default: now) and the WAL anchors, as the
    snapshot step does."""
    spec = load_config(config)
    fix_watermark(spec, watermark)
    return spec


def run_workload(cluster: MiniHBase, table: str, seed: int, ops: int,
                 rate: float | None = None) -> WorkloadReport:
    runner = Workload(cluster.endpoints, WorkloadSpec(table, seed, ops, rate=rate))
    try:
        runner.ensure_table()
        return runner.run()
    finally:
        runner.close()


def t2(cluster: MiniHBase) -> Thrift2Client:
    thrift2 = cluster.endpoints.thrift2
    assert thrift2 is not None
    return Thrift2Client(thrift2)


def copy_table_schema(source: MiniHBase, target: MiniHBase, table: str) -> None:
    with t2(source) as src, t2(target) as dst:
        copy_schema(src, dst, table)


def compare(source: MiniHBase, target: MiniHBase, table: str) -> Comparison:
    """Every version of every cell of ``table``, source against target."""
    with t2(source) as src, t2(target) as dst:
        return compare_tables(src, dst, table)


def cell_count(cluster: MiniHBase, table: str) -> int:
    with t2(cluster) as client:
        return sum(len(row) for row in client.scan(table))


def wait_for(check: Callable[[], Any], timeout: float, what: str, every: float = 0.02) -> Any:
    """Poll ``check`` until it returns something truthy; fail naming ``what`` after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(every)
