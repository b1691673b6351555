"""``AdminService`` on the region servers, the half of ``NativeAdmin`` that needs no
master: flush, major compaction waited for, WAL roll, region info and load, online regions
(messages in ``region_admin.py``). A table's regions come from ``hbase:meta`` (``Locator``);
a region that moved or split while being called is located again and its successors called.
Also the admin path's one error, ``AdminCallError``; its waits are the one retry loop's
``Backoff`` (:mod:`hbase_migrate.cluster.retry`).
"""

from __future__ import annotations

from collections.abc import Callable

from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.retry import Backoff, Kind, Retry
from hbase_migrate.rpc.connection import DEFAULT_CALL_TIMEOUT, Pool
from hbase_migrate.rpc.errors import RemoteError, RpcConnectionError, RpcError
from hbase_migrate.rpc.locate import Region, RegionLocator
from hbase_migrate.rpc.region_admin import (
    RegionLoad,
    RegionState,
    compact_region_request,
    decode_flush_response,
    decode_online_regions,
    decode_region_info_response,
    decode_region_loads,
    decode_roll_response,
    flush_region_request,
    region_info_request,
    region_load_request,
)

ADMIN_SERVICE = "AdminService"
REGION_ATTEMPTS = 8  # region server calls: relocations before giving up


class AdminCallError(RpcError):
    """An admin call that failed for good: names the call, what it was about (table,
    snapshot, namespace, region) and the server; ``class_name`` is HBase's exception class
    when the server raised one."""

    def __init__(self, call: str, what: str, server: str, reason: str,
                 class_name: str = "") -> None:
        self.call, self.what, self.server, self.class_name = call, what, server, class_name
        super().__init__(f"{call} {what}, {server}: {reason}")


class RegionServerAdmin:
    """``AdminService`` calls on the region servers of the cluster ``locator`` reads;
    waits (compactions) last at most ``wait_timeout`` seconds."""

    def __init__(self, locator: RegionLocator, *, user: str | None = None,
                 call_timeout: float = DEFAULT_CALL_TIMEOUT, wait_timeout: float = 600.0,
                 security: ClusterSecurity | None = None, cluster: str = "") -> None:
        self.locator = locator
        self.wait_timeout = wait_timeout
        self.servers = Pool(user=user, call_timeout=call_timeout, service=ADMIN_SERVICE,
                            security=security, cluster=cluster)

    def server_call(self, host: str, port: int, method: str, request: bytes) -> bytes:
        """One ``AdminService`` call on region server ``host:port``; the response (errors
        name the server and the call)."""
        try:
            return self.servers.get(host, port).call(method, request).response or b""
        except RpcConnectionError:
            self.servers.drop(host, port)
            raise

    def each_region(self, table: str, method: str, call: Callable[[Region], object]) -> None:
        """Run ``call`` on every region of ``table``; regions that moved or split while
        at it are located again and their successors called."""
        pending = self.locator.regions(table)

        def give_up(exc: Exception, kind: Kind, tried: str) -> Exception:
            return AdminCallError(method, f"table {table}", "its region servers",
                                  f"regions still moving or unreachable after "
                                  f"{REGION_ATTEMPTS} attempts (last: {exc})")

        retry = Retry(f"{method} table {table}", give_up, attempts=REGION_ATTEMPTS,
                      backoff=0.1, max_backoff=2.0)
        while True:
            failed: list[Region] = []
            last: Exception | None = None
            for region in pending:
                try:
                    call(region)
                except RemoteError as exc:
                    if exc.kind is not Kind.RELOCATE and not exc.retryable:
                        raise AdminCallError(method, f"table {table} region {region.encoded}",
                                             f"server {region.server}",
                                             remote_reason(exc),
                                             exc.class_name) from exc
                    failed.append(region)
                    last = exc
                except RpcConnectionError as exc:
                    failed.append(region)
                    last = exc
            if last is None:
                return
            retry.failed(last, Kind.RELOCATE)
            pending = [r for r in self.locator.regions(table)
                       if any(_overlap(r, f) for f in failed)]

    def flush(self, table: str) -> None:
        """Flush every region of ``table`` (its memstores to HFiles)."""
        def flush_one(region: Region) -> object:
            return decode_flush_response(self.server_call(
                region.host, region.port, "FlushRegion", flush_region_request(region.name)))
        self.each_region(table, "FlushRegion", flush_one)

    def compact(self, table: str, *, major: bool = True, wait: bool = True) -> None:
        """Compact every region of ``table`` (major: into one file per store); with
        ``wait``, return once no region reports a compaction."""
        def compact_one(region: Region) -> object:
            return self.server_call(region.host, region.port, "CompactRegion",
                                    compact_region_request(region.name, major))
        self.each_region(table, "CompactRegion", compact_one)
        if not wait:
            return
        backoff = Backoff(self.wait_timeout, 0.1, 1.0)
        busy: list[str] = []

        def note_busy(region: Region) -> None:
            if self.region_state(region).compaction != "NONE":
                busy.append(region.encoded)

        while True:
            busy.clear()
            self.each_region(table, "GetRegionInfo", note_busy)
            if not busy:
                return
            if not backoff.sleep():
                raise AdminCallError("CompactRegion", f"table {table}", "its region servers",
                                     f"regions {', '.join(busy)} still compacting after "
                                     f"{self.wait_timeout:g} s")

    def region_state(self, region: Region) -> RegionState:
        """A region as its server reports it, with its compaction state."""
        return decode_region_info_response(
            self.server_call(region.host, region.port, "GetRegionInfo",
                             region_info_request(region.name)),
            region.host, region.port)

    def online_regions(self, host: str, port: int) -> list[Region]:
        """The regions region server ``host:port`` holds now."""
        return decode_online_regions(
            self.server_call(host, port, "GetOnlineRegion", b""), host, port)

    def region_loads(self, host: str, port: int, table: str) -> list[RegionLoad]:
        """The load of ``table``'s regions on region server ``host:port``, counted now."""
        return decode_region_loads(self.server_call(
            host, port, "GetRegionLoad", region_load_request(table)))

    def roll_wal(self, host: str, port: int) -> tuple[bytes, ...]:
        """Ask region server ``host:port`` to roll its WALs; the regions it asks to be
        flushed (HBase 1.x; 2.x names none). HBase 2.x rolls asynchronously: the call
        returns once the roll is requested (as ``Admin.rollWALWriter``), the new WAL
        appears shortly after."""
        try:
            return decode_roll_response(
                self.server_call(host, port, "RollWALWriter", b""))
        except RemoteError as exc:
            raise AdminCallError("RollWALWriter", "WAL roll", f"server {host}:{port}",
                                 remote_reason(exc), exc.class_name) from exc

    def close(self) -> None:
        self.servers.close()


def remote_reason(exc: RemoteError) -> str:
    """``class: message`` of a remote exception (its trace's first line, which most often
    starts with the class already)."""
    if exc.detail.startswith(exc.class_name):
        return exc.detail
    return f"{exc.class_name}: {exc.detail}" if exc.detail else exc.class_name


def _overlap(a: Region, b: Region) -> bool:
    return (not a.end or b.start < a.end) and (not b.end or a.start < b.end)
