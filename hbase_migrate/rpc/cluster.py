"""``NativeCluster``: the client protocol (:class:`hbase_migrate.cluster.client.Client`) over
HBase's own RPC, no gateway: the data calls through ``NativeClient``, the table admin calls
through ``NativeAdmin`` (opened on the first such call, sharing the client's region
locator). Regions come as the protocol's ``RegionDescriptor``s."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Self

from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.descriptors import (
    ALL_VERSIONS,
    Columns,
    RegionDescriptor,
    TableDescriptor,
    TimeRange,
)
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.sizing import ClientSettings
from hbase_migrate.cluster.waves import RowCells
from hbase_migrate.rpc.admin import NativeAdmin
from hbase_migrate.rpc.client import NativeClient
from hbase_migrate.rpc.locate import Region
from hbase_migrate.rpc.messages import Column
from hbase_migrate.rpc.registry import RpcRegistry
from hbase_migrate.wal.model import Cell


def rpc_columns(columns: Columns | None) -> tuple[Column, ...]:
    """``(family, qualifier or None)`` pairs as one ``Column`` per family (a whole family
    named once covers its qualifiers)."""
    wanted: dict[bytes, list[bytes] | None] = {}
    for family, qualifier in columns or ():
        have = wanted.setdefault(family, [])
        if qualifier is None or have is None:
            wanted[family] = None
        else:
            have.append(qualifier)
    return tuple(Column(f, tuple(q or ())) for f, q in wanted.items())


def region_descriptor(region: Region) -> RegionDescriptor:
    return RegionDescriptor(region.table, region.start, region.end, region.region_id,
                            region.host, region.port, region.start_code, region.name)


class NativeCluster:
    """A client of the cluster ZooKeeper ``quorum`` / ``znode_parent`` lead to, or the
    servers ``bootstrap`` names (HBase's RPC registry: no ZooKeeper)."""

    def __init__(self, quorum: str, znode_parent: str = "/hbase", *,
                 settings: ClientSettings | None = None,
                 security: ClusterSecurity | None = None, cluster: str = "",
                 bootstrap: Sequence[tuple[str, int]] = ()) -> None:
        """``security`` (of the cluster named ``cluster``): Kerberos on every connection
        when it says so (``rpc.sasl``)."""
        settings = settings or ClientSettings()
        self.registry = RpcRegistry(bootstrap, call_timeout=settings.call_timeout,
                                    security=security, cluster=cluster) if bootstrap else None
        self.endpoint = (self.registry.description if self.registry is not None
                         else f"ZooKeeper {quorum}{znode_parent}")
        self.quorum, self.znode_parent = quorum, znode_parent
        self.call_timeout = settings.call_timeout
        self.max_put_bytes = settings.max_put_bytes
        self.data = NativeClient(quorum, znode_parent, call_timeout=settings.call_timeout,
                                 max_result_bytes=settings.max_result_bytes,
                                 max_multi_bytes=settings.max_put_bytes,
                                 multis_per_server=settings.multis_per_server,
                                 security=security, cluster=cluster,
                                 registry=self.registry)
        self._admin: NativeAdmin | None = None
        self.security, self.cluster = security, cluster

    @classmethod
    def of(cls, endpoints: ClusterEndpoints, settings: ClientSettings) -> NativeCluster:
        # ClusterEndpoints checks a native cluster names ZooKeeper or hbase+rpc servers
        return cls(endpoints.zookeeper or "", endpoints.znode_parent, settings=settings,
                   bootstrap=endpoints.bootstrap, **endpoints.client_auth)

    @property
    def admin(self) -> NativeAdmin:
        if self._admin is None:
            self._admin = NativeAdmin(self.quorum, self.znode_parent,
                                      call_timeout=self.call_timeout,
                                      locator=self.data.locator, security=self.security,
                                      cluster=self.cluster)
        return self._admin

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        try:
            if self._admin is not None:
                self._admin.close()
        finally:
            self.data.close()
            if self.registry is not None:
                self.registry.close()

    def probe(self, attempts: int = 1) -> None:
        """ZooKeeper read (or the registry asked), and a connection to the server holding
        ``hbase:meta``."""
        self.data.pool.get(*self.data.locator.meta_server())

    # --- data -------------------------------------------------------------------------

    def get(self, table: str, row: bytes, columns: Columns | None = None,
            time_range: TimeRange | None = None, max_versions: int = ALL_VERSIONS
            ) -> list[Cell]:
        return self.data.get(table, row, rpc_columns(columns), time_range, max_versions)

    def get_rows(self, table: str, rows: Sequence[bytes]) -> list[list[Cell]]:
        return self.data.get_rows(table, rows)

    def scan(self, table: str, start: bytes = b"", stop: bytes = b"", *,
             columns: Columns | None = None, time_range: TimeRange | None = None,
             max_versions: int = ALL_VERSIONS, raw: bool = False) -> Iterator[list[Cell]]:
        return self.data.scan(table, start, stop, time_range, max_versions, raw,
                              rpc_columns(columns))

    def scan_batches(self, table: str, start: bytes = b"", stop: bytes = b"", *,
                     columns: Columns | None = None, time_range: TimeRange | None = None,
                     max_versions: int = ALL_VERSIONS, raw: bool = False
                     ) -> Iterator[list[list[Cell]]]:
        return self.data.scan_batches(table, start, stop, time_range, max_versions, raw,
                                      rpc_columns(columns))

    def put_cells(self, table: str, cells: Sequence[Cell]) -> None:
        self.data.write(table, cells)

    def write_cells(self, table: str, cells: Sequence[Cell]) -> int:
        return self.data.write(table, cells)

    def write_rows(self, table: str, batch: Sequence[RowCells]) -> int:
        return self.data.write_rows(table, batch)

    def regions(self, table: str) -> list[RegionDescriptor]:
        return [region_descriptor(r) for r in self.data.regions(table)]

    def region_for(self, table: str, row: bytes) -> RegionDescriptor:
        return region_descriptor(self.data.locate(table, row))

    # --- table admin ------------------------------------------------------------------

    def table_exists(self, table: str) -> bool:
        return self.admin.table_exists(table)

    def table_descriptor(self, table: str) -> TableDescriptor:
        return self.admin.table_descriptor(table)

    def create_table(self, desc: TableDescriptor, split_keys: Sequence[bytes] = ()) -> None:
        self.admin.create_table(desc, split_keys)

    def namespaces(self) -> list[str]:
        return self.admin.namespaces()

    def create_namespace(self, namespace: str) -> None:
        self.admin.create_namespace(namespace)

    def enable_table(self, table: str) -> None:
        self.admin.enable_table(table)

    def disable_table(self, table: str) -> None:
        self.admin.disable_table(table)

    def is_table_enabled(self, table: str) -> bool:
        return self.admin.is_table_enabled(table)

    def delete_table(self, table: str) -> None:
        self.admin.delete_table(table)
