"""The security preamble call (HBASE-28321) against the session's Kerberos-secured real HBase
2.6.1 (``secured_stack``, its own KDC): the cluster's security names a masters' principal the
KDC does not know (``hbase_master_principal``) beside the region servers' real one. A master
service goes to the masters' principal and is refused by the KDC; the registry's
``ClientMetaService``, which both serve, asks each server first, HBase's server names the
principal it runs as, and the calls go through: the registry's answers are ZooKeeper's, and a
client given the cluster's ``hbase+rpc://`` URI alone writes and reads a table. In front of
that server a proxy answers the preamble as HBase before 2.6.0 (3.0.0-alpha-4 too) does: the
client connects again and takes the masters' principal."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import replace

import pytest

from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.sizing import ClientSettings
from hbase_migrate.cluster.zk.zookeeper import HBaseZooKeeper
from hbase_migrate.rpc import principal
from hbase_migrate.rpc.cluster import NativeCluster
from hbase_migrate.rpc.codec import CONNECTION_CALL_ID, RemoteException, encode_reply
from hbase_migrate.rpc.connection import Connection
from hbase_migrate.rpc.registry import REGISTRY_SERVICE, RpcRegistry
from hbase_migrate.rpc.sasl import SaslError
from hbase_migrate.wal.model import Cell, CellType
from realstack.hbase import RealHBase
from tests.realstack.fixtures import borrowed, stack_endpoints
from tests.realstack.lifecycle_parts import rpc_uri
from tests.rpc.scripted import read_exactly

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

    with NativeCluster.of(replace(endpoints, client="native"), ClientSettings()) as admin:
        admin.create_table(TableDescriptor(TABLE, (FamilyDescriptor(b"f"),)))
    cell = Cell(b"r", b"f", b"q", 1, CellType.PUT, b"v")
    with NativeCluster.of(by_uri, ClientSettings()) as client:
        client.write_cells(TABLE, [cell])
        assert [c for row in client.scan(TABLE) for c in row] == [cell]


class OldServerProxy:
    """Forwards connections to ``upstream``, but answers a connection that opens with the
    security preamble as a server before HBASE-28321 does (``ServerRpcConnection
    .doBadPreambleHandling``): FatalConnectionException, then the connection closed."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.refused = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self.listener.accept()
                threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError, EOFError):
            first = read_exactly(conn, 6)
            if first == principal.SECURITY_PREAMBLE:
                self.refused += 1
                error = RemoteException(principal.FATAL_CONNECTION, principal.FATAL_CONNECTION
                                        + ": Expected HEADER=HBas but received HEADER=Secu")
                conn.sendall(encode_reply(CONNECTION_CALL_ID, exception=error))
                return
            with socket.create_connection(self.upstream) as up:
                up.sendall(first)
                back = threading.Thread(target=self._pump, args=(up, conn), daemon=True)
                back.start()
                self._pump(conn, up)
                back.join()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(1 << 16):
                dst.sendall(data)
            dst.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.listener.close()


def test_a_server_too_old_for_the_preamble_is_reached_as_a_master(secured: RealHBase) -> None:
    """The region servers' principal made one the KDC does not know, the masters' the real
    one: only the fallback to the masters' principal can get through."""
    endpoints = stack_endpoints(secured)
    assert endpoints.security is not None
    real = endpoints.security.hbase_principal
    realm = real.partition("@")[2]
    flipped = replace(endpoints.security, hbase_principal=f"hrs/_HOST@{realm}",
                      hbase_master_principal=real)
    host, _, port = rpc_uri(secured).removeprefix("hbase+rpc://").split(",")[0].rpartition(":")
    proxy = OldServerProxy((host, int(port)))
    try:
        conn = Connection("localhost", proxy.port, service=REGISTRY_SERVICE,
                          security=flipped, cluster=endpoints.name)
        try:
            assert conn.call("GetClusterId", b"").response
            assert conn.observed["sasl"] == "GSSAPI"
        finally:
            conn.close()
    finally:
        proxy.close()
    assert proxy.refused == 1
