"""Write HBase's ZooKeeper layout for the embedded cluster, byte for byte as HBase does.

Every payload carries RecoverableZooKeeper's metadata prefix and the ``PBUF`` magic (see
``hbase_migrate.cluster.zk.zkpayload``), so real HBase tools and the product's reader read it
alike. Ephemeral znodes (master, region servers) live as long as the registrar's session:
closing it is how a "killed" server disappears.
"""

from __future__ import annotations

import contextlib
import getpass
import importlib.metadata
import time
from types import TracebackType
from typing import Self

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError, SessionExpiredError
from kazoo.handlers.threading import KazooTimeoutError

from hbase_migrate.cluster.zk.replication_payload import (
    ReplicationPeer,
    ReplicationState,
    claimed_queue_id,
    encode_replication_peer,
    encode_replication_state,
    encode_wal_position,
)
from hbase_migrate.cluster.zk.zkpayload import (
    ClusterId,
    Master,
    MetaRegionServer,
    RegionServerInfo,
    VersionInfo,
    add_metadata,
    default_identifier,
    encode_cluster_id,
    encode_cluster_up,
    encode_master,
    encode_meta_region_server,
    encode_region_server_info,
    strip_metadata,
)
from hbase_migrate.wal.names import ServerName
from stackprocs.process import EmbeddedStackError

# how long the embedded stack waits for its ZooKeeper to answer (a busy machine's first
# connection can take seconds)
ZK_CONNECT_TIMEOUT = 30.0
# how long a registrar's session (its master or region server znodes) outlives a process
# killed without a shutdown (HBase's zookeeper.session.timeout; the quorum bounds it)
ZK_SESSION_TIMEOUT = 30.0


def _package_version() -> str:
    try:
        return importlib.metadata.version("hbase-migrate")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry and no $USER (some containers)
        return "unknown"


# What the embedded servers claim to be: the HBase line whose formats they follow, marked as
# not being Apache HBase.
VERSION_INFO = VersionInfo(
    version="2.6.0-minihbase",
    url="minihbase (embedded HBase-compatible cluster of hbase-migrate; not Apache HBase)",
    revision=f"hbase-migrate {_package_version()}",
    user=_user(),
    date=time.strftime("%a %b %d %H:%M:%S %Z %Y"),
    src_checksum="",
    version_major=2,
    version_minor=6,
)


