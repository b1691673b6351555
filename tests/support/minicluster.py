"""Embedded clusters as the copy, replay and validate tests use them: a source and a
target over either transport, a migration config over their ``cluster.json`` files, the
watermark, a seeded workload, and the tables' contents read back without the product
(:mod:`tests.support.oracle`)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hbase_migrate.config import MigrationSpec, load_config
from hbase_migrate.replay.watermark import fix_watermark
from hbase_migrate.snapshot.schema import copy_schema
from hbase_migrate.thrift.thrift2 import Thrift2Client
from minihbase import workload
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from minihbase.workload import WorkloadReport, WorkloadSpec
from minihbase.zookeeper import ZooKeeperServer
from tests.support.oracle import Contents, compare_stored, stored_cells

TRANSPORTS = ("thrift2", "native")  # how the product reaches an embedded cluster


class EmbeddedClusters:
    """Embedded clusters built with the options a test needs (``MiniHBase``'s: ``wal``,
    ``write_hook``, ``replication_peer``, ports...), each started in a folder of its own
    and all stopped when the set closes. ``over`` says how the product reaches a cluster
    (:data:`TRANSPORTS`): ``"native"`` registers it in ``zookeeper`` (a callable, asked on
    first need) under a znode parent of its own, ``"thrift2"`` leaves it unregistered (its
    ``cluster.json`` then names its Thrift gateways) unless a ``zookeeper`` option says
    otherwise. A restart is the same object's
    ``stop()`` and ``start()`` (new ports unless the options fixed them)."""

    def __init__(self, folder: Path,
                 zookeeper: Callable[[], ZooKeeperServer] | None = None) -> None:
        self.folder, self._zookeeper = folder, zookeeper
        self._clusters: list[MiniHBase] = []

    def __call__(self, name: str = "minihbase", *, over: str = "thrift2",
                 folder: Path | None = None, **options: Any) -> MiniHBase:
        """A started cluster ``name`` in ``folder`` (default: the set's folder / ``name``)."""
        if over not in TRANSPORTS:
            raise ValueError(f"transport {over!r}: expected one of {TRANSPORTS}")
        if over == "native":
            assert self._zookeeper is not None, "the native transport needs a ZooKeeper"
            options.setdefault("zookeeper", self._zookeeper().address)
            options.setdefault("znode_parent", f"/hbase-{uuid.uuid4().hex[:10]}")
        # the suite's one construction of an embedded cluster: every test's comes here
        cluster = MiniHBase(folder or self.folder / name, name, **options)
        self._clusters.append(cluster)
        return cluster.start()

    def pair(self, over: str = "thrift2", wal: WalSettings | None = None
             ) -> tuple[MiniHBase, MiniHBase]:
        """A source (its region servers as ``wal`` says) in ``src`` and a target in ``dst``
        of the set's folder, both reached over ``over``."""
        return (self("source", over=over, folder=self.folder / "src", wal=wal),
                self("target", over=over, folder=self.folder / "dst"))

    def close(self) -> None:
        for cluster in reversed(self._clusters):
            cluster.stop()
        self._clusters.clear()

    def __enter__(self) -> EmbeddedClusters:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def cluster_pair(folder: Path, transport: str, zookeeper: ZooKeeperServer | None = None,
                 wal: WalSettings | None = None) -> Iterator[tuple[MiniHBase, MiniHBase]]:
    """A source (its region servers as ``wal`` says) and a target embedded cluster in
    ``folder`` that a migration over their ``cluster.json`` reaches over ``transport``:
    ``"native"`` registers both in ``zookeeper`` (znode parents of their own), so the
    product speaks HBase's own RPC; ``"thrift2"`` leaves them unregistered, so it goes
    through their Thrift2 gateways. Workloads and judges keep to their own paths."""
    if transport == "native":
        assert zookeeper is not None, "the native transport finds clusters through ZooKeeper"
    with EmbeddedClusters(folder, (lambda: zookeeper) if zookeeper else None) as clusters:
        yield clusters.pair(transport, wal)


def clusters_over_rpc(folder: Path, zookeeper: ZooKeeperServer, wal: WalSettings | None = None
                      ) -> contextlib.AbstractContextManager[tuple[MiniHBase, MiniHBase]]:
    """:func:`cluster_pair` over HBase's own RPC."""
    return cluster_pair(folder, "native", zookeeper, wal)


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
                 rate: float | None = None, same_second: bool = False) -> WorkloadReport:
    """minihbase's workload on an embedded cluster, by its table and settings."""
    return workload.run_workload(cluster.endpoints, WorkloadSpec(
        table, seed, ops, rate=rate, same_second=same_second))


def t2(cluster: MiniHBase) -> Thrift2Client:
    thrift2 = cluster.endpoints.thrift2
    assert thrift2 is not None
    return Thrift2Client(thrift2)


def copy_table_schema(source: MiniHBase, target: MiniHBase, table: str) -> None:
    with t2(source) as src, t2(target) as dst:
        copy_schema(src, dst, table)


def compare(source: MiniHBase, target: MiniHBase, table: str) -> Contents:
    """Every visible version of every cell of ``table``, source against target, read from
    the clusters' stores (not through the product)."""
    return compare_stored(source, target, table)


def cell_count(cluster: MiniHBase, table: str) -> int:
    """The visible versions of ``table``, counted in the cluster's store."""
    return len(stored_cells(cluster, table))
