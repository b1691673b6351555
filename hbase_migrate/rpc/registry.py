"""The RPC connection registry (HBase 2.5+ and 3.0): where ``hbase:meta`` and the active
master are, asked of the cluster's own servers instead of ZooKeeper.

HBase's ``RpcConnectionRegistry`` reads ``hbase.client.bootstrap.servers`` (``host:port``
separated by commas; a ``hbase+rpc://h1:p1,h2:p2`` URI sets it, HBASE-28436) and asks any of
them, masters or region servers alike, the calls of ``ClientMetaService`` (``Registry.proto``;
every request message is empty)::

    GetClusterId            -> 1 cluster_id (string; absent: unknown yet)
    GetActiveMaster         -> 1 server_name (ServerName; absent: no active master yet)
    GetMetaRegionLocations  -> 1 meta_locations (repeated RegionLocation: 1 region_info
                               2 server_name 3 seq_num; one per meta replica)
    GetBootstrapNodes       -> 1 server_name (repeated ServerName: servers to ask next time)

An answer lacking what was asked counts as a failure of that server, as HBase's
``AbstractRpcBasedConnectionRegistry`` judges it, and the next server is asked. The servers
``GetBootstrapNodes`` names are asked after the configured ones once these fail.
(``ConnectionRegistryService.GetConnectionRegistry`` in the same file is the preamble call
of HBASE-28321 that learns the cluster id before SASL; this client does not need it.)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.errors import ServiceUnreachableError
from hbase_migrate.rpc.connection import DEFAULT_CALL_TIMEOUT, Pool
from hbase_migrate.rpc.errors import RpcError
from hbase_migrate.wal.messages import decode_server_name, encode_server_name
from hbase_migrate.wal.names import ServerName
from hbase_migrate.wal.protobuf import (
    Message,
    ProtobufError,
    bytes_field,
    string_field,
    varint_field,
)

REGISTRY_SERVICE = "ClientMetaService"
_T = TypeVar("_T")


class RegistryError(RpcError, ServiceUnreachableError):
    """No bootstrap server gave the registry's answer: each one's reason is named."""


def meta_location(response: bytes) -> ServerName | None:
    """The server of the default replica of ``hbase:meta`` in a GetMetaRegionLocations
    response (None: none named)."""
    for location in Message(response, "GetMetaRegionLocationsResponse").repeated(1):
        m = Message(location, "RegionLocation")
        info = Message(m.req_bytes(1, "region_info"), "RegionInfo")
        server = m.opt_bytes(2, "server_name")
        if (info.opt_int(7, "replica_id") or 0) == 0 and server is not None:
            return decode_server_name(server)
    return None


def active_master(response: bytes) -> ServerName | None:
    server = Message(response, "GetActiveMasterResponse").opt_bytes(1, "server_name")
    return None if server is None else decode_server_name(server)


def cluster_id(response: bytes) -> str | None:
    return Message(response, "GetClusterIdResponse").opt_str(1, "cluster_id")


def bootstrap_nodes(response: bytes) -> list[ServerName]:
    return [decode_server_name(s)
            for s in Message(response, "GetBootstrapNodesResponse").repeated(1)]


# --- the answers, as a server writes them (the embedded cluster serves the registry) ---


def meta_locations_response(server: ServerName | None, meta_region_info: bytes,
                            seq_num: int = 0) -> bytes:
    """A GetMetaRegionLocationsResponse naming ``server`` for meta's default replica
    (``meta_region_info``: its RegionInfo message), or none."""
    if server is None:
        return b""
    location = (bytes_field(1, meta_region_info) + bytes_field(2, encode_server_name(server))
                + varint_field(3, seq_num))
    return bytes_field(1, location)


def server_response(server: ServerName | None) -> bytes:
    """GetActiveMasterResponse: the server in field 1, or nothing."""
    return b"" if server is None else bytes_field(1, encode_server_name(server))


def cluster_id_response(cluster: str | None) -> bytes:
    return b"" if cluster is None else string_field(1, cluster)


def bootstrap_nodes_response(servers: Sequence[ServerName]) -> bytes:
    return b"".join(bytes_field(1, encode_server_name(s)) for s in servers)


class RpcRegistry:
    """The registry of the cluster whose servers ``bootstrap`` names; thread-safe."""

    def __init__(self, bootstrap: Sequence[tuple[str, int]], *, user: str | None = None,
                 call_timeout: float = DEFAULT_CALL_TIMEOUT,
                 security: ClusterSecurity | None = None, cluster: str = "") -> None:
        if not bootstrap:
            raise ValueError("the RPC registry needs at least one bootstrap server")
        self.bootstrap = tuple(bootstrap)
        self.pool = Pool(user=user, call_timeout=call_timeout, service=REGISTRY_SERVICE,
                         security=security, cluster=cluster)
        self._lock = threading.Lock()
        self._learned: tuple[tuple[str, int], ...] = ()
        self.answered_by = ""  # the server of the last answer, "host:port"

    @property
    def description(self) -> str:
        return "RPC registry " + ",".join(f"{h}:{p}" for h, p in self.bootstrap)

    def close(self) -> None:
        self.pool.close()

    def _ask(self, method: str, read: Callable[[bytes], _T | None], what: str) -> _T:
        """``read`` of the first answer naming ``what``, configured servers first."""
        with self._lock:
            servers = list(dict.fromkeys(self.bootstrap + self._learned))
        reasons = []
        for host, port in servers:
            try:
                reply = self.pool.get(host, port).call(method, b"")
                found = read(reply.response or b"")
            except (RpcError, ProtobufError) as exc:
                self.pool.drop(host, port)
                reasons.append(f"{host}:{port}: {exc}")
                continue
            if found is None:
                reasons.append(f"{host}:{port}: no {what} yet")
                continue
            self.answered_by = f"{host}:{port}"
            return found
        raise RegistryError(f"{self.description}: no server told {what} ({'; '.join(reasons)});"
                            " check hbase+rpc:// names the masters' or region servers' RPC "
                            "ports of an HBase 2.5+ cluster")

    def meta_server(self) -> ServerName:
        """The server holding ``hbase:meta``."""
        return self._ask("GetMetaRegionLocations", meta_location, "where hbase:meta is")

    def active_master(self) -> ServerName:
        return self._ask("GetActiveMaster", active_master, "the active master")

    def cluster_id(self) -> str:
        return self._ask("GetClusterId", cluster_id, "the cluster id")

    def refresh(self) -> list[ServerName]:
        """The servers the cluster names for the registry now (kept to ask after the
        configured ones)."""
        nodes = self._ask("GetBootstrapNodes", lambda r: bootstrap_nodes(r) or None,
                          "bootstrap nodes")
        with self._lock:
            self._learned = tuple((n.host, n.port) for n in nodes)
        return nodes
