"""``MasterService`` of the embedded master: namespaces, table descriptors, create (with
split keys), enable, disable and delete, table state, procedure results and the cluster
status, as ``MasterRpcServices`` answers them.

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
from collections.abc import Callable

from hbase_migrate.rpc.master_calls import (
    PROCEDURE_FINISHED,
    PROCEDURE_NOT_FOUND,
    Nonce,
    ProcedureResult,
    decode_create_namespace_request,
    decode_create_table_request,
    decode_get_table_descriptors_request,
    decode_procedure_result_request,
    decode_table_request,
    master_running_response,
    namespaces_response,
    proc_id_response,
    procedure_result_response,
    table_descriptors_response,
    table_state_response,
)
from hbase_migrate.rpc.schema import Namespace
from hbase_migrate.rpc.status import ClusterStatus, ServerStatus, cluster_status_response
from hbase_migrate.wal.names import ServerName
from minihbase.cluster import Cluster
from minihbase.regionserver import RegionServers
from minihbase.rpc.listener import CallContext, Handler
from minihbase.zkregistry import VERSION_INFO


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
        self._lock = threading.Lock()

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
        }}

    def _procedure(self, nonce: Nonce | None, run: Callable[[], object]) -> tuple[bytes, bytes]:
        """Run a procedure once per nonce; reply with its id."""
        with self._lock:
            if nonce is not None and nonce in self._nonces:
                return proc_id_response(self._nonces[nonce]), b""
            submitted = self.cluster.clock()
            run()
            proc_id = next(self._ids)
            self._procedures[proc_id] = ProcedureResult(PROCEDURE_FINISHED, "", submitted,
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

    def table_descriptors(self, ctx: CallContext) -> tuple[bytes, bytes]:
        """The named tables (an unknown one is left out, as HBase does), or every table
        matching the regex / namespace; system tables only when asked."""
        req = decode_get_table_descriptors_request(ctx.call.request)
        if req.tables:
            infos = [self.cluster.table(t) for t in req.tables
                     if self.cluster.store.has_table(t)]
        else:
            pattern = re.compile(req.regex) if req.regex else None
            infos = [i for i in self.cluster.store.tables()
                     if (req.namespace is None or _namespace(i.name) == req.namespace)
                     and (pattern is None or pattern.fullmatch(i.name))]
        return table_descriptors_response([i.descriptor for i in infos]), b""

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


def _namespace(table: str) -> str:
    return table.partition(":")[0] if ":" in table else "default"
