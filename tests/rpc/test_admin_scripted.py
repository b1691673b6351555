"""The admin path's faults without HBase: the session's real ZooKeeper names a scripted
master (``<parent>/master``, metadata prefix and PBUF); the master dies in the middle of a
call and ZooKeeper names another, a master answers ``PleaseHoldException`` while it starts,
a procedure fails or runs past the wait, no master is named at all, a snapshot fails on the
server; and a region that moved while its table is flushed."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient
from rich.console import Console

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.zk.zkpayload import Master, add_metadata, encode_master
from hbase_migrate.commands.cluster import _render_status, status_info
from hbase_migrate.rpc.admin import NativeAdmin, SplitKeysError
from hbase_migrate.rpc.codec import Call, RemoteException, encode_reply
from hbase_migrate.rpc.locate import Region
from hbase_migrate.rpc.messages import decode_region_specifier
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
    """A reply, or the exception ``error``: flagged do_not_retry unless it is one a
    client waits out, as HBase flags its DoNotRetryIOExceptions."""
    flag = error not in (PLEASE_HOLD, None)
    conn.sendall(encode_reply(call.call_id, None if error else response,
                              exception=RemoteException(error, do_not_retry=flag)
                              if error else None))


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
            r"\(none found\): still failing after 0\.5 s of retries \(last: ZooKeeper .* no "
            rf"{PARENT}/master\)"):
        native.namespaces()


def test_a_snapshot_that_fails_on_the_server(zookeeper: Any, zk: KazooClient) -> None:
    """A master that takes snapshots without a procedure (no proc_id): IsSnapshotDone is
    polled, and the failure it reports ends the wait in one line naming the snapshot, its
    table and the master; the call is not sent again."""
    failure = "org.apache.hadoop.hbase.snapshot.HBaseSnapshotException"

    def answer(call: Call) -> tuple[bytes, str | None]:
        if call.method == "Snapshot":
            return varint_field(1, 60000), None  # expected_timeout only
        if sum(c.method == "IsSnapshotDone" for c in master.calls) < 3:
            return b"", None  # done = false
        return b"", failure

    with scripted_master(zk, answer) as master, admin(zookeeper) as native:
        with pytest.raises(AdminCallError, match=r"^IsSnapshotDone snapshot s1 of table ns:t, "
                           r"master 127\.0\.0\.1,\d+,1: org\.apache\.hadoop\.hbase\.snapshot\."
                           r"HBaseSnapshotException$"):
            native.snapshot("ns:t", "s1", 60)
        assert [c.method for c in master.calls] == ["Snapshot"] + ["IsSnapshotDone"] * 3


class StaleLocator:
    """Hands out a table's regions: first where they were, then where they are."""

    def __init__(self, *listings: list[Region]) -> None:
        self.listings = list(listings)
        self.pool = None

    def regions(self, table: str) -> list[Region]:
        return self.listings.pop(0) if len(self.listings) > 1 else self.listings[0]


def test_a_flush_follows_a_region_that_moved(zookeeper: Any) -> None:
    """The region server listed first answers NotServingRegionException: the table's
    regions are listed again and the region flushed where it went; the other is not
    flushed twice."""
    moved = RemoteException("org.apache.hadoop.hbase.NotServingRegionException",
                            do_not_retry=True)  # a DoNotRetryIOException, yet relocated

    def gone(call: Call, conn: socket.socket) -> None:
        conn.sendall(encode_reply(call.call_id, exception=moved))

    def serving(call: Call, conn: socket.socket) -> None:
        reply(conn, call, varint_field(1, 123) + varint_field(2, 1))

    with ScriptedServer(gone) as old, ScriptedServer(serving) as new:
        a = Region("t", b"", b"m", 1, b"t,,1.a.", "127.0.0.1", new.port)
        b = Region("t", b"m", b"", 1, b"t,m,1.b.", "127.0.0.1", old.port)
        locator = StaleLocator([a, b], [a, b._replace(port=new.port)])
        with NativeAdmin(zookeeper.address, PARENT, locator=locator,  # type: ignore[arg-type]
                         call_timeout=5) as native:
            native.flush("t")
        assert [decode_region_specifier(Message(c.request, "F").req_bytes(1, "region"))[1]
                for c in new.calls] == [b"t,,1.a.", b"t,m,1.b."]
        assert len(old.calls) == 1 and old.headers[0] and b"AdminService" in old.headers[0]


@pytest.mark.parametrize("keys", [[b"a", b""], [b"b", b"a", b"b"]])
def test_bad_split_keys_are_refused_before_any_call(zookeeper: Any, keys: list[bytes]) -> None:
    with admin(zookeeper, master_wait=0.1) as native, \
            pytest.raises(SplitKeysError, match=r"^table ns:t: split keys must be non-empty and "
                          r"distinct"):
        native.create_table(TABLE, keys)
    assert native.master_server is None  # nothing was asked of any master


def test_cluster_info_says_when_no_master_answers(zookeeper: Any, zk: KazooClient) -> None:
    zk.ensure_path(PARENT)
    native = ClusterEndpoints("native", zookeeper=zookeeper.address, znode_parent=PARENT)
    shown = status_info(native, wait=0.3)
    assert shown is not None and list(shown) == ["error"]
    assert shown["error"].startswith("GetClusterStatus cluster status, master (none found): "
                                     "still failing after 0.3 s of retries")
    console = Console(record=True, width=300)
    _render_status(console, shown)
    assert console.export_text().startswith("cluster status: GetClusterStatus")
