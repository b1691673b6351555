"""``MasterService`` of the embedded master: namespaces, table descriptors and names,
create (with split keys), enable, disable, delete, truncate, schema changes
(``minihbase.rpc.master_schema``), moves, splits and the balancer
(``minihbase.rpc.master_regions``) and flush (``FlushTable``, and
the ``flush-table-proc`` distributed procedure of ``ExecProcedure``/``IsProcedureDone``
that clients before 2.6 use and 2.6 falls back to), table state, procedure results and the
cluster status, as ``MasterRpcServices`` answers them.

A DDL call runs to its end before the reply, and a failure HBase detects before it starts
its procedure (``ProcedurePrepareLatch``: the table exists, is not disabled, the namespace
is missing) is the call's exception, as on HBase; the reply carries a procedure id whose
``getProcedureResult`` reads FINISHED. A call sent again with the same nonce gets the same
procedure id and is not run twice.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable, Iterable

from hbase_migrate.cluster.schema import Namespace
from hbase_migrate.rpc.master_calls import (
    PROCEDURE_FINISHED,
    PROCEDURE_NOT_FOUND,
    Nonce,
    ProcedureResult,
    TableDescriptorsRequest,
    decode_create_namespace_request,
    decode_create_table_request,
    decode_flush_table_request,
    decode_get_table_descriptors_request,
    decode_get_table_names_request,
    decode_procedure_request,
    decode_procedure_result_request,
    decode_table_request,
    decode_truncate_table_request,
    exec_procedure_response,
    master_running_response,
    namespaces_response,
    proc_id_response,
    procedure_done_response,
    procedure_result_response,
    table_descriptors_response,
    table_names_response,
    table_state_response,
)
from hbase_migrate.rpc.status import ClusterStatus, ServerStatus, cluster_status_response
from hbase_migrate.wal.names import ServerName
from minihbase.cluster import Cluster
from minihbase.model import MiniHBaseError
from minihbase.regionserver import RegionServers
from minihbase.rpc.listener import (
    DO_NOT_RETRY,
    CallContext,
    H,
    Handler,
    ServiceError,
    service_error,
)
from minihbase.rpc.master_regions import MasterRegions
from minihbase.rpc.master_schema import MasterSchema
from minihbase.store import TableInfo
from minihbase.zkregistry import VERSION_INFO

FLUSH_TABLE_PROC = "flush-table-proc"  # MasterFlushTableProcedureManager's signature
REGISTERED = {FLUSH_TABLE_PROC, "online-snapshot"}  # the procedures HBase's master runs
FAMILIES = "families"  # HConstants.FAMILY_KEY_STR
PROCEDURE_WAIT_MS = 300_000  # SnapshotDescriptionUtils.DEFAULT_MAX_WAIT_TIME


class MasterRpc:
    """The master's calls over ``cluster``; ``name`` is the master's server name."""

    def __init__(self, cluster: Cluster, servers: RegionServers, name: ServerName,
                 cluster_id: str) -> None:
        self.cluster = cluster
        self.servers = servers
        self.name = name
        self.cluster_id = cluster_id
        self._ids = itertools.count(1)
        self._procedures: dict[int, ProcedureResult] = {}
        self._nonces: dict[Nonce, int] = {}
        self._flushed: set[str] = set()  # tables flush-table-proc ran for
        self._lock = threading.Lock()
        self.regions = MasterRegions(cluster, servers, self._procedure)

    def services(self) -> dict[str, dict[str, Handler]]:
        return {"MasterService": {
            "IsMasterRunning": lambda ctx: (master_running_response(), b""),
            "ListNamespaceDescriptors": self.namespaces,
            "CreateNamespace": self.create_namespace,
            "GetTableDescriptors": self.table_descriptors,
            "GetTableState": self.table_state,
            "CreateTable": self.create_table,
            "EnableTable": self._table_procedure(self.cluster.enable_table),
            "DisableTable": self._table_procedure(self.cluster.disable_table),
            "DeleteTable": self._table_procedure(self.cluster.delete_table),
            "getProcedureResult": self.procedure_result,
            "GetClusterStatus": self.cluster_status,
            "GetTableNames": self.table_names,
            "FlushTable": self.flush_table,
            "truncateTable": self.truncate_table,
            "ExecProcedure": self.exec_procedure,
            "IsProcedureDone": self.procedure_done,
            **MasterSchema(self.cluster, self._procedure).handlers(),
            **self.regions.handlers(),
        }}

    def _procedure(self, nonce: Nonce | None, run: Callable[[], object], *,
                   fails_as_result: bool = False) -> tuple[bytes, bytes]:
        """Run a procedure once per nonce; reply with its id. ``fails_as_result``: a
        failure is the procedure's (its result's exception), not the call's."""
        with self._lock:
            if nonce is not None and nonce in self._nonces:
                return proc_id_response(self._nonces[nonce]), b""
            submitted = self.cluster.clock()
            error = ""
            try:
                run()
            except (ServiceError, MiniHBaseError) as exc:
                if not fails_as_result:
                    raise
                failure = service_error(exc)
                error = f"{failure.class_name}: {failure.message}"
            proc_id = next(self._ids)
            self._procedures[proc_id] = ProcedureResult(PROCEDURE_FINISHED, error, submitted,
                                                        self.cluster.clock())
            if nonce is not None:
                self._nonces[nonce] = proc_id
        return proc_id_response(proc_id), b""

    def namespaces(self, ctx: CallContext) -> tuple[bytes, bytes]:
        return namespaces_response([Namespace(n) for n in self.cluster.namespaces()]), b""

    def create_namespace(self, ctx: CallContext) -> tuple[bytes, bytes]:
        namespace, nonce = decode_create_namespace_request(ctx.call.request)
        return self._procedure(nonce, lambda: self.cluster.create_namespace(namespace.name))

    def create_table(self, ctx: CallContext) -> tuple[bytes, bytes]:
        desc, keys, nonce = decode_create_table_request(ctx.call.request)
        return self._procedure(nonce, lambda: self.cluster.create_table(
            desc.name, desc.families, keys))

    def _table_procedure(self, run: Callable[[str], None]
                         ) -> Callable[[CallContext], tuple[bytes, bytes]]:
        def handle(ctx: CallContext) -> tuple[bytes, bytes]:
            table, nonce = decode_table_request(ctx.call.request)
            return self._procedure(nonce, lambda: run(table))
        return handle

    def _tables(self, req: TableDescriptorsRequest) -> list[TableInfo]:
        """The named tables (an unknown one is left out, as HBase does), or every table
        matching the regex (a default table's name with or without ``default:``) and
        namespace; system tables only when asked."""
        if req.tables:
            return [self.cluster.table(t) for t in req.tables
                    if self.cluster.store.has_table(t)]
        pattern = re.compile(req.regex) if req.regex else None
        return [i for i in self.cluster.store.tables()
                if (req.namespace is None or _namespace(i.name) == req.namespace)
                and (pattern is None or pattern.fullmatch(i.name) is not None
                     or (":" not in i.name and pattern.fullmatch("default:" + i.name)))]

    def table_descriptors(self, ctx: CallContext) -> tuple[bytes, bytes]:
        req = decode_get_table_descriptors_request(ctx.call.request)
        return table_descriptors_response([i.descriptor for i in self._tables(req)]), b""

    def table_names(self, ctx: CallContext) -> tuple[bytes, bytes]:
        """``Admin.listTableNames``: the names GetTableDescriptors would list."""
        req = decode_get_table_names_request(ctx.call.request)
        return table_names_response([i.name for i in self._tables(req)]), b""

    def _flush(self, table: str, families: Iterable[bytes]) -> None:
        """Flush an enabled table's regions; a family it lacks is refused first."""
        info = self.cluster.table(table)  # TableNotFoundException when missing
        if not info.enabled:
            raise ServiceError(H + "TableNotEnabledException", table, do_not_retry=True)
        have = {f.name for f in info.descriptor.families}
        missing = [f.decode("utf-8", "replace") for f in families if f not in have]
        if missing:
            raise ServiceError(H + "regionserver.NoSuchColumnFamilyException",
                               f"Column families {missing} don't exist in table {table}",
                               do_not_retry=True)
        self.servers.flush(table)

    def flush_table(self, ctx: CallContext) -> tuple[bytes, bytes]:
        """``Admin.flush(table)`` of a 2.6 client: a procedure, done before the reply; a
        missing or disabled table fails the procedure, as on HBase, not the call."""
        table, families, nonce = decode_flush_table_request(ctx.call.request)
        return self._procedure(nonce, lambda: self._flush(table, families),
                               fails_as_result=True)

    def truncate_table(self, ctx: CallContext) -> tuple[bytes, bytes]:
        """``Admin.truncateTable``: a disabled table emptied, with one region or its split
        points kept, and enabled again, as HBase's TruncateTableProcedure leaves it."""
        table, preserve, nonce = decode_truncate_table_request(ctx.call.request)
        return self._procedure(nonce, lambda: self._truncate(table, preserve))

    def _truncate(self, table: str, preserve: bool) -> None:
        info = self.cluster.table(table)  # TableNotFoundException when missing
        if info.enabled:
            raise ServiceError(H + "TableNotDisabledException", table, do_not_retry=True)
        keys = sorted({r.start_key for r in self.cluster.regions(table) if r.start_key})
        self.cluster.delete_table(table)
        self.cluster.create_table(table, info.descriptor.families, keys if preserve else [])

    def exec_procedure(self, ctx: CallContext) -> tuple[bytes, bytes]:
        """``flush-table-proc`` (the table its instance, ``families`` a comma-separated
        list), run to its end before the reply as HBase's master waits for it; a table
        without regions has nothing to flush."""
        desc = decode_procedure_request(ctx.call.request, "ExecProcedureRequest")
        _registered(desc.signature, DO_NOT_RETRY)
        families = [f.strip().encode() for name, value in desc.configuration
                    if name == FAMILIES for f in value.split(",") if f.strip()]
        if self.cluster.store.has_table(desc.instance):
            self._flush(desc.instance, families)
        with self._lock:
            self._flushed.add(desc.instance)
        return exec_procedure_response(PROCEDURE_WAIT_MS), b""

    def procedure_done(self, ctx: CallContext) -> tuple[bytes, bytes]:
        """Whether ``flush-table-proc`` ran for the table (false before it was asked)."""
        desc = decode_procedure_request(ctx.call.request, "IsProcedureDoneRequest")
        _registered(desc.signature, "java.io.IOException")
        with self._lock:
            return procedure_done_response(desc.instance in self._flushed), b""

    def table_state(self, ctx: CallContext) -> tuple[bytes, bytes]:
        table, _ = decode_table_request(ctx.call.request)
        info = self.cluster.table(table)  # TableNotFoundException when missing
        return table_state_response("ENABLED" if info.enabled else "DISABLED"), b""

    def procedure_result(self, ctx: CallContext) -> tuple[bytes, bytes]:
        proc_id = decode_procedure_result_request(ctx.call.request)
        with self._lock:
            result = self._procedures.get(proc_id, ProcedureResult(PROCEDURE_NOT_FOUND))
        return procedure_result_response(result), b""

    def cluster_status(self, ctx: CallContext) -> tuple[bytes, bytes]:
        live = self.servers.live_servers()
        regions = {s.name: tuple(self.servers.hosted(s.slot)) for s in live}
        status = ClusterStatus(
            VERSION_INFO.version, self.cluster_id, self.name, (),
            tuple(ServerStatus(s.name, len(regions[s.name]), 0, 0, 0) for s in live),
            tuple(s.name for s in self.servers.servers if not s.alive), 0)
        return cluster_status_response(status, regions), b""


def _registered(signature: str, class_name: str) -> None:
    """Refuse a distributed procedure other than ``flush-table-proc``, as HBase refuses one
    not registered (``online-snapshot`` is HBase's but not served here)."""
    if signature != FLUSH_TABLE_PROC:
        served = " (not served by the embedded cluster)" if signature in REGISTERED else ""
        raise ServiceError(class_name, f"The procedure is not registered: {signature}"
                           f"{served}", do_not_retry=class_name == DO_NOT_RETRY)


def _namespace(table: str) -> str:
    return table.partition(":")[0] if ":" in table else "default"
