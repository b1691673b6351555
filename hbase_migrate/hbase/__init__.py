"""The one front door to HBase: ``from hbase_migrate.hbase import open_cluster, Cluster``.

A step holds a cluster as a :class:`Cluster` (:func:`open_cluster` of its ``[source]`` or
``[target]``, or of bare endpoints). The handle reads the cluster's endpoints once
(``cluster.json``: again only once replaced, or on a reconnect), is the one place that
decides which transport serves what (HBase's own RPC, its Thrift2 gateway, its Thrift1
gateway, or Bigtable, as the cluster's config says), and offers what the steps use: the data
client (:meth:`Cluster.client`), the Thrift1 gateway for the calls only it has
(:meth:`Cluster.thrift1`) and the one a replay writes through when the cluster has no client
(:meth:`Cluster.replay_gateway`), the admin channel (:meth:`Cluster.admin`: snapshots and
dropping tables), the compaction that drops delete markers (:meth:`Cluster.compactor`), a bulk
load (:meth:`Cluster.bulk_load`), the master's and the registry's status, delegation tokens
and the cluster's id.

The free functions beside it (:func:`open_client`, :func:`connect`, :func:`open_thrift1`,
:func:`connect_thrift1`, :func:`connect_admin`, :func:`open_compactor`,
:func:`open_bulk_load`, :func:`cluster_status`, :func:`registry_status`,
:func:`delegation_token`, :func:`cluster_id`) are the handle's building blocks, each for one
transport or call; steps still calling them move to the handle. Also here: the protocols
these return, the table, family and region descriptors, and the errors a step catches
whatever the transport (:class:`ClusterError` and its kinds).

No package but this one imports a transport (``hbase_migrate.rpc``,
``hbase_migrate.thrift``, ``hbase_migrate.bigtable``; import-linter checks it): what the
steps use of a Bigtable target beside its client is re-exported by
:mod:`hbase_migrate.hbase.bigtable_target`, and its losses and delete markers kept in the
process are the handle's (:meth:`Cluster.recorded_losses`, :meth:`Cluster.marker_memory`).
The transports sit below this package, beside :mod:`hbase_migrate.cluster`, their shared
base, which imports none; the names here are re-exported from where they are defined, and a
transport is imported only when a function here first needs it.
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
from hbase_migrate.hbase.handle import Cluster, open_cluster
from hbase_migrate.hbase.identity import cluster_id

__all__ = [
    "Admin",
    "AdminShellError",
    "BulkLoadCalls",
    "Client",
    "Cluster",
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
    "open_cluster",
    "open_compactor",
    "open_thrift1",
    "registry_status",
]
