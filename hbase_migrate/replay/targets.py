"""Opening the replay target of a cluster over what its handle chooses
(:meth:`~hbase_migrate.hbase.Cluster.writes_exactly`): exact over the cluster's client (HBase's
own RPC for ``client = "native"``, else the Thrift2 gateway) whenever it has one, Thrift1 with
the delete-fidelity policy otherwise (DESIGN 4.1).

Given what the endpoints are read from (a :class:`~hbase_migrate.config.ClusterSpec`), the
target reads them again before each reconnection, so a target restarted on new ports (its
``cluster.json`` rewritten) is found on the next retry. The gateway is probed when the target
is opened: a target that is down fails the run at once, before any WAL file is read.
"""

from __future__ import annotations

from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.errors import ServiceUnreachableError
from hbase_migrate.config import ClusterSpec
from hbase_migrate.hbase import Cluster, open_cluster
from hbase_migrate.replay.apply import TargetUnavailableError
from hbase_migrate.replay.client_target import ClientTarget
from hbase_migrate.replay.thrift1_target import Thrift1Target


def open_target(cluster: ClusterEndpoints | ClusterSpec | Cluster, *,
                allow_lossy_deletes: bool = False, force_thrift1: bool = False,
                probe: bool = True) -> ClientTarget | Thrift1Target:
    """A target over the cluster's client (native, or its Thrift2 gateway), or its Thrift1
    gateway when it has neither (or ``force_thrift1``): as :meth:`Cluster.writes_exactly`
    says. ``allow_lossy_deletes`` only matters for Thrift1. ``cluster`` is the endpoints, or
    what they are read from (then read again before each reconnection). With ``probe``, a
    gateway that does not answer raises :class:`TargetUnavailableError` naming it. A
    Bigtable target is written over its client. The caller closes the target."""
    handle = cluster if isinstance(cluster, Cluster) else open_cluster(cluster)
    if handle.transport == "bigtable":
        return _probed(ClientTarget(handle.client(), cluster=handle.name), handle.name, "",
                       probe)
    name = handle.name
    target: ClientTarget | Thrift1Target
    if handle.writes_exactly(force_thrift1):
        # a ClusterSpec carries the migration's [gateway] settings (put sizes, timeout)
        target = ClientTarget(handle.client(), cluster=name)
    else:
        target = Thrift1Target(handle.replay_gateway(),
                               allow_lossy_deletes=allow_lossy_deletes, cluster=name)
    origin = handle.cluster_json
    return _probed(target, f"target cluster {name!r}",
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
