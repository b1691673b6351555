"""``NativeAdmin``: a cluster's admin calls over HBase's own RPC, no gateway and no JVM:
``MasterService`` on the active master (namespaces, table descriptors, create with split
keys, enable, disable, delete, snapshots, clone, restore, cluster status) and
``AdminService`` on the region servers (flush, major compaction waited for, WAL roll,
region info, online regions).

The master is the one ZooKeeper names (``<znode_parent>/master``). A call that finds no
master, a master gone (connection refused or broken), or one not ready
(``MasterNotRunningException``, ``PleaseHoldException``, ``ServerNotRunningYetException``)
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
import threading
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Self

from hbase_migrate.cluster.admin import SnapshotInfo
from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.cluster.errors import ClusterError
from hbase_migrate.cluster.zookeeper import HBaseZooKeeper
from hbase_migrate.rpc.connection import DEFAULT_CALL_TIMEOUT, Connection, Pool
from hbase_migrate.rpc.errors import Kind, RemoteError, RpcConnectionError, RpcError
from hbase_migrate.rpc.locate import Locator, Region
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
    get_table_descriptors_request,
    procedure_result_request,
    table_request,
)
from hbase_migrate.rpc.region_admin import (
    RegionState,
    compact_region_request,
    decode_flush_response,
    decode_online_regions,
    decode_region_info_response,
    decode_roll_response,
    flush_region_request,
    region_info_request,
)
from hbase_migrate.rpc.schema import Namespace
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
ADMIN_SERVICE = "AdminService"
TABLE_NOT_FOUND = "org.apache.hadoop.hbase.TableNotFoundException"
REGION_ATTEMPTS = 8  # region server calls: relocations before giving up


class AdminCallError(RpcError):
    """An admin call that failed for good: names the call, what it was about (table,
    snapshot, namespace, region) and the server; ``class_name`` is HBase's exception class
    when the server raised one."""

    def __init__(self, call: str, what: str, server: str, reason: str,
                 class_name: str = "") -> None:
        self.call, self.what, self.server, self.class_name = call, what, server, class_name
        super().__init__(f"{call} {what}, {server}: {reason}")


class _NoMaster(RpcError):
    """ZooKeeper names no active master (yet)."""


class _Backoff:
    """Doubling sleeps up to ``cap`` until ``seconds`` have passed."""

    def __init__(self, seconds: float, first: float = 0.05, cap: float = 1.0) -> None:
        self.deadline = time.monotonic() + seconds
        self.delay, self.cap = first, cap

    def sleep(self) -> bool:
        """Sleep once (at most until the deadline); False when the time is spent."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(self.delay, left))
        self.delay = min(self.delay * 2, self.cap)
        return True


