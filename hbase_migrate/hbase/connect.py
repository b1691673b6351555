"""Connecting to a cluster's data and table admin: :func:`connect` over what the cluster's
``client`` setting names (HBase's own RPC, or its Thrift2 gateway), :func:`open_client` for
a migration's cluster, and a Thrift1 gateway for the calls only Thrift1 has: the building
blocks of :class:`~hbase_migrate.hbase.handle.Cluster`, which chooses among them (a step
asks the handle)."""

from __future__ import annotations

from hbase_migrate.cluster.client import Client, Thrift1Gateway
from hbase_migrate.cluster.endpoints import ClusterEndpoints, Locate
from hbase_migrate.cluster.sizing import DEFAULT_REGION_WAIT, ClientSettings
from hbase_migrate.config import ClusterSpec
from hbase_migrate.errors import ConfigError


def connect(endpoints: ClusterEndpoints, settings: ClientSettings | None = None, *,
            locate: Locate | None = None) -> Client:
    """A client of the cluster at ``endpoints`` over what its ``client`` setting names,
    its calls sized and timed by ``settings`` (a migration's ``[gateway]``). ``locate``
    says where a Thrift2 gateway answers now (asked before reconnecting)."""
    settings = settings or ClientSettings()
    if endpoints.native:
        from hbase_migrate.rpc.cluster import NativeCluster  # the RPC, only when used

        return NativeCluster.of(endpoints, settings)
    if not endpoints.thrift2:
        raise ConfigError(f"cluster {endpoints.name!r} names no Thrift2 gateway (thrift2 = "
                          "\"host:9090\") and its client is \"thrift\": name one, or set "
                          "client = \"native\" with zookeeper = \"host:2181\"")
    from hbase_migrate.thrift.thrift2 import Thrift2Client

    return Thrift2Client.with_settings(endpoints.thrift2, settings, endpoints.transport,
                                       endpoints.protocol, locate=locate,
                                       **endpoints.client_auth)


def connect_thrift1(endpoints: ClusterEndpoints, *, timeout: float = 30.0,
                    locate: Locate | None = None,
                    region_wait: float = DEFAULT_REGION_WAIT) -> Thrift1Gateway:
    """A client of the cluster's Thrift1 gateway (happybase's IDL): calls time out after
    ``timeout`` seconds, a region listing in transition is read again for ``region_wait``;
    ``locate`` says where the gateway answers now (asked before reconnecting)."""
    from hbase_migrate.thrift.thrift1 import Thrift1Client  # happybase, when used

    return Thrift1Client(endpoints.thrift, endpoints.transport, endpoints.protocol,
                         timeout=timeout, locate=locate, region_wait=region_wait,
                         **endpoints.client_auth)


def open_client(cluster: ClusterSpec) -> Client:
    """A client of ``cluster`` over what its ``client`` setting names (:func:`connect`): a
    Thrift2 gateway is looked up again before reconnecting (the ``cluster.json`` read
    again: a gateway restarted on new ports is found); calls are sized and timed by the
    migration's ``[gateway]`` settings. A Bigtable target gets a
    :class:`~hbase_migrate.bigtable.client.BigtableClient`, which speaks the same protocol."""
    if cluster.bigtable is not None:  # the one place a step meets a Bigtable target
        from hbase_migrate.bigtable.client import BigtableClient

        return BigtableClient(cluster.bigtable)
    endpoints = cluster.endpoints()
    try:
        return connect(endpoints, cluster.gateway,
                       locate=lambda: cluster.reread_endpoints().thrift2)
    except ConfigError as exc:  # "source cluster 'a' names no ..."
        raise ConfigError(f"{cluster.role} {exc}") from None


def open_thrift1(cluster: ClusterSpec, why: str) -> Thrift1Gateway:
    """A Thrift1 client of ``cluster`` (for the calls only Thrift1 has: ``why`` says which
    and is the error's reason when the cluster names no Thrift1 gateway)."""
    endpoints = cluster.endpoints()
    if not endpoints.thrift:
        raise ConfigError(f"{cluster.role} cluster {endpoints.name!r} names no Thrift1 "
                          f"gateway (thrift = \"host:9090\"): {why}")
    return connect_thrift1(endpoints, timeout=cluster.gateway.call_timeout,
                           locate=lambda: cluster.reread_endpoints().thrift,
                           region_wait=cluster.gateway.region_wait)
