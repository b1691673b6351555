"""The one front door to HBase: ``from hbase_migrate.hbase import open_client, Client``.

What a step holds of a cluster comes from here: a data client (:func:`open_client` for a
migration's cluster, :func:`connect` for bare endpoints; a :class:`Client` over HBase's own
RPC, its Thrift2 gateway or Bigtable, as the cluster's config says), a Thrift1 gateway for
the calls only it has (:func:`open_thrift1`, :func:`connect_thrift1`), the admin channel
(:func:`connect_admin`: snapshots and dropping tables; :func:`open_compactor`: the
compaction that drops delete markers), a bulk load (:func:`open_bulk_load`), the master's
and the registry's status, delegation tokens and the cluster's id. Beside them: the
protocols these return, the table, family and region descriptors, and the errors a step
catches whatever the transport (:class:`ClusterError` and its kinds).

The steps never import a transport (``hbase_migrate.rpc``, ``hbase_migrate.cluster.thrift``;
import-linter checks it). Both transports sit below this package, beside
:mod:`hbase_migrate.cluster`, their shared base, which imports neither; the names here are
re-exported from where they are defined, and a transport is imported only when a function
here first needs it.
"""

from __future__ import annotations

from hbase_migrate.cluster.admin import Admin, AdminShellError, Compactor, SnapshotInfo
from hbase_migrate.cluster.client import Client, Thrift1Gateway
from hbase_migrate.cluster.descriptors import FamilyDescriptor, RegionDescriptor, TableDescriptor
from hbase_migrate.cluster.errors import (
    ClusterError,
    GatewayUnreachableError,
    ServiceUnreachableError,
    WebHdfsUnreachableError,
    ZooKeeperNeverAnsweredError,
    ZooKeeperUnreachableError,
)
from hbase_migrate.cluster.missing import MissingFamilyError, MissingSchemaError, MissingTableError
from hbase_migrate.cluster.regions import RegionsInTransitionError
from hbase_migrate.hbase.admin import (
    cluster_status,
    connect_admin,
    delegation_token,
    open_compactor,
    registry_status,
)
from hbase_migrate.hbase.bulk import BulkLoadCalls, open_bulk_load
from hbase_migrate.hbase.connect import connect, connect_thrift1, open_client, open_thrift1
from hbase_migrate.hbase.identity import cluster_id

__all__ = [
    "Admin",
    "AdminShellError",
    "BulkLoadCalls",
    "Client",
    "ClusterError",
    "Compactor",
    "FamilyDescriptor",
    "GatewayUnreachableError",
    "MissingFamilyError",
    "MissingSchemaError",
    "MissingTableError",
    "RegionDescriptor",
    "RegionsInTransitionError",
    "ServiceUnreachableError",
    "SnapshotInfo",
    "TableDescriptor",
    "Thrift1Gateway",
    "WebHdfsUnreachableError",
    "ZooKeeperNeverAnsweredError",
    "ZooKeeperUnreachableError",
    "cluster_id",
    "cluster_status",
    "connect",
    "connect_admin",
    "connect_thrift1",
    "delegation_token",
    "open_bulk_load",
    "open_client",
    "open_compactor",
    "open_thrift1",
    "registry_status",
]