class NativeAdmin:
    """Admin calls on the cluster of ZooKeeper ``quorum`` / ``znode_parent``; thread-safe.
    ``locator``: a region locator to share (a ``NativeClient``'s), else one of its own."""

    def __init__(self, quorum: str, znode_parent: str = "/hbase", *, user: str | None = None,
                 call_timeout: float = DEFAULT_CALL_TIMEOUT, wait_timeout: float = 600.0,
                 master_wait: float = 120.0, zk_timeout: float = 10.0,
                 locator: Locator | None = None) -> None:
        self.quorum, self.znode_parent, self.zk_timeout = quorum, znode_parent, zk_timeout
        self.user, self.call_timeout = user, call_timeout
        self.wait_timeout, self.master_wait = wait_timeout, master_wait
        self.servers = Pool(user=user, call_timeout=call_timeout, service=ADMIN_SERVICE)
        self._own_locator = locator is None
        self.locator = locator or Locator(quorum, znode_parent,
                                          Pool(user=user, call_timeout=call_timeout),
                                          zk_timeout)
        self._lock = threading.Lock()
        self._master: Connection | None = None
        self.master_server: ServerName | None = None
        self.failovers = 0  # times a call went on to another master
        self._nonce_group = secrets.randbits(63)

    # --- the master ---------------------------------------------------------------------

    def active_master(self) -> ServerName:
        """The active master ZooKeeper names now."""
        with HBaseZooKeeper(self.quorum, self.znode_parent, self.zk_timeout) as zk:
            master = zk.master()
        if master is None:
            raise _NoMaster(f"ZooKeeper {self.quorum}: no {self.znode_parent}/master")
        return master

    def _master_connection(self) -> Connection:
        with self._lock:
            if self._master is not None and not self._master.closed:
                return self._master
        master = self.active_master()
        conn = Connection(master.host, master.port, service=MASTER_SERVICE, user=self.user,
                          call_timeout=self.call_timeout)
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
        backoff = _Backoff(self.master_wait, 0.1, 2.0)
        while True:
            try:
                return self._master_connection().call(method, request).response or b""
            except RemoteError as exc:
                if not exc.retryable:
                    raise AdminCallError(method, what, self._master_text(),
                                         f"{exc.class_name}: {exc.detail}",
                                         exc.class_name) from exc
                if exc.kind is not Kind.RETRY:  # a master going away: ask ZooKeeper again
                    self._forget_master()
                last: Exception = exc
            except (RpcConnectionError, _NoMaster, ClusterError) as exc:
                self._forget_master()
                last = exc
            if not backoff.sleep():
                raise AdminCallError(method, what, self._master_text(),
                                     f"no master answered within {self.master_wait:g} s "
                                     f"(last: {last})") from last
            log.debug("%s %s: %s; asking again", method, what, last)

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
        backoff = _Backoff(self.wait_timeout)
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
        try:
            return decode_table_state(self.master_call(
                "GetTableState", table_request(table), f"table {table}"))
        except AdminCallError as exc:
            if exc.class_name == TABLE_NOT_FOUND:
                return None
            raise

    def table_exists(self, table: str) -> bool:
        return self.table_state(table) is not None

    def create_table(self, desc: TableDescriptor, split_keys: Sequence[bytes] = ()) -> None:
        """Create ``desc`` with its regions split at ``split_keys``; returns once every
        region is open."""
        self._procedure("CreateTable",
                        lambda n: create_table_request(desc, sorted(split_keys), n),
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
        backoff = _Backoff(self.wait_timeout)
        while not self.snapshot_done(name, table):
            if not backoff.sleep():
                raise AdminCallError("Snapshot", what, self._master_text(),
                                     f"not done after {self.wait_timeout:g} s")

    def snapshot_done(self, name: str, table: str = "") -> bool:
        """Whether snapshot ``name`` is complete (the master raises its failure)."""
        return decode_is_snapshot_done(self.master_call(
            "IsSnapshotDone", described_request(snapshot_description(name, table)),
            f"snapshot {name}"))

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

    # --- region servers -----------------------------------------------------------------

    def server_call(self, host: str, port: int, method: str, request: bytes, what: str
                    ) -> bytes:
        """One ``AdminService`` call on region server ``host:port``; the response."""
        try:
            return self.servers.get(host, port).call(method, request).response or b""
        except RpcConnectionError:
            self.servers.drop(host, port)
            raise

    def each_region(self, table: str, method: str, call: Callable[[Region], object]) -> None:
        """Run ``call`` on every region of ``table``; regions that moved or split while
        at it are located again and their successors called."""
        pending = self.locator.regions(table)
        for attempt in range(REGION_ATTEMPTS):
            failed: list[Region] = []
            for region in pending:
                try:
                    call(region)
                except RemoteError as exc:
                    if exc.kind is not Kind.RELOCATE and not (
                            exc.retryable and attempt < REGION_ATTEMPTS - 1):
                        raise AdminCallError(method, f"table {table} region {region.encoded}",
                                             f"server {region.server}",
                                             f"{exc.class_name}: {exc.detail}",
                                             exc.class_name) from exc
                    failed.append(region)
                except RpcConnectionError:
                    failed.append(region)
            if not failed:
                return
            time.sleep(min(0.1 * 2 ** attempt, 2.0))
            pending = [r for r in self.locator.regions(table)
                       if any(_overlap(r, f) for f in failed)]
        raise AdminCallError(method, f"table {table}", "its region servers",
                             f"regions still moving after {REGION_ATTEMPTS} attempts")

    def flush(self, table: str) -> None:
        """Flush every region of ``table`` (its memstores to HFiles)."""
        def flush_one(region: Region) -> object:
            return decode_flush_response(self.server_call(
                region.host, region.port, "FlushRegion", flush_region_request(region.name),
                f"region {region.encoded}"))
        self.each_region(table, "FlushRegion", flush_one)

    def compact(self, table: str, *, major: bool = True, wait: bool = True) -> None:
        """Compact every region of ``table`` (major: into one file per store); with
        ``wait``, return once no region reports a compaction."""
        def compact_one(region: Region) -> object:
            return self.server_call(region.host, region.port, "CompactRegion",
                                    compact_region_request(region.name, major),
                                    f"region {region.encoded}")
        self.each_region(table, "CompactRegion", compact_one)
        if not wait:
            return
        backoff = _Backoff(self.wait_timeout, 0.1, 1.0)
        busy = ["?"]
        while busy:
            busy.clear()
            self.each_region(table, "GetRegionInfo", lambda r: busy.append(r.encoded)
                             if self.region_state(r).compaction != "NONE" else None)
            if busy and not backoff.sleep():
                raise AdminCallError("CompactRegion", f"table {table}", "its region servers",
                                     f"regions {', '.join(busy)} still compacting after "
                                     f"{self.wait_timeout:g} s")

    def region_state(self, region: Region) -> RegionState:
        """A region as its server reports it, with its compaction state."""
        return decode_region_info_response(
            self.server_call(region.host, region.port, "GetRegionInfo",
                             region_info_request(region.name), f"region {region.encoded}"),
            region.host, region.port)

    def online_regions(self, host: str, port: int) -> list[Region]:
        """The regions region server ``host:port`` holds now."""
        return decode_online_regions(
            self.server_call(host, port, "GetOnlineRegion", b"", "online regions"), host, port)

    def roll_wal(self, host: str, port: int) -> tuple[bytes, ...]:
        """Roll region server ``host:port``'s WAL; the regions it asks to be flushed."""
        try:
            return decode_roll_response(
                self.server_call(host, port, "RollWALWriter", b"", "WAL roll"))
        except RemoteError as exc:
            raise AdminCallError("RollWALWriter", "WAL roll", f"server {host}:{port}",
                                 f"{exc.class_name}: {exc.detail}", exc.class_name) from exc

    def roll_wals(self) -> list[ServerName]:
        """Roll the WAL of every live region server; the servers rolled."""
        servers = [s.server for s in self.cluster_status().live_servers]
        for server in servers:
            self.roll_wal(server.host, server.port)
        return servers

    # --- life -----------------------------------------------------------------------------

    def close(self) -> None:
        self._forget_master()
        self.servers.close()
        if self._own_locator:
            self.locator.pool.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _overlap(a: Region, b: Region) -> bool:
    return (not a.end or b.start < a.end) and (not b.end or a.start < b.end)
