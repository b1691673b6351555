"""``ClientMetaService``, the RPC connection registry, on every server of the embedded cluster
(master and region servers alike, as HBase 2.5+ serves it): the cluster id, the active
master, where ``hbase:meta`` is and the servers to ask next (``hbase_migrate.rpc.registry``
reads the answers)."""

from __future__ import annotations

from collections.abc import Callable

from hbase_migrate.rpc.locate import region_info_message
from hbase_migrate.rpc.registry import (
    REGISTRY_SERVICE,
    bootstrap_nodes_response,
    cluster_id_response,
    meta_locations_response,
    server_response,
)
from hbase_migrate.wal.names import ServerName
from minihbase.rpc.listener import CallContext, Handler

META_REGION_ID = 1  # hbase:meta,,1 (RegionInfoBuilder.FIRST_META_REGIONINFO)


class RegistryRpc:
    """The registry's answers, read from the cluster each call: ``master()`` the active
    master, ``meta()`` the server holding meta, ``live()`` the live region servers."""

    def __init__(self, cluster_id: str, master: Callable[[], ServerName | None],
                 meta: Callable[[], ServerName | None],
                 live: Callable[[], list[ServerName]]) -> None:
        self.cluster_id = cluster_id
        self.master, self.meta, self.live = master, meta, live
        self.meta_info = region_info_message("hbase:meta", b"", b"", META_REGION_ID)

    def services(self) -> dict[str, dict[str, Handler]]:
        return {REGISTRY_SERVICE: {
            "GetClusterId": lambda ctx: (cluster_id_response(self.cluster_id), b""),
            "GetActiveMaster": lambda ctx: (server_response(self.master()), b""),
            "GetMetaRegionLocations": self._meta,
            "GetBootstrapNodes": lambda ctx: (bootstrap_nodes_response(self.live()), b""),
        }}

    def _meta(self, ctx: CallContext) -> tuple[bytes, bytes]:
        return meta_locations_response(self.meta(), self.meta_info), b""
