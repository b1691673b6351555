"""``MasterService`` requests and responses for tables, namespaces and procedures
(``Master.proto`` of HBase branch-2.6; schemas in ``schema.py``)::

    CreateTableRequest         1 table_schema  2 split_keys (repeated bytes)  3 nonce_group
                               4 nonce
    DeleteTableRequest, EnableTableRequest, DisableTableRequest
                               1 table_name  2 nonce_group  3 nonce
    CreateNamespaceRequest     1 namespaceDescriptor  2 nonce_group  3 nonce
    *Response (the four above, and CreateNamespace)        1 proc_id (uint64, optional)
    ListNamespaceDescriptorsRequest  (empty)   Response  1 namespaceDescriptor (repeated)
    GetTableDescriptorsRequest 1 table_names (repeated)  2 regex  3 include_sys_tables
                               4 namespace                Response  1 table_schema (repeated)
    GetTableStateRequest       1 table_name               Response  1 table_state (TableState)
    GetProcedureResultRequest  1 proc_id
    GetProcedureResultResponse 1 state (NOT_FOUND 0, RUNNING 1, FINISHED 2)
                               2 submitted_time  3 last_update  4 result
                               5 exception (ForeignExceptionMessage)
    ForeignExceptionMessage    1 source  2 generic_exception
    GenericExceptionMessage    1 class_name  2 message  3 error_info  4 trace

The service's method for the last is spelled ``getProcedureResult`` (lower case ``g``), as
in ``Master.proto``. Nonces (``nonce_group``, ``nonce``) make a call sent again after a
master failed over the same procedure, not a second one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.cluster.zkpayload import payload, reading, strip_metadata
from hbase_migrate.rpc.schema import (
    TABLE_STATES,
    Namespace,
    decode_namespace,
    decode_table_schema,
    namespace_message,
    table_name_message,
    table_schema,
)
from hbase_migrate.wal.protobuf import Message, bytes_field, string_field, varint_field

PROCEDURE_NOT_FOUND, PROCEDURE_RUNNING, PROCEDURE_FINISHED = 0, 1, 2


class Nonce(NamedTuple):
    """``(nonce_group, nonce)``: a client's group and one operation's number."""

    group: int
    nonce: int


def _nonce_fields(nonce: Nonce | None, first: int) -> bytes:
    if nonce is None:
        return b""
    return varint_field(first, nonce.group) + varint_field(first + 1, nonce.nonce)


def create_table_request(desc: TableDescriptor, split_keys: Sequence[bytes] = (),
                         nonce: Nonce | None = None) -> bytes:
    return (bytes_field(1, table_schema(desc)) + b"".join(bytes_field(2, k) for k in split_keys)
            + _nonce_fields(nonce, 3))


def table_request(table: str, nonce: Nonce | None = None) -> bytes:
    """The request of DeleteTable, EnableTable and DisableTable."""
    return bytes_field(1, table_name_message(table)) + _nonce_fields(nonce, 2)


def create_namespace_request(namespace: Namespace, nonce: Nonce | None = None) -> bytes:
    return bytes_field(1, namespace_message(namespace)) + _nonce_fields(nonce, 2)


def decode_proc_id(data: bytes, what: str) -> int | None:
    """The ``proc_id`` of a response that starts a procedure (None: the master ran none)."""
    return Message(data, what).opt_int(1, "proc_id")


def decode_namespaces(data: bytes) -> list[Namespace]:
    """A ListNamespaceDescriptorsResponse."""
    return list(Message(data, "ListNamespaceDescriptorsResponse").msgs(1, decode_namespace))


def get_table_descriptors_request(tables: Sequence[str] = (), namespace: str | None = None,
                                  include_system: bool = False) -> bytes:
    out = b"".join(bytes_field(1, table_name_message(t)) for t in tables)
    if include_system:
        out += varint_field(3, 1)
    if namespace is not None:
        out += string_field(4, namespace)
    return out


def decode_table_descriptors(data: bytes) -> list[TableDescriptor]:
    return list(Message(data, "GetTableDescriptorsResponse").msgs(1, decode_table_schema))


def decode_table_state(data: bytes) -> str:
    """``ENABLED``, ``DISABLED``, ``DISABLING`` or ``ENABLING`` of a GetTableStateResponse."""
    state = Message(Message(data, "GetTableStateResponse").req_bytes(1, "table_state"),
                    "TableState").req_int(1, "state")
    return TABLE_STATES[state] if state < len(TABLE_STATES) else f"UNKNOWN({state})"


def decode_zk_table_state(data: bytes, table: str) -> str:
    """HBase 1.x's table state, its ``<parent>/table/<table>`` znode: the metadata prefix,
    ``PBUF`` and ZooKeeper.proto's ``Table`` (1 state, of the same values as 2.x's
    ``TableState``). No data is ``ENABLED``, as 1.x reads it."""
    if not strip_metadata(data):
        return "ENABLED"
    what = f"table znode of {table}"
    with reading(what, "Table"):
        state = payload(data, what, "Table").opt_int(1, "state") or 0
    return TABLE_STATES[state] if state < len(TABLE_STATES) else f"UNKNOWN({state})"


# --- procedures ---------------------------------------------------------------------------


def procedure_result_request(proc_id: int) -> bytes:
    return varint_field(1, proc_id)


class ProcedureResult(NamedTuple):
    """A procedure's state; ``error`` is its failure (``class: message``), empty when none."""

    state: int
    error: str = ""
    submitted: int = 0
    last_update: int = 0

    @property
    def finished(self) -> bool:
        return self.state == PROCEDURE_FINISHED


def decode_procedure_result(data: bytes) -> ProcedureResult:
    m = Message(data, "GetProcedureResultResponse")
    error = ""
    foreign = m.opt_bytes(5)
    if foreign is not None:
        f = Message(foreign, "ForeignExceptionMessage")
        generic = f.opt_bytes(2)
        if generic is not None:
            g = Message(generic, "GenericExceptionMessage")
            error = ": ".join(p for p in (g.opt_str(1), g.opt_str(2)) if p)
        error = error or f"failed (source {f.opt_str(1) or 'unknown'})"
    return ProcedureResult(m.req_int(1, "state"), error, m.opt_int(2) or 0, m.opt_int(3) or 0)
