"""``NativeAdmin``: a cluster's admin calls over HBase's own RPC, no gateway and no JVM:
``MasterService`` on the active master (namespaces, table descriptors, create with split
keys, enable, disable, delete, snapshots, clone, restore, cluster status) and, through
``server_admin.RegionServerAdmin``, ``AdminService`` on the region servers (flush, major
compaction waited for, WAL roll, region info and load, online regions).

The master is the one ZooKeeper names (``<znode_parent>/master``). A call that finds no
master, a master gone (connection refused or broken) or stopping
(``MasterStoppedException``), or one not ready (``MasterNotRunningException``,
``PleaseHoldException``, ``ServerNotRunningYetException``)
is sent again, after backing off, to whichever master ZooKeeper names then, for at most
``master_wait`` seconds. Calls that start a procedure carry a nonce (this client's group,
one number per operation), so the same call sent again to a new master is the same
procedure, as in HBase's client. Procedures, snapshots and compactions are waited for
(``getProcedureResult``, ``IsSnapshotDone``, ``GetRegionInfo``'s compaction state) for at
most ``wait_timeout`` seconds. Every failure is one ``AdminCallError`` line naming the call,
its table or snapshot, and the server.
"""

from __future__ import annotations

import logging
import secrets
import sys
import threading
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Self

from kazoo.exceptions import NoNodeError

from hbase_migrate.cluster.admin import SnapshotInfo
from hbase_migrate.cluster.auth.kerberos import KerberosError
from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.cluster.errors import ClusterError, ZooKeeperNeverAnsweredError
from hbase_migrate.cluster.retry import Backoff, Kind, Retry
from hbase_migrate.cluster.schema import Namespace
from hbase_migrate.cluster.zk.zookeeper import HBaseZooKeeper
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.rpc.connection import DEFAULT_CALL_TIMEOUT, Connection, Pool
from hbase_migrate.rpc.errors import RemoteError, RpcConnectionError, RpcError
from hbase_migrate.rpc.locate import Locator, RegionLocator
from hbase_migrate.rpc.master_calls import (
    PROCEDURE_NOT_FOUND,
    Nonce,
    create_namespace_request,
    create_table_request,
    decode_namespaces,
    decode_proc_id,
    decode_procedure_result,
    decode_table_descriptors,
    decode_table_state,
    decode_zk_table_state,
    get_table_descriptors_request,
    procedure_result_request,
    table_request,
)
from hbase_migrate.rpc.registry import RegistryError, RpcRegistry
from hbase_migrate.rpc.server_admin import (
    AdminCallError,
    RegionServerAdmin,
    remote_reason,
)
from hbase_migrate.rpc.snapshots import (
    SNAPSHOT_FLUSH,
    SNAPSHOT_SKIPFLUSH,
    decode_completed_snapshots,
    decode_is_snapshot_done,
    decode_restore_snapshot_response,
    decode_snapshot_response,
    described_request,
    restore_snapshot_request,
    snapshot_description,
    snapshot_request,
)
from hbase_migrate.rpc.status import ClusterStatus, cluster_status_request, decode_cluster_status
from hbase_migrate.wal.names import ServerName

log = logging.getLogger(__name__)

MASTER_SERVICE = "MasterService"
# Polls of a procedure or snapshot: doubling from 50 ms to at most this, so that a wait
# ends within a quarter of a second of its end (HBase's own client pauses 100 ms, then more).
POLL_CAP = 0.25
TABLE_NOT_FOUND = "org.apache.hadoop.hbase.TableNotFoundException"
DO_NOT_RETRY = "org.apache.hadoop.hbase.DoNotRetryIOException"


def _unknown_method(exc: AdminCallError, method: str) -> bool:
    """Whether the master lacks ``method`` (HBase 1.x: ``GetTableState``, a 2.0 call). Its
    RPC server answers a method its service does not have with a DoNotRetryIOException that
    says "unable to read call parameter ...; java.lang.UnsupportedOperationException:
    <method>" (``RpcServer``), the one way it tells."""
    return (exc.class_name == DO_NOT_RETRY
            and f"UnsupportedOperationException: {method}" in str(exc))


class SplitKeysError(HBaseMigrateError, ValueError):
    """Split keys HBase would refuse (an empty one, one given twice): nothing is sent."""


class _NoMaster(RpcError):
    """ZooKeeper names no active master (yet)."""


