"""The admin path's faults without HBase: the session's real ZooKeeper names a scripted
master (``<parent>/master``, metadata prefix and PBUF); the master dies in the middle of a
call and ZooKeeper names another, a master answers ``PleaseHoldException`` while it starts,
a procedure fails or runs past the wait, no master is named at all."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.zkpayload import Master, add_metadata, encode_master
from hbase_migrate.rpc.admin import NativeAdmin
from hbase_migrate.rpc.codec import Call, RemoteException, encode_reply
from hbase_migrate.rpc.server_admin import AdminCallError
from hbase_migrate.wal.names import ServerName
from hbase_migrate.wal.protobuf import Message, bytes_field, string_field, varint_field
from tests.rpc.scripted import ScriptedServer

pytestmark = pytest.mark.integration

PARENT = "/scripted-master"
TABLE = TableDescriptor("ns:t", (FamilyDescriptor(b"f"),))
PLEASE_HOLD = "org.apache.hadoop.hbase.PleaseHoldException"


@pytest.fixture
def zk(zookeeper: Any) -> Iterator[KazooClient]:
    client = KazooClient(hosts=zookeeper.address)
    client.start()
    try:
        yield client
    finally:
        client.delete(PARENT, recursive=True)
        client.stop()
        client.close()


def name_master(zk: KazooClient, port: int) -> None:
    """Write ``<parent>/master`` as HBase's active master does."""
    data = add_metadata(encode_master(Master(ServerName("127.0.0.1", port, 1))), "master:1")
    if zk.exists(f"{PARENT}/master"):
        zk.set(f"{PARENT}/master", data)
    else:
        zk.create(f"{PARENT}/master", data, makepath=True)


def reply(conn: socket.socket, call: Call, response: bytes = b"",
          error: str | None = None) -> None:
    conn.sendall(encode_reply(call.call_id, None if error else response,
                              exception=RemoteException(error) if error else None))


def procedure_result(state: int, error: tuple[str, str] | None = None) -> bytes:
    out = varint_field(1, state)
    if error is not None:
        generic = string_field(1, error[0]) + string_field(2, error[1])
        out += bytes_field(5, string_field(1, "master") + bytes_field(2, generic))
    return out


def nonce_of(call: Call) -> tuple[int | None, int | None]:
    m = Message(call.request, "CreateTableRequest")
    return m.opt_int(3), m.opt_int(4)


def admin(zookeeper: Any, **kw: Any) -> NativeAdmin:
    return NativeAdmin(zookeeper.address, PARENT, call_timeout=5, **kw)


def test_create_table_rides_out_a_master_failover(zookeeper: Any, zk: KazooClient) -> None:
    """The first master dies with CreateTable in flight; ZooKeeper names the second,
    which first says it is still starting (PleaseHoldException): the same CreateTable,
    same nonce, reaches it and its procedure is waited for until it finished."""
    polls: list[int] = []

    def dying(call: Call, conn: socket.socket) -> None:
        name_master(zk, second.port)  # the backup takes over as the first one goes
        conn.close()

    def backup(call: Call, conn: socket.socket) -> None:
        if call.method == "CreateTable":
            if sum(c.method == "CreateTable" for c in second.calls) == 1:
                reply(conn, call, error=PLEASE_HOLD)
            else:
                reply(conn, call, varint_field(1, 42))
        elif call.method == "getProcedureResult":
            assert Message(call.request, "R").req_int(1, "proc_id") == 42
            polls.append(1)
            reply(conn, call, procedure_result(2 if len(polls) == 3 else 1))

    with ScriptedServer(dying) as first, ScriptedServer(backup) as second:
        name_master(zk, first.port)
        with admin(zookeeper) as native:
            native.create_table(TABLE, [b"p", b"g"])
            assert native.master_server == ServerName("127.0.0.1", second.port, 1)
            assert native.failovers == 1
        sent = [c for c in first.calls + second.calls if c.method == "CreateTable"]
        assert len(sent) == 3 and len({nonce_of(c) for c in sent}) == 1
        assert None not in nonce_of(sent[0])
        assert Message(sent[-1].request, "CreateTableRequest").repeated(2) == (b"g", b"p")
        assert len(polls) == 3
        assert first.headers[0] and b"MasterService" in first.headers[0]


def scripted_master(zk: KazooClient, answer: Callable[[Call], tuple[bytes, str | None]]
                    ) -> ScriptedServer:
    def script(call: Call, conn: socket.socket) -> None:
        response, error = answer(call)
        reply(conn, call, response, error)
    server = ScriptedServer(script)
    name_master(zk, server.port)
    return server


def test_a_failed_procedure_is_one_line_naming_call_table_and_master(
        zookeeper: Any, zk: KazooClient) -> None:
    failure = ("org.apache.hadoop.hbase.TableExistsException", "ns:t")
    def answer(call: Call) -> tuple[bytes, str | None]:
        if call.method == "CreateTable":
            return varint_field(1, 5), None
        return procedure_result(2, failure), None

    with scripted_master(zk, answer) as master, admin(zookeeper) as native, \
            pytest.raises(AdminCallError) as info:
        native.create_table(TABLE)
    assert str(info.value) == (f"CreateTable table ns:t, master 127.0.0.1,{master.port},1: "
                               "procedure 5 failed: "
                               "org.apache.hadoop.hbase.TableExistsException: ns:t")
    assert info.value.class_name == "org.apache.hadoop.hbase.TableExistsException"


def test_a_procedure_that_runs_long_is_waited_for_within_the_bound(
        zookeeper: Any, zk: KazooClient) -> None:
    with scripted_master(zk, lambda call: (
            varint_field(1, 9) if call.method == "DisableTable" else procedure_result(1),
            None)), admin(zookeeper, wait_timeout=0.5) as native:
        began = time.monotonic()
        with pytest.raises(AdminCallError, match=r"^DisableTable table t, master 127\.0\.0\.1,"
                           r"\d+,1: procedure 9 still running after 0\.5 s$"):
            native.disable_table("t")
        assert time.monotonic() - began < 3


def test_a_server_error_is_not_retried(zookeeper: Any, zk: KazooClient) -> None:
    error = "org.apache.hadoop.hbase.NamespaceNotFoundException"
    with scripted_master(zk, lambda call: (b"", error)) as master, \
            admin(zookeeper) as native:
        with pytest.raises(AdminCallError, match=r"^CreateTable table ns:t, master .*: "
                           r"org\.apache\.hadoop\.hbase\.NamespaceNotFoundException"):
            native.create_table(TABLE)
        assert len(master.calls) == 1


def test_no_master_is_named_within_the_bound(zookeeper: Any, zk: KazooClient) -> None:
    zk.ensure_path(PARENT)
    with admin(zookeeper, master_wait=0.5) as native, pytest.raises(
            AdminCallError, match=r"^ListNamespaceDescriptors \(all namespaces\), master "
            r"\(none found\): no master answered within 0\.5 s \(last: ZooKeeper .* no "
            rf"{PARENT}/master\)"):
        native.namespaces()
