"""A cluster's identity for what leaves the product: the ``source.cluster`` of CDC messages
and the ``hbase://<cluster>`` namespace of lineage datasets.

It is the id HBase keeps in ZooKeeper (``hbaseid``, the UUID its WAL keys carry as their
cluster id), read once per quorum (or asked of HBase's RPC registry for a cluster given by
``hbase+rpc://``); a cluster that names no quorum, or whose ZooKeeper does
not answer or holds no id yet, is known by its endpoints' name (the ``cluster.json`` name or
the ``hbase`` connection id), with a warning when ZooKeeper was named and failed.
"""

from __future__ import annotations

import logging

from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.errors import HBaseMigrateError

log = logging.getLogger(__name__)


def cluster_id(endpoints: ClusterEndpoints) -> str:
    """The cluster's ``hbaseid``, or its endpoints' name (see the module docstring)."""
    if not endpoints.zookeeper and not endpoints.bootstrap:
        return endpoints.name
    key = (endpoints.zookeeper or "", endpoints.znode_parent if endpoints.zookeeper
           else endpoints.uri or "")
    if key not in _KNOWN:  # only ids found are kept: a failed read is tried again next time
        found = _zookeeper_id(*key) if endpoints.zookeeper else _registry_id(endpoints)
        if found is None:
            return endpoints.name
        _KNOWN[key] = found
    return _KNOWN[key]


_KNOWN: dict[tuple[str, str], str] = {}


def _zookeeper_id(quorum: str, parent: str) -> str | None:
    from hbase_migrate.cluster.zk.zookeeper import HBaseZooKeeper

    try:
        with HBaseZooKeeper(quorum, parent, timeout=5.0) as zk:
            return zk.cluster_id()
    except HBaseMigrateError as exc:
        log.warning("cluster id: %s; using the cluster's name instead", exc)
        return None


def _registry_id(endpoints: ClusterEndpoints) -> str | None:
    """The id HBase's RPC registry tells (``GetClusterId``), for an ``hbase+rpc://`` cluster."""
    from hbase_migrate.rpc.errors import RpcError
    from hbase_migrate.rpc.registry import RpcRegistry

    registry = RpcRegistry(endpoints.bootstrap, call_timeout=5.0, **endpoints.client_auth)
    try:
        return registry.cluster_id()
    except RpcError as exc:
        log.warning("cluster id: %s; using the cluster's name instead", exc)
        return None
    finally:
        registry.close()
