"""HBase's own RPC with Kerberos against the session's secured real HBase 2.6.1
(``secured_stack``: its own KDC and realm; ``hbase.rpc.protection`` is HBase's default,
``authentication``: the stack sets no other, so that is the level tested here; integrity
and privacy wrapping are tested against a scripted server in ``test_sasl``).

* The RPC servers refuse a connection without SASL (the proof they are secured).
* ``NativeCluster`` with the cluster's security: the master's calls (namespaces, a table
  created with split keys, its descriptor), the region servers' (writes and scans of every
  cell type, a flush through AdminService), each cross-checked through the Thrift2 gateway.
* Asking for a QOP the servers do not offer is one line naming both sides.
* No key of the keytab appears in the log.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace

import pytest

from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.sizing import GatewaySettings
from hbase_migrate.cluster.thrift2 import Thrift2Client
from hbase_migrate.cluster.zookeeper import HBaseZooKeeper
from hbase_migrate.rpc.cluster import NativeCluster
from hbase_migrate.rpc.connection import Connection
from hbase_migrate.rpc.errors import RemoteError
from hbase_migrate.rpc.sasl import SaslError
from hbase_migrate.wal.model import CellType, cell_order
from realstack.hbase import RealHBase
from tests.realstack.fixtures import borrowed, keytab_keys, leaks, stack_endpoints
from tests.rpc.test_native_real import FAMILIES, ROWS, SPLITS, every_kind

pytestmark = [pytest.mark.integration, pytest.mark.realstack]
TABLE = "sasl_cells"


@pytest.fixture(scope="module")
def secured(secured_stack: RealHBase) -> Iterator[RealHBase]:
    yield from borrowed(secured_stack)


@pytest.fixture(scope="module")
def endpoints(secured: RealHBase) -> ClusterEndpoints:
    found = stack_endpoints(secured)
    assert found.security is not None and found.security.kerberos
    assert found.security.rpc_protection == "authentication"
    return found


def master(endpoints: ClusterEndpoints) -> tuple[str, int]:
    assert endpoints.zookeeper
    with HBaseZooKeeper(endpoints.zookeeper, endpoints.znode_parent,
                        **endpoints.client_auth) as zk:
        found = zk.master()
    assert found is not None
    return found.host, found.port


def test_the_rpc_servers_refuse_simple_auth(endpoints: ClusterEndpoints) -> None:
    conn = Connection(*master(endpoints), service="MasterService", call_timeout=20)
    try:
        with pytest.raises(RemoteError) as refused:
            conn.call("IsMasterRunning", b"")
    finally:
        conn.close()
    assert "AccessDeniedException" in refused.value.class_name


def test_native_over_kerberos_cross_checked_through_thrift2(
        endpoints: ClusterEndpoints, secured: RealHBase,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with NativeCluster.of(endpoints, GatewaySettings()) as native, \
            Thrift2Client(endpoints.thrift2 or "", **endpoints.client_auth) as t2:
        native.create_table(TableDescriptor(TABLE, FAMILIES), SPLITS)
        assert native.table_exists(TABLE) and t2.table_exists(TABLE)
        assert native.table_descriptor(TABLE) == t2.table_descriptor(TABLE)
        assert "default" in native.namespaces()
        assert [r.start_key for r in native.regions(TABLE)] == [b"", *SPLITS]
        written = every_kind(ROWS)
        native.write_cells(TABLE, written)
        raw = [c for piece in native.scan(TABLE, raw=True) for c in piece]
        assert raw == sorted(written, key=cell_order)
        visible = [c for piece in native.scan(TABLE) for c in piece]
        assert visible == [c for piece in t2.scan(TABLE) for c in piece]
        assert visible and all(c.type == CellType.PUT for c in visible)
        # The other way: what Thrift2 writes, the native client reads.
        extra = [c._replace(row=b"t2-" + c.row) for c in written if c.type == CellType.PUT]
        t2.put_cells(TABLE, extra)
        assert native.get(TABLE, b"t2-a") == sorted(
            (c for c in extra if c.row == b"t2-a"), key=cell_order)
        native.admin.flush(TABLE)  # AdminService on the region server, over SASL
        assert [c for piece in native.scan(TABLE) for c in piece] == \
            [c for piece in t2.scan(TABLE) for c in piece]
    assert not leaks(caplog.text, keytab_keys(secured.kdc, secured.data_dir / "client.keytab")
                     if secured.kdc else [])


def test_a_protection_the_servers_do_not_offer_is_one_line(
        endpoints: ClusterEndpoints) -> None:
    assert endpoints.security is not None
    private = replace(endpoints.security, rpc_protection="privacy")
    with pytest.raises(SaslError) as refused:
        Connection(*master(endpoints), service="MasterService", security=private,
                   cluster=endpoints.name)
    message = str(refused.value)
    assert "\n" not in message
    assert "QOP mismatch: rpc_protection asks for privacy but the server offers " \
           "authentication" in message
    assert endpoints.security.principal and endpoints.security.principal in message
    assert "hbase/localhost@" in message