class NativeAdmin(RegionServerAdmin):
    """Admin calls on the cluster of ZooKeeper ``quorum`` / ``znode_parent``; thread-safe.
    ``locator``: a region locator to share (a ``NativeClient``'s), else one of its own."""

    def __init__(self, quorum: str, znode_parent: str = "/hbase", *, user: str | None = None,
                 call_timeout: float = DEFAULT_CALL_TIMEOUT, wait_timeout: float = 600.0,
                 master_wait: float = 120.0, zk_timeout: float = 10.0,
                 locator: RegionLocator | None = None, security: ClusterSecurity | None = None,
                 cluster: str = "", registry: RpcRegistry | None = None,
                 bootstrap: Sequence[tuple[str, int]] = ()) -> None:
        """``security`` (of the cluster named ``cluster``): SASL on ZooKeeper and the
        master's and region servers' connections when Kerberos. ``registry`` (or the
        ``locator``'s, or one of its own asking the ``bootstrap`` servers): the active
        master and meta from HBase's RPC registry, not ZooKeeper."""
        self._own_registry = registry is None and locator is None and bool(bootstrap)
        if self._own_registry:
            registry = RpcRegistry(bootstrap, user=user, call_timeout=call_timeout,
                                   security=security, cluster=cluster)
        self.registry = registry or getattr(locator, "registry", None)
        self.quorum, self.znode_parent, self.zk_timeout = quorum, znode_parent, zk_timeout
        self.user, self.call_timeout = user, call_timeout
        self.master_wait = master_wait
        self._own_pool: Pool | None = None  # the pool of a locator of its own, closed with it
        if locator is None:
            self._own_pool = Pool(user=user, call_timeout=call_timeout, security=security,
                                  cluster=cluster)
            locator = Locator(quorum, znode_parent, self._own_pool, zk_timeout, self.registry)
        super().__init__(locator, user=user, call_timeout=call_timeout, wait_timeout=wait_timeout,
                         security=security, cluster=cluster)
        self._lock = threading.Lock()
        self._connecting = threading.Lock()
        self._master: Connection | None = None
        self.master_server: ServerName | None = None
        self.failovers = 0  # times a call went on to another master
        self._nonce_group = secrets.randbits(63)
        self._zk_table_states = False  # the master has no GetTableState (HBase 1.x)

    # --- the master ---------------------------------------------------------------------

    def active_master(self) -> ServerName:
        """The active master ZooKeeper (or the registry) names now."""
        if self.registry is not None:
            try:
                return self.registry.active_master()
            except RegistryError as exc:
                raise _NoMaster(str(exc)) from None
        with HBaseZooKeeper(self.quorum, self.znode_parent, self.zk_timeout,
                            security=self.servers.security,
                            cluster=self.servers.cluster) as zk:
            master = zk.master()
        if master is None:
            raise _NoMaster(f"ZooKeeper {self.quorum}: no {self.znode_parent}/master")
        return master

    def _master_connection(self) -> Connection:
        """The connection to the active master, made (one thread at a time) when there is
        none or it broke."""
        with self._connecting:
            with self._lock:
                if self._master is not None and not self._master.closed:
                    return self._master
            master = self.active_master()
            conn = Connection(master.host, master.port, service=MASTER_SERVICE,
                              user=self.user, call_timeout=self.call_timeout,
                              security=self.servers.security, cluster=self.servers.cluster)
            with self._lock:
                if self.master_server is not None and self.master_server != master:
                    self.failovers += 1
                    log.info("active master is now %s (was %s)", master, self.master_server)
                old, self._master, self.master_server = self._master, conn, master
            if old is not None:
                old.close()
            return conn

    def _forget_master(self) -> None:
        with self._lock:
            conn, self._master = self._master, None
        if conn is not None:
            conn.close()

    def _master_text(self) -> str:
        return f"master {self.master_server or '(none found)'}"

    def master_call(self, method: str, request: bytes, what: str) -> bytes:
        """Call ``method`` on the active master, riding out a failover; the response."""
        def give_up(exc: Exception, kind: Kind, tried: str) -> Exception:
            if kind is Kind.NEVER and isinstance(exc, RemoteError):
                return AdminCallError(method, what, self._master_text(), remote_reason(exc),
                                      exc.class_name)
            return AdminCallError(method, what, self._master_text(),
                                  f"still failing after {self.master_wait:g} s of retries "
                                  f"(last: {exc})")

        retry = Retry(f"{method} {what}", give_up, attempts=sys.maxsize, backoff=0.1,
                      max_backoff=2.0, deadline=self.master_wait)
        while True:
            try:
                return self._master_connection().call(method, request).response or b""
            except RemoteError as exc:
                if exc.retryable and exc.kind is not Kind.RETRY:
                    self._forget_master()  # a master going away: ask ZooKeeper again
                retry.failed(exc, exc.kind if exc.retryable else Kind.NEVER)
            except (KerberosError, ZooKeeperNeverAnsweredError):  # asking again cannot help
                raise
            except (RpcConnectionError, _NoMaster, ClusterError) as exc:
                self._forget_master()
                retry.failed(exc, Kind.OUTAGE)

    def _procedure(self, method: str, request_for: Callable[[Nonce], bytes], what: str,
                   wait: bool = True) -> int | None:
        """Start a procedure (one nonce for every sending) and wait for its end."""
        nonce = Nonce(self._nonce_group, secrets.randbits(63))
        proc_id = decode_proc_id(self.master_call(method, request_for(nonce), what),
                                 f"{method}Response")
        if wait and proc_id is not None:
            self.wait_procedure(proc_id, method, what)
        return proc_id

    def wait_procedure(self, proc_id: int, call: str, what: str) -> None:
        """Wait until procedure ``proc_id`` finished; its failure raised as AdminCallError."""
        backoff = Backoff(self.wait_timeout, cap=POLL_CAP)
        while True:
            result = decode_procedure_result(self.master_call(
                "getProcedureResult", procedure_result_request(proc_id), what))
            if result.finished:
                if result.error:
                    raise AdminCallError(call, what, self._master_text(),
                                         f"procedure {proc_id} failed: {result.error}",
                                         result.error.partition(":")[0])
                return
            if result.state == PROCEDURE_NOT_FOUND:
                raise AdminCallError(call, what, self._master_text(),
                                     f"procedure {proc_id} is unknown to the master")
            if not backoff.sleep():
                raise AdminCallError(call, what, self._master_text(),
                                     f"procedure {proc_id} still running after "
                                     f"{self.wait_timeout:g} s")

    # --- namespaces and tables ----------------------------------------------------------

    def namespaces(self) -> list[str]:
        return sorted(n.name for n in decode_namespaces(
            self.master_call("ListNamespaceDescriptors", b"", "(all namespaces)")))

    def create_namespace(self, name: str) -> None:
        self._procedure("CreateNamespace",
                        lambda n: create_namespace_request(Namespace(name), n),
                        f"namespace {name}")

    def table_descriptor(self, table: str) -> TableDescriptor:
        found = decode_table_descriptors(self.master_call(
            "GetTableDescriptors", get_table_descriptors_request([table]), f"table {table}"))
        if not found:
            raise AdminCallError("GetTableDescriptors", f"table {table}", self._master_text(),
                                 "no such table", TABLE_NOT_FOUND)
        return found[0]

    def table_descriptors(self, namespace: str | None = None) -> list[TableDescriptor]:
        """Every user table's descriptor (of one namespace)."""
        return decode_table_descriptors(self.master_call(
            "GetTableDescriptors", get_table_descriptors_request(namespace=namespace),
            f"namespace {namespace or '(all)'}"))

    def table_state(self, table: str) -> str | None:
        """``ENABLED``, ``DISABLED``, ``DISABLING``, ``ENABLING``; None: no such table."""
        if not self._zk_table_states:
            try:
                return decode_table_state(self.master_call(
                    "GetTableState", table_request(table), f"table {table}"))
            except AdminCallError as exc:
                if exc.class_name == TABLE_NOT_FOUND:
                    return None
                if not _unknown_method(exc, "GetTableState"):
                    raise
                self._zk_table_states = True  # an HBase 1.x master
        return self._zk_table_state(table)

    def _zk_table_state(self, table: str) -> str | None:
        """A 1.x master's table state: the table exists if the master has its descriptor;
        its state is in ZooKeeper (``<znode_parent>/table/<table>``; none: enabled)."""
        if not decode_table_descriptors(self.master_call(
                "GetTableDescriptors", get_table_descriptors_request([table]),
                f"table {table}")):
            return None
        with HBaseZooKeeper(self.quorum, self.znode_parent, self.zk_timeout) as zk:
            try:
                data, _ = zk.client.get(zk.path("table", table))
            except NoNodeError:
                data = b""
        return decode_zk_table_state(data, table)

    def table_exists(self, table: str) -> bool:
        return self.table_state(table) is not None

    def is_table_enabled(self, table: str) -> bool:
        state = self.table_state(table)
        if state is None:
            raise AdminCallError("GetTableState", f"table {table}", self._master_text(),
                                 "no such table", TABLE_NOT_FOUND)
        return state == "ENABLED"

    def create_table(self, desc: TableDescriptor, split_keys: Sequence[bytes] = ()) -> None:
        """Create ``desc`` with its regions split at ``split_keys`` (in any order; none
        empty, none twice, as HBase's client checks); returns once every region is open."""
        keys = sorted(split_keys)
        if b"" in keys or len(set(keys)) != len(keys):
            twice = sorted({k for k in keys if keys.count(k) > 1})
            raise SplitKeysError(f"table {desc.name}: split keys must be non-empty and distinct "
                             f"(empty: {b'' in keys}, given twice: {twice})")
        self._procedure("CreateTable", lambda n: create_table_request(desc, keys, n),
                        f"table {desc.name}")

    def enable_table(self, table: str) -> None:
        self._procedure("EnableTable", lambda n: table_request(table, n), f"table {table}")

    def disable_table(self, table: str) -> None:
        self._procedure("DisableTable", lambda n: table_request(table, n), f"table {table}")

    def delete_table(self, table: str) -> None:
        self._procedure("DeleteTable", lambda n: table_request(table, n), f"table {table}")

    def drop(self, table: str) -> None:
        """Disable (unless disabled) and delete ``table``."""
        if self.table_state(table) != "DISABLED":
            self.disable_table(table)
        self.delete_table(table)

    # --- snapshots ----------------------------------------------------------------------

    def snapshot(self, table: str, name: str, ttl_seconds: int = 0, *,
                 flush: bool = True) -> None:
        """Take snapshot ``name`` of ``table`` (flushed first unless ``flush`` is False)
        expiring after ``ttl_seconds`` (0: never); returns once it is complete."""
        what = f"snapshot {name} of table {table}"
        desc = snapshot_description(name, table, ttl_seconds,
                                    SNAPSHOT_FLUSH if flush else SNAPSHOT_SKIPFLUSH)
        nonce = Nonce(self._nonce_group, secrets.randbits(63))
        started = decode_snapshot_response(
            self.master_call("Snapshot", snapshot_request(desc, nonce), what))
        if started.proc_id is not None:
            self.wait_procedure(started.proc_id, "Snapshot", what)
            return
        backoff = Backoff(self.wait_timeout, cap=POLL_CAP)
        while not self.snapshot_done(name, table, what):
            if not backoff.sleep():
                raise AdminCallError("Snapshot", what, self._master_text(),
                                     f"not done after {self.wait_timeout:g} s")

    def snapshot_done(self, name: str, table: str = "", what: str = "") -> bool:
        """Whether snapshot ``name`` is complete (the master raises its failure)."""
        return decode_is_snapshot_done(self.master_call(
            "IsSnapshotDone", described_request(snapshot_description(name, table)),
            what or f"snapshot {name}"))

    def snapshots(self, prefix: str = "") -> list[SnapshotInfo]:
        """The completed snapshots whose names start with ``prefix``, by name."""
        every = decode_completed_snapshots(
            self.master_call("GetCompletedSnapshots", b"", f"snapshots {prefix}*"))
        return sorted((s for s in every if s.name.startswith(prefix)), key=lambda s: s.name)

    def delete_snapshot(self, name: str) -> None:
        self.master_call("DeleteSnapshot", described_request(snapshot_description(name)),
                         f"snapshot {name}")

    def clone_snapshot(self, name: str, table: str) -> None:
        """Create ``table`` (which must not exist) from snapshot ``name``."""
        self._restore(name, table, "clone of")

    def restore_snapshot(self, name: str, table: str) -> None:
        """Put ``table`` (disabled) back to snapshot ``name``."""
        self._restore(name, table, "restore of")

    def _restore(self, name: str, table: str, verb: str) -> None:
        what = f"{verb} snapshot {name} into table {table}"
        nonce = Nonce(self._nonce_group, secrets.randbits(63))
        request = restore_snapshot_request(snapshot_description(name, table), nonce)
        proc_id = decode_restore_snapshot_response(
            self.master_call("RestoreSnapshot", request, what))
        self.wait_procedure(proc_id, "RestoreSnapshot", what)

    def cluster_status(self) -> ClusterStatus:
        return decode_cluster_status(
            self.master_call("GetClusterStatus", cluster_status_request(), "cluster status"))

    def master_security(self) -> dict[str, Any]:
        """The security of the connection to the active master, as negotiated
        (``Connection.observed``), and the master's name."""
        conn = self._master_connection()
        return {"server": str(self.master_server), **conn.observed}

    def roll_wals(self) -> list[ServerName]:
        """Ask every live region server to roll its WALs (see ``roll_wal``); the servers
        asked."""
        servers = [s.server for s in self.cluster_status().live_servers]
        for server in servers:
            self.roll_wal(server.host, server.port)
        return servers

    def read_requests(self, table: str) -> int:
        """The read requests ``table``'s online regions have served, as their region servers
        count them now (each region's ``readRequestsCount`` in ``GetRegionLoad``): what
        shows whether a step read the table on its region servers."""
        regions = self.locator.regions(table)
        names = {r.name for r in regions}
        return sum(load.read_requests for host, port in {(r.host, r.port) for r in regions}
                   for load in self.region_loads(host, port, table) if load.region in names)

    # --- life -----------------------------------------------------------------------------

    def close(self) -> None:
        self._forget_master()
        super().close()
        if self._own_pool is not None:
            self._own_pool.close()
        if self._own_registry and self.registry is not None:
            self.registry.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


