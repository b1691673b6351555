"""A cluster's admin beyond its client's table calls: snapshots (:func:`connect_admin`), the
compaction that drops delete markers (:func:`open_compactor`), the master's status and
delegation tokens. Each chooses the channel the cluster's config names; the steps get a
protocol (``cluster.admin.Admin``, ``Compactor``), never a transport's class. These are the
building blocks of :class:`~hbase_migrate.hbase.handle.Cluster` (a step asks the handle)."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

from hbase_migrate.cluster.admin import Admin, Compactor, JavaAdmin, ShellAdmin
from hbase_migrate.cluster.auth.tokens import Token
from hbase_migrate.cluster.client import Client
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.sizing import ClientSettings
from hbase_migrate.config import ClusterSpec
from hbase_migrate.errors import ConfigError
from hbase_migrate.hbase.connect import open_thrift1


def connect_admin(cluster: ClusterSpec, hbase_version: str) -> Admin:
    """The cluster's ``admin_shell`` if it names one; HBase's own RPC (no JVM) for a
    cluster whose client is native; else the Java helper (built for ``hbase_version``)."""
    if cluster.admin_shell:
        return ShellAdmin(cluster.role, cluster.admin_shell)
    endpoints = cluster.endpoints()
    if endpoints.native and (endpoints.zookeeper or endpoints.bootstrap):
        from hbase_migrate.rpc.admin_channel import NativeAdminChannel

        return NativeAdminChannel.of(cluster.role, endpoints)
    if endpoints.kerberos:
        raise ConfigError(f"{cluster.role} cluster {endpoints.name!r} is secured with "
                          "Kerberos and the Java admin helper does not log in: set "
                          "admin_shell = \"hbase shell -n\" in its section (run where a "
                          "ticket for the migration's principal is held)")
    if not endpoints.zookeeper:
        raise ConfigError(f"{cluster.role} cluster {endpoints.name!r} names neither an "
                          "admin_shell nor a zookeeper quorum: the admin helper connects "
                          "through ZooKeeper")
    return JavaAdmin(cluster.role, endpoints.zookeeper, endpoints.znode_parent, hbase_version)


def open_compactor(cluster: ClusterSpec, client: Client, why: str
                   ) -> AbstractContextManager[Compactor]:
    """What major-compacts ``cluster`` (whose ``client`` lists the regions): HBase's own
    RPC for a native cluster, else its Thrift1 gateway (HBase's Thrift2 has no compaction
    call; ``why`` is the error's reason when the cluster names none)."""
    endpoints = cluster.endpoints()
    if endpoints.native and (endpoints.zookeeper or endpoints.bootstrap):
        from hbase_migrate.rpc.admin_channel import NativeAdminChannel, NativeCompactor

        channel = NativeAdminChannel.of(cluster.role, endpoints)
        return nullcontext(NativeCompactor(channel, client.regions))
    return open_thrift1(cluster, why)


def cluster_status(endpoints: ClusterEndpoints, wait: float) -> dict[str, Any]:
    """The active master's cluster status of a native cluster, with the security its
    connection negotiated (``"connection"``); ``{"error"}`` when no master answered within
    ``wait`` seconds."""
    from hbase_migrate.rpc.admin import NativeAdmin
    from hbase_migrate.rpc.errors import RpcError

    if not endpoints.zookeeper and not endpoints.bootstrap:
        return {"error": f"cluster {endpoints.name!r} names no zookeeper quorum"}
    try:
        with NativeAdmin(endpoints.zookeeper or "", endpoints.znode_parent, call_timeout=wait,
                         master_wait=wait, bootstrap=endpoints.bootstrap,
                         **endpoints.client_auth) as admin:
            status = admin.cluster_status().to_json()
            status["connection"] = admin.master_security()
            return status
    except RpcError as exc:
        return {"error": str(exc)}


def registry_status(endpoints: ClusterEndpoints, wait: float) -> dict[str, Any]:
    """What HBase's RPC registry (the ``bootstrap`` servers of an ``hbase+rpc://`` cluster)
    says now: the server that answered, the cluster id, the active master and meta's
    server; ``{"error"}`` when none answered."""
    from hbase_migrate.rpc.errors import RpcError
    from hbase_migrate.rpc.registry import RpcRegistry

    registry = RpcRegistry(endpoints.bootstrap, call_timeout=wait, **endpoints.client_auth)
    try:
        found = {"cluster_id": registry.cluster_id(),
                 "master": str(registry.active_master()),
                 "meta_server": str(registry.meta_server())}
        return {"kind": "rpc", "answered_by": registry.answered_by, **found}
    except RpcError as exc:
        return {"kind": "rpc", "answered_by": None, "error": str(exc)}
    finally:
        registry.close()


def delegation_token(endpoints: ClusterEndpoints) -> Token | None:
    """A delegation token the native cluster at ``endpoints`` issues (None: it issues
    none); raises a ``ClusterError`` when it could not be asked."""
    from hbase_migrate.rpc.cluster import NativeCluster
    from hbase_migrate.rpc.tokens import obtain_token

    with NativeCluster.of(endpoints, ClientSettings()) as cluster:
        return obtain_token(cluster, endpoints.name)
