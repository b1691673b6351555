"""The door to a cluster's bulk load (``BulkLoadHFile`` over HBase's own RPC): what a step
that loads HFiles holds (:class:`BulkLoadCalls`), opened by :func:`open_bulk_load` for a
cluster reached natively. A Thrift gateway has no bulk load."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Protocol

from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.sizing import ClientSettings
from hbase_migrate.errors import ConfigError


class BulkLoadCalls(Protocol):
    """The three calls of a bulk load, and the regions they are made against."""

    def regions(self, table: str) -> list[RegionDescriptor]:
        """The table's online regions by start key, as ``hbase:meta`` lists them now."""
        ...

    def prepare(self, table: str) -> str:
        """A new staging folder (its path on the cluster's filesystem: the bulk token)."""
        ...

    def load(self, table: str, region: RegionDescriptor,
             family_paths: Sequence[tuple[bytes, str]], bulk_token: str, *,
             assign_seq_num: bool = True, timeout: float | None = None) -> bool:
        """The staged files into ``region``, all or none: whether they were loaded (False:
        one no longer fits the region). A failure carries its ``kind``."""
        ...

    def cleanup(self, table: str, bulk_token: str) -> None:
        """The staging folder deleted."""
        ...


@contextmanager
def open_bulk_load(endpoints: ClusterEndpoints, settings: ClientSettings | None = None
                   ) -> Iterator[BulkLoadCalls]:
    """The bulk-load calls on the cluster at ``endpoints`` (reached over HBase's RPC),
    closed after. A Kerberos-secured cluster is refused (no filesystem token is sent)."""
    if not endpoints.native:
        raise ConfigError(f"cluster {endpoints.name!r}: a bulk load goes over HBase's own RPC "
                          "(client = \"native\" with zookeeper = \"host:2181\" or an "
                          "hbase+rpc:// uri); a Thrift gateway has no bulk load")
    if endpoints.kerberos:
        raise ConfigError(f"cluster {endpoints.name!r} is Kerberos-secured: its region servers "
                          "take a bulk load only with a delegation token of its filesystem, "
                          "which this client does not send yet")
    from hbase_migrate.rpc.bulkload import NativeBulkLoad  # the RPC, only when used
    from hbase_migrate.rpc.cluster import NativeCluster

    with NativeCluster.of(endpoints, settings or ClientSettings()) as cluster:
        yield NativeBulkLoad(cluster.data)
