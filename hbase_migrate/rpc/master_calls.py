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
    FlushTableRequest          1 table_name  2 column_family (repeated)  3 nonce_group
                               4 nonce                    Response  1 proc_id
    TruncateTableRequest       1 tableName  2 preserveSplits  3 nonce_group  4 nonce
                               Response  1 proc_id
    GetTableNamesRequest       1 regex  2 include_sys_tables  3 namespace
                               Response  1 table_names (repeated TableName)
    ExecProcedureRequest       1 procedure                Response  1 expected_timeout
                               2 return_data
    IsProcedureDoneRequest     1 procedure                Response  1 done  2 snapshot
    ProcedureDescription       1 signature  2 instance  3 creation_time
                               4 configuration (repeated NameStringPair: 1 name  2 value)

The service's method for the last is spelled ``getProcedureResult`` (lower case ``g``), as
in ``Master.proto``. Nonces (``nonce_group``, ``nonce``) make a call sent again after a
master failed over the same procedure, not a second one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.cluster.schema import (
    TABLE_STATES,
    Namespace,
    decode_namespace,
    decode_table_schema,
    namespace_message,
    table_from_message,
    table_name_message,
    table_schema,
)
from hbase_migrate.cluster.zk.zkpayload import payload, reading, strip_metadata
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


# --- the server's side (the embedded cluster's master answers with these) -----------------


def _nonce(m: Message, first: int) -> Nonce | None:
    group, nonce = m.opt_int(first), m.opt_int(first + 1)
    return None if group is None or nonce is None else Nonce(group, nonce)


def decode_create_table_request(data: bytes
                                ) -> tuple[TableDescriptor, tuple[bytes, ...], Nonce | None]:
    m = Message(data, "CreateTableRequest")
    return decode_table_schema(m.req_bytes(1, "table_schema")), m.repeated(2), _nonce(m, 3)


def decode_table_request(data: bytes) -> tuple[str, Nonce | None]:
    """The table (and nonce) of DeleteTable, EnableTable, DisableTable, GetTableState."""
    m = Message(data, "TableRequest")
    return table_from_message(m.req_bytes(1, "table_name")), _nonce(m, 2)


def decode_create_namespace_request(data: bytes) -> tuple[Namespace, Nonce | None]:
    m = Message(data, "CreateNamespaceRequest")
    return decode_namespace(m.req_bytes(1, "namespaceDescriptor")), _nonce(m, 2)


def proc_id_response(proc_id: int) -> bytes:
    return varint_field(1, proc_id)


def namespaces_response(namespaces: Sequence[Namespace]) -> bytes:
    return b"".join(bytes_field(1, namespace_message(n)) for n in namespaces)


class TableDescriptorsRequest(NamedTuple):
    tables: tuple[str, ...]
    regex: str | None
    include_system: bool
    namespace: str | None


def decode_get_table_descriptors_request(data: bytes) -> TableDescriptorsRequest:
    m = Message(data, "GetTableDescriptorsRequest")
    return TableDescriptorsRequest(m.msgs(1, table_from_message), m.opt_str(2),
                                   bool(m.opt_int(3)), m.opt_str(4))


def table_descriptors_response(descs: Sequence[TableDescriptor]) -> bytes:
    return b"".join(bytes_field(1, table_schema(d)) for d in descs)


def table_state_response(state: str) -> bytes:
    """A GetTableStateResponse for ``ENABLED``, ``DISABLED``, ..."""
    return bytes_field(1, varint_field(1, TABLE_STATES.index(state)))


def decode_procedure_result_request(data: bytes) -> int:
    return Message(data, "GetProcedureResultRequest").req_int(1, "proc_id")


def procedure_result_response(result: ProcedureResult) -> bytes:
    """A GetProcedureResultResponse; ``result.error`` as ``class: message``."""
    out = varint_field(1, result.state)
    if result.state != PROCEDURE_NOT_FOUND:
        out += varint_field(2, result.submitted) + varint_field(3, result.last_update)
    if result.error:
        class_name, _, message = result.error.partition(": ")
        generic = string_field(1, class_name) + string_field(2, message)
        out += bytes_field(5, string_field(1, "master") + bytes_field(2, generic))
    return out


def master_running_response() -> bytes:
    """An IsMasterRunningResponse (1 is_master_running) of a running master."""
    return varint_field(1, 1)


def decode_flush_table_request(data: bytes
                               ) -> tuple[str, tuple[bytes, ...], Nonce | None]:
    """The table, column families (none: all) and nonce of a FlushTableRequest."""
    m = Message(data, "FlushTableRequest")
    families = tuple(f for f in m.repeated(2) if f)
    return table_from_message(m.req_bytes(1, "table_name")), families, _nonce(m, 3)


def decode_truncate_table_request(data: bytes) -> tuple[str, bool, Nonce | None]:
    """The table, whether its split points are kept, and the nonce of a truncate."""
    m = Message(data, "TruncateTableRequest")
    return (table_from_message(m.req_bytes(1, "tableName")), bool(m.opt_int(2)),
            _nonce(m, 3))


def decode_get_table_names_request(data: bytes) -> TableDescriptorsRequest:
    """A GetTableNamesRequest as the GetTableDescriptorsRequest it filters like."""
    m = Message(data, "GetTableNamesRequest")
    return TableDescriptorsRequest((), m.opt_str(1), bool(m.opt_int(2)), m.opt_str(3))


def table_names_response(tables: Sequence[str]) -> bytes:
    return b"".join(bytes_field(1, table_name_message(t)) for t in tables)


class ProcedureDescription(NamedTuple):
    """A distributed procedure a client asks the master to run (``flush-table-proc`` with
    the table as ``instance``, ``online-snapshot``...)."""

    signature: str
    instance: str = ""
    configuration: tuple[tuple[str, str], ...] = ()


def _procedure_description(data: bytes) -> ProcedureDescription:
    m = Message(data, "ProcedureDescription")
    pairs = tuple((p.req_str(1, "name"), p.req_str(2, "value"))
                  for p in (Message(d, "NameStringPair") for d in m.repeated(4)))
    return ProcedureDescription(m.req_str(1, "signature"), m.opt_str(2) or "", pairs)


def decode_procedure_request(data: bytes, what: str) -> ProcedureDescription:
    """The ProcedureDescription of an ExecProcedureRequest or IsProcedureDoneRequest."""
    return _procedure_description(Message(data, what).req_bytes(1, "procedure"))


def exec_procedure_response(expected_timeout: int) -> bytes:
    return varint_field(1, expected_timeout)


def procedure_done_response(done: bool) -> bytes:
    return varint_field(1, done)
