"""Choosing the replay target of a cluster: Thrift2 (exact) whenever the cluster offers it,
Thrift1 with the delete-fidelity policy otherwise (DESIGN 4.1)."""

from __future__ import annotations

from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.thrift1 import Thrift1Client
from hbase_migrate.cluster.thrift2 import Thrift2Client
from hbase_migrate.replay.apply import Thrift2Target
from hbase_migrate.replay.thrift1_target import Thrift1Target


def open_target(endpoints: ClusterEndpoints, *, allow_lossy_deletes: bool = False,
                force_thrift1: bool = False) -> Thrift2Target | Thrift1Target:
    """A target over the cluster's Thrift2 gateway, or its Thrift1 gateway when it has no
    Thrift2 endpoint (or ``force_thrift1``). ``allow_lossy_deletes`` only matters for
    Thrift1. The caller closes it."""
    if endpoints.thrift2 and not force_thrift1:
        return Thrift2Target(Thrift2Client(endpoints.thrift2, endpoints.transport,
                                           endpoints.protocol))
    return Thrift1Target(Thrift1Client(endpoints.thrift, endpoints.transport,
                                       endpoints.protocol),
                         allow_lossy_deletes=allow_lossy_deletes)
