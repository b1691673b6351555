"""``MasterService.GetClusterStatus`` (``Master.proto``, ``ClusterStatus.proto``,
``ClusterId.proto``, ``FS.proto`` of HBase branch-2.6): what ``cluster info`` shows of a
cluster's servers, regions and version::

    GetClusterStatusRequest   1 options (repeated enum Option: HBASE_VERSION 0, CLUSTER_ID 1,
                              LIVE_SERVERS 2, DEAD_SERVERS 3, MASTER 4, BACKUP_MASTERS 5,
                              REGIONS_IN_TRANSITION 7, ...; none: every part)
    GetClusterStatusResponse  1 cluster_status
    ClusterStatus             1 hbase_version (HBaseVersionFileContent: 1 version, the
                              master's software version)  2 live_servers (LiveServerInfo)
                              3 dead_servers (ServerName)  4 regions_in_transition
                              5 cluster_id (ClusterId: 1 cluster_id)  7 master (ServerName)
                              8 backup_masters (ServerName)
    LiveServerInfo            1 server (ServerName)  2 server_load (ServerLoad)
    ServerLoad                1 number_of_requests  2 total_number_of_requests
                              3 used_heap_MB  4 max_heap_MB  5 region_loads (repeated)
    RegionLoad                1 region_specifier  2 stores  3 storefiles ...
"""

from __future__ import annotations

from typing import Any, NamedTuple

from hbase_migrate.rpc.messages import region_specifier
from hbase_migrate.wal.messages import decode_server_name, encode_server_name
from hbase_migrate.wal.names import ServerName
from hbase_migrate.wal.protobuf import Message, bytes_field, string_field, varint_field

OPT_HBASE_VERSION, OPT_CLUSTER_ID, OPT_LIVE_SERVERS, OPT_DEAD_SERVERS = 0, 1, 2, 3
OPT_MASTER, OPT_BACKUP_MASTERS, OPT_REGIONS_IN_TRANSITION = 4, 5, 7
STATUS_OPTIONS = (OPT_HBASE_VERSION, OPT_CLUSTER_ID, OPT_LIVE_SERVERS, OPT_DEAD_SERVERS,
                  OPT_MASTER, OPT_BACKUP_MASTERS, OPT_REGIONS_IN_TRANSITION)


class ServerStatus(NamedTuple):
    """A live region server: its name, regions online, requests since its start, heap MB."""

    server: ServerName
    regions: int
    requests: int
    used_heap_mb: int
    max_heap_mb: int


class ClusterStatus(NamedTuple):
    version: str
    cluster_id: str
    master: ServerName | None
    backup_masters: tuple[ServerName, ...]
    live_servers: tuple[ServerStatus, ...]
    dead_servers: tuple[ServerName, ...]
    regions_in_transition: int

    @property
    def regions(self) -> int:
        return sum(s.regions for s in self.live_servers)

    def to_json(self) -> dict[str, Any]:
        """What ``cluster info`` shows of it (server names as HBase prints them)."""
        return {"version": self.version, "cluster_id": self.cluster_id,
                "master": str(self.master) if self.master else None,
                "backup_masters": sorted(str(m) for m in self.backup_masters),
                "regions": self.regions, "regions_in_transition": self.regions_in_transition,
                "live_servers": [{"server": str(s.server), "regions": s.regions,
                                  "requests": s.requests, "used_heap_mb": s.used_heap_mb,
                                  "max_heap_mb": s.max_heap_mb}
                                 for s in sorted(self.live_servers, key=lambda s: s.server)],
                "dead_servers": sorted(str(d) for d in self.dead_servers)}


def cluster_status_request(options: tuple[int, ...] = STATUS_OPTIONS) -> bytes:
    return b"".join(varint_field(1, o) for o in options)


def _server_status(data: bytes) -> ServerStatus:
    m = Message(data, "LiveServerInfo")
    load = Message(m.req_bytes(2, "server_load"), "ServerLoad")
    return ServerStatus(decode_server_name(m.req_bytes(1, "server")), len(load.repeated(5)),
                        load.opt_int(2) or 0, load.opt_int(3) or 0, load.opt_int(4) or 0)


def decode_cluster_status(data: bytes) -> ClusterStatus:
    """A GetClusterStatusResponse."""
    m = Message(Message(data, "GetClusterStatusResponse").req_bytes(1, "cluster_status"),
                "ClusterStatus")
    version = m.opt_bytes(1)
    cluster_id = m.opt_bytes(5)
    master = m.opt_bytes(7)
    return ClusterStatus(
        "" if version is None else Message(version, "HBaseVersionFileContent").req_str(
            1, "version"),
        "" if cluster_id is None else Message(cluster_id, "ClusterId").req_str(
            1, "cluster_id"),
        None if master is None else decode_server_name(master),
        m.msgs(8, decode_server_name), m.msgs(2, _server_status),
        m.msgs(3, decode_server_name), len(m.repeated(4)))


def cluster_status_response(status: ClusterStatus,
                            regions: dict[ServerName, tuple[bytes, ...]]) -> bytes:
    """A GetClusterStatusResponse as a master sends it; ``regions``: the full names of each
    live server's regions (its RegionLoads)."""
    out = bytes_field(1, string_field(1, status.version))
    for live in status.live_servers:
        loads = b"".join(bytes_field(5, bytes_field(1, region_specifier(name)))
                         for name in regions.get(live.server, ()))
        load = (varint_field(1, 0) + varint_field(2, live.requests)
                + varint_field(3, live.used_heap_mb) + varint_field(4, live.max_heap_mb)
                + loads)
        out += bytes_field(2, bytes_field(1, encode_server_name(live.server))
                           + bytes_field(2, load))
    out += b"".join(bytes_field(3, encode_server_name(d)) for d in status.dead_servers)
    out += bytes_field(5, string_field(1, status.cluster_id))
    if status.master is not None:
        out += bytes_field(7, encode_server_name(status.master))
    out += b"".join(bytes_field(8, encode_server_name(b)) for b in status.backup_masters)
    return bytes_field(1, out)
