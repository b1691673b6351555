"""One embedded cluster: the durable store, region servers writing WALs, HBase's own RPC on
the master and each region server, both Thrift gateways, a WebHDFS view of the HBase root,
an admin endpoint and ZooKeeper registration.

``MiniHBase(dir).start()`` opens (or reopens) ``dir/store.sqlite``, starts the region servers
(WALs under the HBase root ``dir/hbase``: ``WALs/``, ``oldWALs/``), serves Thrift1, Thrift2,
WebHDFS (the root as ``/hbase``) and the admin endpoint on loopback ports, and, given a
ZooKeeper quorum, registers as HBase does (``hbaseid``, ``master``, ``meta-region-server``,
``running``, one ephemeral ``rs/<server>`` per live server, replication peer and queues).
The master and the region servers listen for HBase's RPC (``minihbase.rpc``) on the ports
their server names carry (``master_rpc`` and ``region_server_rpc`` in ``cluster.json``); the
first region server holds ``hbase:meta`` (another takes it when that one is killed).
``stop()`` shuts down cleanly (regions closed, WALs archived), then closes the store. The
endpoints are written to ``dir/cluster.json`` atomically (temp file, fsync, rename).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import sqlite3
import tempfile
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any, Self

from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.errors import ZkPayloadError
from hbase_migrate.cluster.zk.replication_payload import ReplicationState, decode_replication_state
from hbase_migrate.cluster.zk.zkpayload import ClusterId, decode_cluster_id, encode_cluster_id
from hbase_migrate.wal.model import Cell
from hbase_migrate.wal.names import ServerName
from minihbase import thrift1, thrift2
from minihbase.admin import AdminServer
from minihbase.cluster import Cluster, now_ms
from minihbase.gateway import ThriftGateway
from minihbase.model import Durability, MiniHBaseError
from minihbase.regionserver import RegionServer, RegionServers, WalSettings
from minihbase.replication import ReplicationQueues
from minihbase.rpc.listener import Handler, RpcListener
from minihbase.rpc.master import MasterRpc
from minihbase.rpc.regionserver import RegionServerRpc
from minihbase.rpc.registry import RegistryRpc
from minihbase.store import Store, WriteHook
from minihbase.webhdfs import WebHdfsServer
from minihbase.zkregistry import ZK_SESSION_TIMEOUT, ZkRegistrar
from stackprocs.process import EmbeddedStackError

log = logging.getLogger(__name__)

STORE_FILE = "store.sqlite"
CLUSTER_JSON = "cluster.json"
HBASE_ROOT_DIR = "hbase"  # the HBase root (hbase.rootdir) inside the data folder
HBASE_ROOT = "/hbase"  # where WebHDFS shows it


class _Hooks:
    """Calls several write hooks in order (the WAL first)."""

    def __init__(self, hooks: Sequence[WriteHook]) -> None:
        self.hooks = list(hooks)

    def __call__(self, table: str, region: RegionDescriptor, cells: Sequence[Cell],
                 durability: Durability) -> None:
        for hook in self.hooks:
            hook(table, region, cells, durability)


def cluster_id(root: Path) -> str:
    """The cluster id kept in ``<root>/hbase.id`` (PBUF + ClusterId, as HBase writes it)."""
    path = root / "hbase.id"
    try:
        return decode_cluster_id(path.read_bytes()).cluster_id
    except (OSError, ZkPayloadError):
        cid = str(uuid.uuid4())
        path.write_bytes(encode_cluster_id(ClusterId(cid)))
        return cid


def write_json_atomically(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` to ``path`` so that readers see the old or the new file, never half."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class MiniHBase:
    """The embedded HBase-compatible cluster in this process."""

    def __init__(self, data_dir: str | Path, name: str = "minihbase", thrift_port: int = 0,
                 thrift2_port: int = 0, transport: str = "buffered", protocol: str = "binary",
                 zookeeper: str | None = None, write_hook: WriteHook | None = None, *,
                 wal: WalSettings | None = None, replication_peer: str | None = None,
                 znode_parent: str = "/hbase", webhdfs_port: int = 0, admin_port: int = 0,
                 clock: Callable[[], int] = now_ms, master_rpc_port: int = 0,
                 rpc_ports: Sequence[int] = (),
                 zk_session_timeout: float = ZK_SESSION_TIMEOUT) -> None:
        """``master_rpc_port``, ``rpc_ports`` (one per region server): the RPC ports
        (0 or none given: free ones). ``zk_session_timeout``: seconds the master's and
        region servers' znodes outlive a kill (their ZooKeeper sessions' timeout)."""
        self.data_dir = Path(data_dir).resolve()
        self.name = name
        self.ports = (thrift_port, thrift2_port)
        self.transport, self.protocol = transport, protocol
        self.zookeeper = zookeeper
        self.znode_parent = znode_parent
        self.zk_session_timeout = zk_session_timeout
        self.write_hook = write_hook
        self.wal_settings = wal or WalSettings()
        self.replication_peer = replication_peer
        self.webhdfs_port, self.admin_port = webhdfs_port, admin_port
        self.clock = clock
        self.hbase_root_dir = self.data_dir / HBASE_ROOT_DIR
        self.store: Store | None = None
        self.cluster: Cluster | None = None
        self.region_servers: RegionServers | None = None
        self.thrift1: ThriftGateway | None = None
        self.thrift2: ThriftGateway | None = None
        self.thrift2_handler: thrift2.Thrift2Handler | None = None  # for tests' faults
        self.thrift1_handler: thrift1.Thrift1Handler | None = None  # for tests' faults
        self.webhdfs: WebHdfsServer | None = None
        self._served: dict[str, tuple[ModuleType, object]] = {}
        self._paused: tuple[str, int] = ("", 0)  # the service stop_service closed, its port
        self.webhdfs_latency = 0.0  # seconds added to every WebHDFS request (a fault)
        self.admin: AdminServer | None = None
        self.master: ZkRegistrar | None = None
        self.rpc_ports = (master_rpc_port, *rpc_ports)
        self.master_rpc: RpcListener | None = None
        self.rpc: list[RpcListener] = []  # one per region server slot
        self.region_rpc: list[RegionServerRpc] = []
        self.master_rpc_handler: MasterRpc | None = None
        self.registry_rpc: RegistryRpc | None = None
        self.rpc_latency = 0.0  # seconds added to every RPC call (a fault)
        self._rpc_closed: list[int] = []  # the RPC ports stop_service("rpc") closed
        self.meta_slot = 0
        self.master_name = ServerName("localhost", 0, 0)  # its port once bound

    def _open_store(self) -> Store:
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            probe = self.data_dir / ".write-probe"
            probe.write_bytes(b"")
            probe.unlink()
            self.hbase_root_dir.mkdir(exist_ok=True)
            return Store(self.data_dir / STORE_FILE)
        except (OSError, sqlite3.Error) as exc:
            raise EmbeddedStackError(
                f"minicluster {self.name}: data directory {self.data_dir} is not usable "
                f"({exc}); give a writable --dir") from exc

    def _registrar(self) -> ZkRegistrar:
        assert self.zookeeper is not None
        return ZkRegistrar(self.zookeeper, self.znode_parent,
                           session_timeout=self.zk_session_timeout)

    def _start_region_servers(self, store: Store) -> RegionServers:
        replication = None
        if self.replication_peer is not None:
            enabled = self._peer_state()
            if enabled is None and self.master is not None:
                key = f"{self.zookeeper}:/hbase-{self.replication_peer}"
                self.master.add_replication_peer(self.replication_peer, key)
            replication = ReplicationQueues(self.replication_peer, self.master,
                                            enabled is not False)
        factory = self._registrar if self.zookeeper else None
        servers = RegionServers(store, self.hbase_root_dir, self.wal_settings, self.clock,
                                factory, replication, [listener.port for listener in self.rpc])
        servers.on_kill.append(self._server_killed)
        servers.on_restart.append(self._server_restarted)
        hooks: list[WriteHook] = [servers]
        if self.write_hook is not None:
            hooks.append(self.write_hook)
        store.write_hook = _Hooks(hooks)
        return servers.start()

    def _peer_state(self) -> bool | None:
        """Whether the peer registered by an earlier run is enabled (None: no such peer)."""
        if self.master is None or self.replication_peer is None:
            return None
        path = self.master.path("replication", "peers", self.replication_peer, "peer-state")
        if not self.master.client.exists(path):
            return None
        data, _ = self.master.client.get(path)
        return decode_replication_state(data, path) is ReplicationState.ENABLED

    def _bind_rpc(self, master_port: int, ports: Sequence[int]) -> None:
        """Bind the RPC ports (before the servers are named: their names carry them); the
        handlers, once made (:meth:`_start_rpc`), serve on them."""
        if len(ports) != self.wal_settings.region_servers:
            raise EmbeddedStackError(f"minicluster {self.name}: {len(ports)} region server "
                                     f"RPC ports for {self.wal_settings.region_servers} "
                                     "region servers")
        master = self.master_rpc_handler.services() if self.master_rpc_handler else {}
        self.master_rpc = RpcListener(f"{self.name} master", master, master_port)
        self.rpc = [self._rs_listener(slot, port) for slot, port in enumerate(ports)]
        self.master_rpc.latency = self.rpc_latency

    def _rs_services(self, slot: int) -> dict[str, dict[str, Handler]]:
        """A region server's services: its own calls and the RPC registry's."""
        registry = self.registry_rpc.services() if self.registry_rpc else {}
        return {**(self.region_rpc[slot].services() if self.region_rpc else {}), **registry}

    def _rs_listener(self, slot: int, port: int) -> RpcListener:
        listener = RpcListener(f"{self.name} rs{slot}", self._rs_services(slot),
                               port, alive=functools.partial(self._alive, slot))
        listener.latency = self.rpc_latency
        return listener

    def _alive(self, slot: int) -> bool:
        rs = self.region_servers
        return rs is not None and rs.servers[slot].alive

    def _holds_meta(self, slot: int) -> bool:
        return slot == self.meta_slot

    def _start_rpc(self, cluster: Cluster, servers: RegionServers) -> None:
        assert self.master_rpc is not None
        master = MasterRpc(cluster, servers, self.master_name, cluster_id(self.hbase_root_dir))
        self.master_rpc_handler = master
        self.registry_rpc = RegistryRpc(
            master.cluster_id, lambda: self.master_name,
            lambda: servers.servers[self.meta_slot].name,
            lambda: [s.name for s in servers.live_servers()])
        self.master_rpc.services = {**master.services(), **self.registry_rpc.services()}
        self.region_rpc = [RegionServerRpc(cluster, servers, slot,
                                           functools.partial(self._holds_meta, slot))
                           for slot in range(len(self.rpc))]
        for slot, listener in enumerate(self.rpc):
            listener.services = self._rs_services(slot)
        for listener in (self.master_rpc, *self.rpc):
            listener.start()

    def _server_killed(self, dead: RegionServer) -> None:
        """A region server crashed (``RegionServers.kill``): its RPC port closes (connections
        dropped, new ones refused, as a dead process's), and when it held ``hbase:meta``, a
        live server takes meta and ZooKeeper says so."""
        if dead.slot < len(self.rpc):
            self.rpc[dead.slot].stop(wait=False)  # calls under way wait for the kill's lock
        if dead.slot == self.meta_slot and self.region_servers is not None:
            self.meta_slot = self.region_servers.live_servers()[0].slot
            if self.master is not None:
                self.master.set_meta_server(self.region_servers.servers[self.meta_slot].name)

    def _server_restarted(self, back: RegionServer) -> None:
        """A killed region server started again (``RegionServers.restart``): it listens on
        its port again, under its new name (unless every RPC port is closed as an outage:
        :meth:`start_service` opens it then)."""
        if back.slot < len(self.rpc):
            self.rpc[back.slot] = self._rs_listener(back.slot, self.rpc[back.slot].port).start()

    def _register_master(self) -> None:
        if self.zookeeper is None:
            return
        self.master = self._registrar()
        # the master first: a parent another running cluster uses is refused untouched
        self.master.set_master(self.master_name)
        self.master.set_cluster_id(cluster_id(self.hbase_root_dir))
        self.master.set_running()

    def start(self) -> Self:
        self.store = self._open_store()
        try:
            count = self.wal_settings.region_servers
            self._bind_rpc(self.rpc_ports[0], self.rpc_ports[1:] or [0] * count)
            assert self.master_rpc is not None
            self.master_name = ServerName("localhost", self.master_rpc.port, self.clock())
            self._register_master()
            self.region_servers = self._start_region_servers(self.store)
            self.meta_slot = self.region_servers.live_servers()[0].slot
            if self.master is not None:
                meta = self.region_servers.servers[self.meta_slot].name
                self.master.set_meta_server(meta)
            self.cluster = Cluster(self.store, self.clock, host=self.region_servers)
            self._start_rpc(self.cluster, self.region_servers)
            served1, self.thrift1_handler = thrift1.make_handler(self.cluster)
            served2, self.thrift2_handler = thrift2.make_handler(self.cluster)
            self._served = {"thrift": (thrift1.SERVICE, served1),
                            "thrift2": (thrift2.SERVICE, served2)}
            self.thrift1 = self._gateway("thrift", self.ports[0])
            self.thrift2 = self._gateway("thrift2", self.ports[1])
            self.webhdfs = self._webhdfs(self.webhdfs_port)
            self.admin = AdminServer(self.region_servers, self.admin_port, self.describe,
                                     {"service": self._service_op,
                                      "webhdfs-latency": self._latency_op,
                                      "rpc-latency": lambda a: self._latency_op(a, "rpc")}
                                     ).start()
            self.thrift1.start()
            self.thrift2.start()
        except BaseException:
            self.stop()
            raise
        log.info("minicluster %s serving thrift %s, thrift2 %s, webhdfs %s", self.name,
                 self.thrift1.address, self.thrift2.address, self.webhdfs.url)
        return self

    def _gateway(self, kind: str, port: int) -> ThriftGateway:
        service, served = self._served[kind]
        return ThriftGateway(f"{self.name} {kind}", service, served, port, self.transport,
                             self.protocol)

    def _webhdfs(self, port: int) -> WebHdfsServer:
        assert self.region_servers is not None
        server = WebHdfsServer(self.hbase_root_dir, port=port, hbase_root=HBASE_ROOT,
                               leases=self.region_servers.leases)
        server.latency = self.webhdfs_latency
        return server.start()

    def _service_op(self, args: dict[str, Any]) -> dict[str, Any]:
        """The admin endpoint's ``service``: stop or start one front door."""
        kind, running = str(args["name"]), bool(args["running"])
        serving = {"thrift": self.thrift1, "thrift2": self.thrift2, "webhdfs": self.webhdfs,
                   "rpc": self.master_rpc}
        if kind not in serving:
            raise MiniHBaseError(f"no service {kind!r}: thrift, thrift2, webhdfs or rpc")
        if running == (serving[kind] is not None):
            return {"service": kind, "running": running, "changed": False}
        if running and self._paused[0] != kind:
            raise MiniHBaseError(f"cannot start {kind}: {self._paused[0]} is the one stopped")
        if not running and self._paused[0]:
            raise MiniHBaseError(f"cannot stop {kind}: {self._paused[0]} is stopped already "
                                 "(one service at a time)")
        (self.start_service if running else self.stop_service)(kind)
        if running:
            self._paused = ("", 0)
        return {"service": kind, "running": running, "changed": True}

    def _latency_op(self, args: dict[str, Any], kind: str = "webhdfs") -> dict[str, Any]:
        """The admin endpoint's ``webhdfs-latency`` and ``rpc-latency``: delay every WebHDFS
        request, or every RPC call of the master and the region servers (a slow server)."""
        seconds = float(args["seconds"])
        if not 0 <= seconds <= 60:
            raise MiniHBaseError(f"{kind} latency {seconds} s: expected 0 to 60 seconds")
        if kind == "rpc":
            self.rpc_latency = seconds
            for listener in (self.master_rpc, *self.rpc):
                if listener is not None:
                    listener.latency = seconds
            return {"rpc_latency": seconds}
        self.webhdfs_latency = seconds
        if self.webhdfs is not None:
            self.webhdfs.latency = seconds
        return {"webhdfs_latency": seconds}

    def stop_service(self, kind: str) -> None:
        """Close one front door (``thrift``, ``thrift2``, ``webhdfs``, or ``rpc``: the master's
        and every region server's RPC port) while the cluster keeps its data and its region
        servers keep writing: an outage of that service. :meth:`start_service` opens it
        again on the same port(s)."""
        if kind == "rpc" and self.master_rpc is not None:
            self._paused = ("rpc", 0)
            self._rpc_closed = [self.master_rpc.port, *(r.port for r in self.rpc)]
            for listener in (self.master_rpc, *self.rpc):
                listener.stop()
            self.master_rpc, self.rpc = None, []
        elif kind == "webhdfs" and self.webhdfs is not None:
            self._paused = ("webhdfs", self.webhdfs.port)
            self.webhdfs.stop()
            self.webhdfs = None
        elif kind in ("thrift", "thrift2"):
            gateway = self.thrift1 if kind == "thrift" else self.thrift2
            assert gateway is not None, f"{kind} is not serving"
            self._paused = (kind, gateway.port)
            gateway.stop()
            if kind == "thrift":
                self.thrift1 = None
            else:
                self.thrift2 = None
        else:
            raise ValueError(f"no service {kind!r} serving to stop")

    def start_service(self, kind: str) -> None:
        """Open the front door :meth:`stop_service` closed, on its port."""
        paused, port = self._paused
        assert paused == kind, f"{kind} was not stopped ({paused} was)"
        if kind == "rpc":
            self._bind_rpc(self._rpc_closed[0], self._rpc_closed[1:])
            assert self.master_rpc is not None
            self.master_rpc.start()
            for slot, listener in enumerate(self.rpc):  # a killed server's port stays shut
                if self._alive(slot):
                    listener.start()
                else:
                    listener.stop()
            return
        if kind == "webhdfs":
            self.webhdfs = self._webhdfs(port)
            return
        gateway = self._gateway(kind, port)
        gateway.start()
        if kind == "thrift":
            self.thrift1 = gateway
        else:
            self.thrift2 = gateway

    def stop(self) -> None:
        if self.thrift2_handler is not None:
            self.thrift2_handler.released.set()  # stalled calls end
        for gateway in (self.thrift1, self.thrift2):
            if gateway is not None:
                gateway.stop()
        self.thrift1 = self.thrift2 = None
        for http in (self.admin, self.webhdfs):
            if http is not None:
                http.stop()
        self.admin = self.webhdfs = None
        for listener in (self.master_rpc, *self.rpc):
            if listener is not None:
                listener.stop()
        self.master_rpc, self.rpc = None, []
        if self.region_servers is not None:
            self.region_servers.stop()
            self.region_servers = None
        if self.master is not None:
            self.master.close()
            self.master = None
        if self.store is not None:
            self.store.close()
            self.store = None

    def __enter__(self) -> Self:
        return self.start() if self.store is None else self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    @property
    def endpoints(self) -> ClusterEndpoints:
        """Where the cluster answers; its clients reach it over HBase's own RPC when it is
        registered in ZooKeeper (which the RPC client finds it through), else over Thrift2."""
        if self.thrift1 is None or self.thrift2 is None:
            raise EmbeddedStackError(f"minicluster {self.name} is not running")
        return ClusterEndpoints(name=self.name, thrift=self.thrift1.address,
                                thrift2=self.thrift2.address, transport=self.transport,
                                protocol=self.protocol,
                                webhdfs=self.webhdfs.url if self.webhdfs else None,
                                zookeeper=self.zookeeper, znode_parent=self.znode_parent,
                                hbase_root=HBASE_ROOT,
                                client="native" if self.zookeeper else "thrift")

    def describe(self) -> dict[str, Any]:
        """The ready line / cluster.json: endpoints plus ``pid``, ``dir``, ``hbase_root_dir``,
        ``admin``, ``region_servers`` (live server names), ``master_rpc`` (the master's RPC
        address) and ``region_server_rpc`` (each live region server's name -> its RPC
        address)."""
        data = self.endpoints.to_json()
        if not self.zookeeper:
            data.pop("zookeeper")
        servers = self.region_servers.live_servers() if self.region_servers else []
        return {**data, "pid": os.getpid(), "dir": str(self.data_dir),
                "hbase_root_dir": str(self.hbase_root_dir),
                "admin": self.admin.url if self.admin else None,
                "region_servers": [str(s.name) for s in servers],
                "master_rpc": self.master_rpc.address if self.master_rpc else None,
                "region_server_rpc": {str(s.name): self.rpc[s.slot].address
                                      for s in servers if s.slot < len(self.rpc)}}

    def write_cluster_json(self) -> Path:
        path = self.data_dir / CLUSTER_JSON
        write_json_atomically(path, self.describe())
        return path

