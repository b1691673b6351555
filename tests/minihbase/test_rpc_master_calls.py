"""The embedded master's table flush and table names as HBase 2.6's ``MasterRpcServices``
serves them (issue 58): ``FlushTable`` (what ``Admin.flush(table)`` of a 2.6 client sends)
and the ``flush-table-proc`` distributed procedure of ``ExecProcedure``/``IsProcedureDone``
(what it falls back to, and what older clients send), ``GetTableNames`` by namespace and
regex. Requests are encoded by Google's protobuf package (``tests/rpc/proto_reference.py``);
the region servers' WAL markers are the judge of a flush."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor
from hbase_migrate.rpc.connection import Connection
from hbase_migrate.rpc.errors import RemoteError
from hbase_migrate.wal.model import CellType
from minihbase.model import ClientCell, Mutation
from minihbase.server import MiniHBase
from tests.minihbase.rpc_requests import cluster_of
from tests.rpc.proto_reference import decode, encode

pytestmark = pytest.mark.integration

H = "org.apache.hadoop.hbase."
FLUSH = "flush-table-proc"


@pytest.fixture(scope="module")
def master(rpc_mini: MiniHBase) -> Iterator[Connection]:
    host, port = rpc_mini.describe()["master_rpc"].rsplit(":", 1)
    conn = Connection(host, int(port), service="MasterService")
    try:
        yield conn
    finally:
        conn.close()


def table_name(name: str) -> dict[str, bytes]:
    namespace, _, qualifier = name.rpartition(":")
    return {"namespace": (namespace or "default").encode(), "qualifier": qualifier.encode()}


def answer(conn: Connection, method: str, request: str, response: str, **fields: Any) -> Any:
    reply = conn.call(method, encode(request, **fields))
    return decode(response, reply.response or b"")


def refused(conn: Connection, method: str, request: str, **fields: Any) -> RemoteError:
    with pytest.raises(RemoteError) as caught:
        conn.call(method, encode(request, **fields))
    return caught.value


def dirty_table(mini: MiniHBase, table: str) -> int:
    """Create ``table`` (split in two), write to both regions; the WAL entry count now."""
    cluster, servers = cluster_of(mini)
    cluster.create_table(table, (FamilyDescriptor(b"f"),), [b"m"])
    cluster.mutate(table, [Mutation(row, (ClientCell(b"f", b"q", 1, CellType.PUT, b"v"),))
                           for row in (b"a", b"z")])
    return int(servers.counters["entries"])


def test_flush_table_procedure(rpc_mini: MiniHBase, master: Connection) -> None:
    """FlushTable: a procedure id whose result reads FINISHED, a flush marker per region in
    the WALs; a missing table, a disabled one and a family the table lacks fail the
    procedure (not the call, as on HBase) with HBase's classes."""
    _, servers = cluster_of(rpc_mini)
    entries = dirty_table(rpc_mini, "mflush")
    done = answer(master, "FlushTable", "FlushTableRequest", "FlushTableResponse",
                  table_name=table_name("mflush"), nonce_group=7, nonce=8)
    assert done.proc_id > 0
    result = answer(master, "getProcedureResult", "GetProcedureResultRequest",
                    "GetProcedureResultResponse", proc_id=done.proc_id)
    assert result.state == 2  # FINISHED
    assert servers.counters["entries"] >= entries + 2
    assert failed_flush(master, table_name=table_name("nope")) == \
        (H + "TableNotFoundException", "nope")
    assert failed_flush(master, table_name=table_name("mflush"), column_family=[b"x"])[0] \
        .endswith("NoSuchColumnFamilyException")
    cluster, _ = cluster_of(rpc_mini)
    cluster.disable_table("mflush")
    try:
        assert failed_flush(master, table_name=table_name("mflush"))[0] == \
            H + "TableNotEnabledException"
    finally:
        cluster.enable_table("mflush")


def failed_flush(master: Connection, **fields: Any) -> tuple[str, str]:
    """A FlushTable that fails as HBase's procedure fails: a procedure id, its result
    FINISHED with the exception's class and message."""
    done = answer(master, "FlushTable", "FlushTableRequest", "FlushTableResponse", **fields)
    result = answer(master, "getProcedureResult", "GetProcedureResultRequest",
                    "GetProcedureResultResponse", proc_id=done.proc_id)
    assert result.state == 2
    failure = result.exception.generic_exception
    return failure.class_name, failure.message


def test_flush_table_proc_of_exec_procedure(rpc_mini: MiniHBase, master: Connection) -> None:
    """ExecProcedure ``flush-table-proc``: not done before, flushed before the reply (the
    expected timeout HBase sends, 5 minutes), done after; a procedure HBase does not
    register is refused with its message."""
    _, servers = cluster_of(rpc_mini)
    entries = dirty_table(rpc_mini, "mproc")
    proc = {"signature": FLUSH, "instance": "mproc"}
    assert not answer(master, "IsProcedureDone", "IsProcedureDoneRequest",
                      "IsProcedureDoneResponse", procedure=proc).done
    sent = answer(master, "ExecProcedure", "ExecProcedureRequest", "ExecProcedureResponse",
                  procedure=proc)
    assert sent.expected_timeout == 300_000
    assert servers.counters["entries"] >= entries + 2
    assert answer(master, "IsProcedureDone", "IsProcedureDoneRequest",
                  "IsProcedureDoneResponse", procedure=proc).done
    error = refused(master, "ExecProcedure", "ExecProcedureRequest",
                    procedure={"signature": "no-such-proc", "instance": "mproc"})
    assert (error.class_name, error.do_not_retry) == (H + "DoNotRetryIOException", True)
    assert "The procedure is not registered: no-such-proc" in error.detail
    families = {"signature": FLUSH, "instance": "mproc",
                "configuration": [{"name": "families", "value": "f,x"}]}
    assert refused(master, "ExecProcedure", "ExecProcedureRequest",
                   procedure=families).class_name.endswith("NoSuchColumnFamilyException")


def test_table_names(rpc_mini: MiniHBase, master: Connection) -> None:
    """GetTableNames: every table, or those of a namespace, or those matching a regex."""
    cluster, _ = cluster_of(rpc_mini)
    cluster.create_namespace("mnames")
    for table in ("mnames:one", "mnames:two", "mnames_other"):
        cluster.create_table(table, (FamilyDescriptor(b"f"),), [])

    def names(**fields: Any) -> set[tuple[bytes, bytes]]:
        listed = answer(master, "GetTableNames", "GetTableNamesRequest",
                        "GetTableNamesResponse", **fields).table_names
        return {(t.namespace, t.qualifier) for t in listed}

    assert names(namespace="mnames") == {(b"mnames", b"one"), (b"mnames", b"two")}
    assert names(regex="mnames.*t.*") == {(b"mnames", b"two"), (b"default", b"mnames_other")}
    assert names(regex="default:mnames_.*") == {(b"default", b"mnames_other")}
    everything = names()
    assert {(b"mnames", b"one"), (b"default", b"mnames_other")} <= everything
    assert len(everything) == len(cluster.store.tables())