class ZkRegistrar:
    """Writes ``<parent>/hbaseid``, ``master``, ``meta-region-server``, ``running``,
    ``rs/<sn>`` and ``replication/...``. Give it a started KazooClient (left open on close)
    or a hosts string (its own session, ended on close)."""

    def __init__(self, client_or_hosts: KazooClient | str, znode_parent: str = "/hbase",
                 identifier: str | None = None, timeout: float = ZK_CONNECT_TIMEOUT, *,
                 session_timeout: float = ZK_SESSION_TIMEOUT) -> None:
        if isinstance(client_or_hosts, str):
            self.client = KazooClient(hosts=client_or_hosts, timeout=session_timeout)
            try:
                self.client.start(timeout=timeout)
            except KazooTimeoutError:
                self.client.close()
                raise EmbeddedStackError(f"ZooKeeper {client_or_hosts} does not answer within "
                                         f"{timeout:g} s: is it running?") from None
            self._owns_client = True
        else:
            self.client = client_or_hosts
            self._owns_client = False
        self.parent = "/" + znode_parent.strip("/")
        self.identifier = identifier or default_identifier()

    def path(self, *parts: str) -> str:
        return "/".join((self.parent.rstrip("/"), *parts))

    def _put(self, path: str, payload: bytes, ephemeral: bool = False) -> None:
        """Create or overwrite ``path`` with ``payload`` plus the metadata prefix."""
        data = add_metadata(payload, self.identifier)
        try:
            self.client.create(path, data, ephemeral=ephemeral, makepath=True)
        except NodeExistsError:
            self.client.set(path, data)

    # --- cluster ------------------------------------------------------------------------

    def set_cluster_id(self, cluster_id: str) -> None:
        self._put(self.path("hbaseid"), encode_cluster_id(ClusterId(cluster_id)))

    def set_master(self, server: ServerName, info_port: int = 16010) -> None:
        """Become the active master (ephemeral, as MasterAddressTracker writes it). A master
        znode another live session holds means another cluster runs under this parent: a
        second HBase master would not take it over, and neither does this one. A parent left
        by a cluster that is gone (its master znode expired with its session) is reused."""
        path = self.path("master")
        data = add_metadata(encode_master(Master(server, 0, info_port)), self.identifier)
        while True:
            try:  # create, never overwrite: of two masters starting at once, one wins
                self.client.create(path, data, ephemeral=True, makepath=True)
                return
            except NodeExistsError:
                pass
            stat = self.client.exists(path)
            if stat is None:
                continue  # the other master's session ended meanwhile: try again
            owner = stat.ephemeralOwner
            if owner and owner != self.client.client_id[0]:
                raise EmbeddedStackError(
                    f"znode parent {self.parent} on ZooKeeper {self._quorum()} already has an "
                    f"active master (ephemeral znode of session 0x{owner:x}): another cluster "
                    "runs there; stop it (a killed one's znode goes when its session expires) "
                    "or give this cluster its own --znode-parent")
            try:  # this session's own node, or a persistent one some tool left
                self.client.set(path, data)
                return
            except NoNodeError:
                continue

    def _quorum(self) -> str:
        return ",".join(f"{host}:{port}" for host, port in self.client.hosts)

    def set_meta_server(self, server: ServerName) -> None:
        self._put(self.path("meta-region-server"),
                  encode_meta_region_server(MetaRegionServer(server)))

    def set_running(self) -> None:
        """``running``: ClusterUp with the start date as Java's ``Date.toString()`` gives."""
        self._put(self.path("running"),
                  encode_cluster_up(time.strftime("%a %b %d %H:%M:%S %Z %Y")))

    def register_server(self, server: ServerName, info_port: int = 16030) -> None:
        """A live region server: ephemeral ``rs/<host,port,startcode>``."""
        info = RegionServerInfo(info_port, VERSION_INFO)
        self._put(self.path("rs", str(server)), encode_region_server_info(info), ephemeral=True)

    def unregister_server(self, server: ServerName) -> None:
        """A clean shutdown: the server removes its own rs znode (gone already when the
        session expired while the quorum was away)."""
        with contextlib.suppress(NoNodeError, SessionExpiredError):
            self.client.delete(self.path("rs", str(server)))

    # --- replication peers --------------------------------------------------------------

    def add_replication_peer(self, peer_id: str, cluster_key: str, enabled: bool = True,
                             peer: ReplicationPeer | None = None) -> None:
        """``replication/peers/<id>`` and its ``peer-state``. Peer ids cannot contain '-'
        (it separates a queue id from dead server names)."""
        if not peer_id or "-" in peer_id or "/" in peer_id:
            raise ValueError(f"invalid replication peer id {peer_id!r} (no '-' or '/')")
        config = peer or ReplicationPeer(cluster_key)
        path = self.path("replication", "peers", peer_id)
        self._put(path, encode_replication_peer(config))
        self.set_peer_state(peer_id, enabled)

    def set_peer_state(self, peer_id: str, enabled: bool) -> None:
        state = ReplicationState.ENABLED if enabled else ReplicationState.DISABLED
        self._put(self.path("replication", "peers", peer_id, "peer-state"),
                  encode_replication_state(state))

    def remove_replication_peer(self, peer_id: str) -> None:
        self.client.delete(self.path("replication", "peers", peer_id), recursive=True)

    # --- replication queues -------------------------------------------------------------

    def _queue_path(self, server: ServerName, queue_id: str, *wal: str) -> str:
        return self.path("replication", "rs", str(server), queue_id, *wal)

    def add_queue_wal(self, server: ServerName, queue_id: str, wal_name: str) -> None:
        """A new WAL enters a queue with an empty payload (offset 0), as ``addWAL`` does."""
        self.client.ensure_path(self._queue_path(server, queue_id, wal_name))

    def set_queue_position(self, server: ServerName, queue_id: str, wal_name: str,
                           position: int) -> None:
        """The offset of ``wal_name`` already shipped for ``queue_id`` (a peer id, or a
        claimed queue id)."""
        self._put(self._queue_path(server, queue_id, wal_name), encode_wal_position(position))

    def remove_queue_wal(self, server: ServerName, queue_id: str, wal_name: str) -> None:
        with contextlib.suppress(NoNodeError):
            self.client.delete(self._queue_path(server, queue_id, wal_name))

    def claim_queues(self, dead: ServerName, new: ServerName) -> list[str]:
        """Move every queue of a dead server to ``new`` as ``<queueId>-<dead>`` (one
        transaction per queue, offsets kept), then drop the dead server's znode."""
        claimed = []
        dead_path = self.path("replication", "rs", str(dead))
        try:
            queue_ids = sorted(self.client.get_children(dead_path))
        except NoNodeError:
            return []
        for queue_id in queue_ids:
            new_id = claimed_queue_id(queue_id, dead)
            old_q, new_q = f"{dead_path}/{queue_id}", self._queue_path(new, new_id)
            self.client.ensure_path(self.path("replication", "rs", str(new)))
            txn = self.client.transaction()
            txn.create(new_q, b"")
            for wal in sorted(self.client.get_children(old_q)):
                data, _ = self.client.get(f"{old_q}/{wal}")
                txn.create(f"{new_q}/{wal}",
                           add_metadata(strip_metadata(data), self.identifier))
                txn.delete(f"{old_q}/{wal}")
            txn.delete(old_q)
            results = txn.commit()
            failures = [r for r in results if isinstance(r, Exception)]
            if failures:
                raise RuntimeError(f"claiming queue {old_q} for {new} failed: {failures[0]!r}")
            claimed.append(new_id)
        self.client.delete(dead_path)
        return claimed

    # --- session ------------------------------------------------------------------------

    def close(self) -> None:
        """End the registrar's own session: its ephemeral znodes disappear."""
        if self._owns_client:
            self.client.stop()
            self.client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
