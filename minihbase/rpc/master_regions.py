"""Region calls of the embedded master, as HBase 2.6's ``MasterRpcServices`` and ``HMaster``
answer them, over the moves and splits the project's fault injection already makes
(``RegionServers.move``, ``RegionServers.split``):

* ``MoveRegion`` (``Admin.move``): the region (encoded or full name) to the server named,
  or to another live one; a region unknown gets ``UnknownRegionException``, a move to the
  server already holding it does nothing, a cluster with no other server
  ``HBaseIOException``; done before the reply;
* ``SplitRegion`` (a ``SplitTableRegionRequest``, ``Admin.split``): a procedure run
  before the reply; a split row equal to the region's start key or outside it is refused
  in the call with HBase's messages, a split without a row (HBase's own choice of
  midpoint) is not served;
* ``SetBalancerRunning``, ``IsBalancerEnabled`` and ``Balance``: the switch (on at start,
  as HBase's), and a balancer that moves user regions from the busiest live server to the
  idlest until they differ by one at most (``dry_run``: counted, not moved).
"""

from __future__ import annotations

import threading

from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.cluster.schema import table_from_message
from hbase_migrate.rpc.locate import encoded_name
from hbase_migrate.rpc.master_calls import Nonce
from hbase_migrate.rpc.messages import decode_region_specifier
from hbase_migrate.wal.protobuf import Message, varint_field
from minihbase.cluster import Cluster
from minihbase.regionserver import RegionServer, RegionServers
from minihbase.rpc.listener import DO_NOT_RETRY, CallContext, H, Handler, ServiceError
from minihbase.rpc.master_schema import Procedure

REGION_NAME = 1  # RegionSpecifier types
ENCODED_REGION_NAME = 2


class MasterRegions:
    """The region calls over ``cluster`` and its ``servers``."""

    def __init__(self, cluster: Cluster, servers: RegionServers, procedure: Procedure) -> None:
        self.cluster = cluster
        self.servers = servers
        self.procedure = procedure
        self.balancer_on = True
        self._lock = threading.Lock()

    def handlers(self) -> dict[str, Handler]:
        return {"MoveRegion": self.move, "SplitRegion": self.split,
                "SetBalancerRunning": self.set_balancer, "IsBalancerEnabled": self.is_balancer,
                "Balance": self.balance}

    def _regions(self) -> dict[str, RegionDescriptor]:
        return {r.encoded_name: r for info in self.cluster.store.tables()
                for r in self.cluster.regions(info.name)}

    def move(self, ctx: CallContext) -> tuple[bytes, bytes]:
        m = Message(ctx.call.request, "MoveRegionRequest")
        kind, name = decode_region_specifier(m.req_bytes(1, "region"))
        encoded = (name.decode("latin-1") if kind == ENCODED_REGION_NAME
                   else encoded_name(name))
        region = self._regions().get(encoded)
        if region is None:
            raise ServiceError(H + "UnknownRegionException", encoded, do_not_retry=True)
        host, port, _ = self.servers.server_of(region)
        dest = self._server(m.opt_bytes(2))
        if dest is None:  # HBase picks another live server at random
            others = [s for s in self.servers.live_servers()
                      if (s.name.host, s.name.port) != (host, port)]
            if not others:
                raise ServiceError(H + "HBaseIOException", "Unable to determine a plan to "
                                   f"assign region {region.encoded_name}")
            dest = others[0]
        if (dest.name.host, dest.name.port) != (host, port):
            self.servers.move(encoded, dest.slot)
        return b"", b""

    def _server(self, data: bytes | None) -> RegionServer | None:
        """The live server a ServerName names (None: none named, or not online)."""
        if data is None:
            return None
        m = Message(data, "ServerName")
        host, port, code = m.req_str(1, "host_name"), m.opt_int(2), m.opt_int(3)
        return next((s for s in self.servers.live_servers()
                     if (s.name.host, s.name.port) == (host, port)
                     and code in (None, s.name.start_code)), None)

    def split(self, ctx: CallContext) -> tuple[bytes, bytes]:
        m = Message(ctx.call.request, "SplitTableRegionRequest")
        info = Message(m.req_bytes(1, "region_info"), "RegionInfo")
        table = table_from_message(info.req_bytes(2, "table_name"))
        start, region_id = info.opt_bytes(3) or b"", info.req_int(1, "region_id")
        region = next((r for r in self.cluster.regions(table)
                       if r.start_key == start and r.region_id == region_id), None)
        if region is None:
            raise ServiceError(H + "UnknownRegionException",
                               f"{table},{start.decode('latin-1')},{region_id}",
                               do_not_retry=True)
        row = m.opt_bytes(2)
        if not row:
            raise ServiceError(DO_NOT_RETRY, "a split without a split row is not served by "
                               "the embedded cluster: name the row", do_not_retry=True)
        if row == region.start_key:
            raise ServiceError(DO_NOT_RETRY, f"Split row is equal to startkey: {row!r}",
                               do_not_retry=True)
        if not region.contains(row):
            raise ServiceError(DO_NOT_RETRY, f"Split row is not inside region key range "
                               f"splitKey:{row!r} region: {region.encoded_name}",
                               do_not_retry=True)
        group, nonce = m.opt_int(3), m.opt_int(4)
        return self.procedure(Nonce(group or 0, nonce) if nonce else None,
                              lambda: self.servers.split(region.encoded_name, row))

    def set_balancer(self, ctx: CallContext) -> tuple[bytes, bytes]:
        on = bool(Message(ctx.call.request, "SetBalancerRunningRequest").req_int(1, "on"))
        with self._lock:
            previous, self.balancer_on = self.balancer_on, on
        return varint_field(1, previous), b""

    def is_balancer(self, ctx: CallContext) -> tuple[bytes, bytes]:
        return varint_field(1, self.balancer_on), b""

    def balance(self, ctx: CallContext) -> tuple[bytes, bytes]:
        dry_run = bool(Message(ctx.call.request, "BalanceRequest").opt_int(2))
        with self._lock:
            if not self.balancer_on and not dry_run:
                return varint_field(1, False), b""
            moves = self._plan()
            if not dry_run:
                for encoded, slot in moves:
                    self.servers.move(encoded, slot)
        return (varint_field(1, True) + varint_field(2, len(moves))
                + varint_field(3, 0 if dry_run else len(moves))), b""

    def _plan(self) -> list[tuple[str, int]]:
        """Moves of user regions from the busiest live server to the idlest, until their
        counts differ by one at most."""
        live = self.servers.live_servers()
        held = {s.slot: sorted(r.encoded_name for r in self.servers.hosted(s.slot).values())
                for s in live}
        moves = []
        while held:
            busiest = max(held, key=lambda slot: (len(held[slot]), -slot))
            idlest = min(held, key=lambda slot: (len(held[slot]), slot))
            if len(held[busiest]) - len(held[idlest]) <= 1:
                break
            region = held[busiest].pop()
            held[idlest].append(region)
            moves.append((region, idlest))
        return moves


