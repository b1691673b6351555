"""Choosing the replay target of a cluster: exact over the cluster's client (HBase's own RPC
for ``client = "native"``, else the Thrift2 gateway) whenever it has one, Thrift1 with the
delete-fidelity policy otherwise (DESIGN 4.1).

Given what the endpoints are read from (a :class:`~hbase_migrate.config.ClusterSpec`), the
target reads them again before each reconnection, so a target restarted on new ports (its
``cluster.json`` rewritten) is found on the next retry. The gateway is probed when the target
is opened: a target that is down fails the run at once, before any WAL file is read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.errors import ServiceUnreachableError
from hbase_migrate.cluster.sizing import ClientSettings
from hbase_migrate.config import ClusterSpec
from hbase_migrate.hbase.connect import connect, connect_thrift1, open_client
from hbase_migrate.replay.apply import TargetUnavailableError
from hbase_migrate.replay.client_target import ClientTarget
from hbase_migrate.replay.thrift1_target import Thrift1Target


class EndpointSource(Protocol):
    """Where a cluster's endpoints are looked up, each time they are asked for (a
    ``ClusterSpec``: its ``cluster.json``, read once, and again on a reconnect)."""

    def endpoints(self) -> ClusterEndpoints:
        ...


def _locate(source: EndpointSource | None, gateway: str) -> Callable[[], str | None] | None:
    """Where the gateway answers now, asked before a reconnect: a ``ClusterSpec`` reads
    its ``cluster.json`` again."""
    if source is None:
        return None
    found = source.reread_endpoints if isinstance(source, ClusterSpec) else source.endpoints
    if gateway == "thrift2":
        return lambda: found().thrift2
    return lambda: found().thrift


def open_target(cluster: ClusterEndpoints | EndpointSource, *,
                allow_lossy_deletes: bool = False, force_thrift1: bool = False,
                probe: bool = True) -> ClientTarget | Thrift1Target:
    """A target over the cluster's client (native, or its Thrift2 gateway), or its Thrift1
    gateway when it has neither (or ``force_thrift1``). ``allow_lossy_deletes`` only matters for
    Thrift1. ``cluster`` is the endpoints, or what they are read from (then read again
    before each reconnection). With ``probe``, a gateway that does not answer raises
    :class:`TargetUnavailableError` naming it. A Bigtable target is written over its
    client (:func:`~hbase_migrate.hbase.connect.open_client`). The caller closes the target."""
    if isinstance(cluster, ClusterSpec) and cluster.bigtable is not None:
        return _probed(ClientTarget(open_client(cluster), cluster=cluster.bigtable.where),
                       cluster.bigtable.where, "", probe)
    source = None if isinstance(cluster, ClusterEndpoints) else cluster
    endpoints = cluster if isinstance(cluster, ClusterEndpoints) else cluster.endpoints()
    target: ClientTarget | Thrift1Target
    if (endpoints.native or endpoints.thrift2) and not force_thrift1:
        # a ClusterSpec carries the migration's [gateway] settings (put sizes, timeout)
        settings = getattr(source, "gateway", None)
        target = ClientTarget(connect(
            endpoints, settings if isinstance(settings, ClientSettings) else None,
            locate=_locate(source, "thrift2")), cluster=endpoints.name)
    else:
        target = Thrift1Target(connect_thrift1(endpoints, locate=_locate(source, "thrift")),
                               allow_lossy_deletes=allow_lossy_deletes, cluster=endpoints.name)
    origin = getattr(source, "cluster_json", None)
    return _probed(target, f"target cluster {endpoints.name!r}",
                   f" (endpoints read from {origin})" if origin else "", probe)


def _probed(target: ClientTarget | Thrift1Target, name: str, read: str, probe: bool
            ) -> ClientTarget | Thrift1Target:
    """``target``, its gateway probed first with ``probe``: one that does not answer
    raises :class:`TargetUnavailableError` naming it."""
    if probe:
        try:
            target.client.probe()
        except ServiceUnreachableError as exc:
            target.close()
            raise TargetUnavailableError(f"{name}: {exc}{read}; no WAL file was read",
                                         endpoint=exc.endpoint, service=exc.service) from exc
    return target
