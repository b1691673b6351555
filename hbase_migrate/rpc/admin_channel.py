"""A cluster's admin channel (``cluster.admin.AdminChannel``: snapshots, clone, restore,
drop; flush and major compaction) over HBase's own RPC: ``NativeAdmin``, no ``hbase
shell``, no JVM. Callers do not close channels, so each operation opens its own
connections (a ZooKeeper read and a master connection: milliseconds beside a snapshot)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hbase_migrate.cluster.admin import AdminChannel
from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.rpc.admin import NativeAdmin


class NativeAdminChannel(AdminChannel):
    """The admin channel of the cluster (``role``: source or target) of ZooKeeper
    ``quorum`` / ``znode_parent``, or of the ``bootstrap`` servers (the RPC registry)."""

    def __init__(self, role: str, quorum: str, znode_parent: str = "/hbase", *,
                 security: ClusterSecurity | None = None, cluster: str = "",
                 bootstrap: Sequence[tuple[str, int]] = ()) -> None:
        super().__init__(role)
        self.quorum, self.znode_parent = quorum, znode_parent
        self.security, self.cluster = security, cluster
        self.bootstrap = tuple(bootstrap)

    @classmethod
    def of(cls, role: str, endpoints: ClusterEndpoints) -> NativeAdminChannel:
        return cls(role, endpoints.zookeeper or "", endpoints.znode_parent,
                   bootstrap=endpoints.bootstrap, **endpoints.client_auth)

    def open(self) -> NativeAdmin:
        return NativeAdmin(self.quorum, self.znode_parent, security=self.security,
                           cluster=self.cluster, bootstrap=self.bootstrap)

    def snapshot(self, table: str, name: str, ttl_seconds: int) -> None:
        with self.open() as admin:
            admin.snapshot(table, name, ttl_seconds)

    def clone(self, name: str, table: str) -> None:
        with self.open() as admin:
            admin.clone_snapshot(name, table)

    def restore(self, name: str, table: str) -> None:
        """Disable ``table`` (unless disabled), restore it, enable it again."""
        with self.open() as admin:
            if admin.table_state(table) != "DISABLED":
                admin.disable_table(table)
            admin.restore_snapshot(name, table)
            admin.enable_table(table)

    def delete(self, name: str) -> None:
        with self.open() as admin:
            admin.delete_snapshot(name)

    def snapshots(self, prefix: str) -> list[str]:
        with self.open() as admin:
            return [s.name for s in admin.snapshots(prefix)]

    def drop(self, table: str) -> None:
        with self.open() as admin:
            admin.drop(table)

    def flush_and_compact(self, table: str) -> None:
        """Flush ``table``, then major-compact it and wait until the compaction ended (what
        ``flush`` and ``major_compact`` through an admin shell do: delete markers gone)."""
        with self.open() as admin:
            admin.flush(table)
            admin.compact(table, major=True, wait=True)


class NativeCompactor:
    """A ``Compactor`` (``cluster.admin``) over HBase's own RPC: flushes and major-compacts
    the whole table through ``channel``, once per table, waiting until it ended; the
    regions are listed by ``regions`` (the cluster's client)."""

    waits = True

    def __init__(self, channel: NativeAdminChannel,
                 regions: Callable[[str], list[RegionDescriptor]]) -> None:
        self.channel, self._regions = channel, regions

    def regions(self, table: str) -> list[RegionDescriptor]:
        return self._regions(table)

    def compact(self, table: str, regions: Sequence[RegionDescriptor], asked: set[bytes]
                ) -> None:
        if (ran := f"native:{table}".encode()) not in asked:
            self.channel.flush_and_compact(table)
            asked.add(ran)
