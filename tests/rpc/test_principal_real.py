"""The security preamble call (HBASE-28321) against the session's Kerberos-secured real HBase
2.6.1 (``secured_stack``, its own KDC): the cluster's security names a masters' principal the
KDC does not know (``hbase_master_principal``) beside the region servers' real one. A master
service goes to the masters' principal and is refused by the KDC; the registry's
``ClientMetaService``, which both serve, asks each server first, HBase's server names the
principal it runs as, and the calls go through: the registry's answers are ZooKeeper's, and a
client given the cluster's ``hbase+rpc://`` URI alone writes and reads a table."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.sizing import GatewaySettings
from hbase_migrate.cluster.zk.zookeeper import HBaseZooKeeper
from hbase_migrate.rpc import principal
from hbase_migrate.rpc.cluster import NativeCluster
from hbase_migrate.rpc.connection import Connection
from hbase_migrate.rpc.registry import REGISTRY_SERVICE, RpcRegistry
from hbase_migrate.rpc.sasl import SaslError
from hbase_migrate.wal.model import Cell, CellType
from realstack.hbase import RealHBase
from tests.realstack.fixtures import borrowed, stack_endpoints
from tests.rpc.test_registry_real import rpc_uri

pytestmark = [pytest.mark.integration, pytest.mark.realstack]
TABLE = "principal_preamble"


@pytest.fixture(scope="module")
def secured(secured_stack: RealHBase) -> Iterator[RealHBase]:
    yield from borrowed(secured_stack)


def two_principals(endpoints: ClusterEndpoints) -> ClusterSecurity:
    """The cluster's security with a masters' principal unknown to its KDC."""
    assert endpoints.security is not None and endpoints.security.kerberos
    realm = endpoints.security.hbase_principal.partition("@")[2]
    assert realm  # the stack names its realm: the server's answer must match it exactly
    return replace(endpoints.security, hbase_master_principal=f"hmaster/_HOST@{realm}")


def test_the_registry_learns_each_servers_principal(secured: RealHBase) -> None:
    endpoints = stack_endpoints(secured)
    two = two_principals(endpoints)
    realm = two.hbase_principal.partition("@")[2]
    assert endpoints.zookeeper
    with HBaseZooKeeper(endpoints.zookeeper, endpoints.znode_parent,
                        **endpoints.client_auth) as zk:
        expected = (zk.cluster_id(), zk.master(), zk.meta_server())
    master = expected[1]
    assert master is not None
    with pytest.raises(SaslError, match=f"to hmaster/{master.host}@{realm}"):
        Connection(master.host, master.port, service="MasterService", security=two,
                   cluster=endpoints.name)

    by_uri = replace(endpoints, zookeeper=None, uri=rpc_uri(secured), thrift="",
                     thrift2=None, client="native", security=two)
    registry = RpcRegistry(by_uri.bootstrap, **by_uri.client_auth)
    try:
        assert (registry.cluster_id(), registry.active_master(),
                registry.meta_server()) == expected
        host, port = registry.answered_by.rsplit(":", 1)
        names = principal.candidates(two, REGISTRY_SERVICE, host)
        assert names == (f"hmaster/{host}@{realm}", f"hbase/{host}@{realm}")
        assert principal.learned(registry.answered_by, names) == f"hbase/{host}@{realm}"
        assert registry.pool.get(host, int(port)).observed["sasl"] == "GSSAPI"
    finally:
        registry.close()

    with NativeCluster.of(replace(endpoints, client="native"), GatewaySettings()) as admin:
        admin.create_table(TableDescriptor(TABLE, (FamilyDescriptor(b"f"),)))
    cell = Cell(b"r", b"f", b"q", 1, CellType.PUT, b"v")
    with NativeCluster.of(by_uri, GatewaySettings()) as client:
        client.write_cells(TABLE, [cell])
        assert [c for row in client.scan(TABLE) for c in row] == [cell]
