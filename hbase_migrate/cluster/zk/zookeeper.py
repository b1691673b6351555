"""Read an HBase cluster's ZooKeeper with kazoo: live servers, master, cluster id, meta
location, replication peers and queues; and the lock that keeps two replays of one
migration from running at once.

Layout (base ``zookeeper.znode.parent``, default ``/hbase``; payloads in ``zkpayload``)::

    rs/<host,port,startcode>                 ephemeral, one per live region server
    master  meta-region-server  hbaseid      active master, hbase:meta location, cluster id
    replication/peers/<peerId>[/peer-state]  peers (ZooKeeper peer storage, the default)
    replication/rs/<sn>/<queueId>/<walName>  queues and shipped offsets (1.x and 2.x only)

Where the replication queues live (:meth:`HBaseZooKeeper.queues_location`): HBase 3.x keeps
them in the table ``hbase:replication`` and deletes ``replication/rs`` once it has migrated
old queues. The rule used: ``replication/rs`` present -> ZooKeeper; absent while peers exist
-> the table (a 1.x/2.x cluster with a peer and a live server always has that znode);
neither -> ZooKeeper with no queues. Queues in the table are reported, never read here.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any, NamedTuple, Self

from kazoo.client import KazooClient
from kazoo.exceptions import (
    AuthFailedError,
    ConnectionClosedError,
    ConnectionLoss,
    KazooException,
    LockTimeout,
    NoNodeError,
    SASLException,
    SessionClosedRequireSaslError,
    SessionExpiredError,
)
from kazoo.recipe.lock import Lock

from hbase_migrate.cluster.auth.kerberos import KerberosError, explain, kazoo_sasl_options, login
from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.errors import (
    ClusterError,
    MigrationLockedError,
    ZooKeeperNeverAnsweredError,
    ZooKeeperUnreachableError,
)
from hbase_migrate.cluster.zk.replication_payload import (
    PeerSchema,
    ReplicationPeer,
    ReplicationState,
    TableCF,
    decode_replication_peer,
    decode_replication_state,
    decode_wal_position,
    detect_peer_schema,
    parse_legacy_table_cfs,
    parse_queue_id,
)
from hbase_migrate.cluster.zk.zkpayload import (
    decode_cluster_id,
    decode_master,
    decode_meta_region_server,
    is_server_name,
    strip_metadata,
)
from hbase_migrate.errors import ConfigError
from hbase_migrate.processes import process_alive
from hbase_migrate.timeutil import format_time
from hbase_migrate.wal.names import ServerName

log = logging.getLogger(__name__)

QUEUES_IN_ZOOKEEPER = "zookeeper"
QUEUES_IN_TABLE = "table hbase:replication"
DEFAULT_LOCK_ROOT = "/hbase-migrate/locks"
DEFAULT_LOCK_TIMEOUT = 30.0
_RS_LOCK_ZNODE = "lock"  # 1.x failover lock beside the queues of a server
FIRST_CONTACT_TIMEOUT = 3.0  # seconds a quorum never reached gets to accept a connection
_answered: set[str] = set()  # quorums that gave this process a session


class PeerInfo(NamedTuple):
    """A replication peer. ``state`` is None when the peer has no ``peer-state`` znode;
    ``schema`` is the ReplicationPeer schema seen on the wire (None: cannot tell, no
    difference). ``table_cfs`` comes from the peer, or from the pre-1.4 ``tableCFs`` znode."""

    peer_id: str
    cluster_key: str
    state: ReplicationState | None
    table_cfs: tuple[TableCF, ...]
    schema: PeerSchema | None
    config: ReplicationPeer

    @property
    def enabled(self) -> bool:
        return self.state is ReplicationState.ENABLED


class QueueInfo(NamedTuple):
    """One replication queue of a server: WAL name -> byte offset already shipped."""

    server: ServerName
    queue_id: str
    peer_id: str
    dead_servers: tuple[ServerName, ...]
    wals: Mapping[str, int]

    @property
    def recovered(self) -> bool:
        """True for a queue claimed from dead servers."""
        return bool(self.dead_servers) or "-" in self.queue_id


class MigrationLock(Lock):  # type: ignore[misc]  # kazoo ships no type hints
    """A kazoo Lock whose blocking acquire gives up after ``wait_timeout`` seconds (None:
    waits forever) with a :class:`MigrationLockedError` naming the current holder."""

    def __init__(self, client: KazooClient, path: str, identifier: str, migration: str,
                 wait_timeout: float | None) -> None:
        super().__init__(client, path, identifier)
        self.migration = migration
        self.wait_timeout = wait_timeout

    def acquire(self, blocking: bool = True, timeout: float | None = None,
                ephemeral: bool = True) -> bool:
        timeout = self.wait_timeout if timeout is None else timeout
        self._clear_dead_holders()
        try:
            return bool(super().acquire(blocking, timeout, ephemeral))
        except LockTimeout:
            holder = self.holder()
            created, session = self._holder_node()
            raise MigrationLockedError(
                self.migration, holder, f"znode {self.path}", timeout or 0.0,
                detail=zk_lock_detail(holder, created, session,
                                      self.client._session_timeout / 1000)
            ) from None

    def _clear_dead_holders(self) -> None:
        """Delete the lock nodes of contenders that were processes of this host and are gone
        (killed): their sessions would hold the lock until they expire, though nothing can
        act through them any more."""
        try:
            nodes = self.client.get_children(self.path)
        except NoNodeError:
            return
        except KazooException as exc:
            log.debug("lock %s: contenders not read: %s", self.path, exc)
            return
        for node in nodes:
            try:
                data, _ = self.client.get(f"{self.path}/{node}")
                holder = data.decode("utf-8", "replace")
                if holder and holder_is_dead(holder):
                    self.client.delete(f"{self.path}/{node}")
                    log.info("lock of %s: took it from %s, a process of this host that is "
                             "gone (its ZooKeeper session had not expired yet)",
                             self.migration, holder)
            except NoNodeError:
                continue  # released or expired meanwhile
            except KazooException as exc:
                log.debug("lock %s: contender %s not cleared: %s", self.path, node, exc)

    def _holder_node(self) -> tuple[int | None, int | None]:
        """Creation time (ms) and owning session of the first contender's lock node."""
        try:
            nodes = sorted(self.client.get_children(self.path),
                           key=lambda n: n.rsplit("__", 1)[-1])
            stat = self.client.exists(f"{self.path}/{nodes[0]}") if nodes else None
        except KazooException:
            return None, None
        if stat is None:
            return None, None
        return int(stat.ctime), int(stat.ephemeralOwner)

    def holder(self) -> str | None:
        """The identifier of the process holding the lock now (None if free or unknown)."""
        try:
            contenders = self.contenders()
        except KazooException:
            return None
        return str(contenders[0]) if contenders else None


def holder_is_dead(holder: str) -> bool:
    """True when ``holder`` names a process of this host that no longer runs."""
    where = holder.split(" ", 1)[0]
    host, _, rest = where.partition(":")
    pid = rest.split("/", 1)[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    return not process_alive(int(pid))


def zk_lock_detail(holder: str | None, created: int | None, session: int | None,
                   session_timeout: float) -> str:
    """What a waiting process can say about a ZooKeeper lock's holder."""
    if holder is None:
        return ""
    since = f" since {format_time(created)}" if created else ""
    owner = f" (session 0x{session:x})" if session else ""
    if holder_is_dead(holder):
        latest = format_time(int((time.time() + session_timeout) * 1000))
        return (f"held{since} by a process of this host that is gone{owner}: its lock node "
                f"goes when its ZooKeeper session expires, {session_timeout:g} s after its "
                f"last heartbeat as hbase-migrate asks for (a server's minimum of 2 ticks may "
                f"be longer): by {latest} at the latest; retry then")
    return f"held{since} by a live process{owner}"


def quorum_addresses(hosts: str) -> list[tuple[str, int]]:
    """``(host, port)`` of each server of a kazoo hosts string (``h1:2181,[::1]:2182/chroot``;
    port 2181 when none is given)."""
    found = []
    for server in hosts.partition("/")[0].split(","):
        item = server.strip()
        if item.startswith("["):
            host, _, rest = item[1:].partition("]")
            port = rest.removeprefix(":")
        else:
            host, _, port = item.partition(":")
        if host:
            found.append((host, int(port) if port.isdigit() else 2181))
    return found


class HBaseZooKeeper:
    """A read-only kazoo session on one cluster's ZooKeeper; use as a context manager."""

    def __init__(self, hosts: str, znode_parent: str = "/hbase", timeout: float = 10.0,
                 lock_root: str = DEFAULT_LOCK_ROOT, *, security: ClusterSecurity | None = None,
                 cluster: str = "") -> None:
        """``security`` (of the cluster named ``cluster``): SASL (GSSAPI) when Kerberos."""
        self.hosts = hosts
        self.security = security if security is not None and security.kerberos else None
        self.cluster = cluster or hosts
        self.znode_parent = "/" + znode_parent.strip("/")
        self.timeout = timeout
        self.lock_root = "/" + lock_root.strip("/")
        self._client: KazooClient | None = None
        self._parent_seen = False

    # --- session ------------------------------------------------------------------------

    def start(self) -> Self:
        """Connect; ClusterError naming the quorum when it does not answer in time."""
        options: dict[str, Any] = {}
        if self.security is not None:
            login(self.security, self.cluster, self.hosts)
            first = self.hosts.split(",")[0].rpartition(":")[0]
            options["sasl_options"] = kazoo_sasl_options(self.security, first)
        first_contact = self.hosts not in _answered
        if first_contact:
            self._refuse_unreachable()
        client = KazooClient(hosts=self.hosts, timeout=self.timeout, **options)
        try:
            client.start(timeout=self.timeout)
        except Exception as exc:  # kazoo raises its handler's timeout type, or ValueError
            client.stop()
            client.close()
            if self.security is not None and isinstance(exc, (AuthFailedError, SASLException)):
                raise explain(exc.__cause__ or exc, self.security, self.cluster,
                              f"ZooKeeper {self.hosts}", "zookeeper") from None
            if first_contact:
                raise self._never_answered(f"no session within {self.timeout:g} s") from exc
            raise ZooKeeperUnreachableError(
                f"ZooKeeper quorum {self.hosts}: no session within {self.timeout:g} s ({exc}); "
                "is the quorum address right and ZooKeeper running?", endpoint=self.hosts
            ) from exc
        _answered.add(self.hosts)
        self._client = client
        return self

    def _refuse_unreachable(self) -> None:
        """Fail at once when no server of a quorum never reached accepts a connection
        (refused, unknown host, silent for :data:`FIRST_CONTACT_TIMEOUT`), rather than
        after kazoo's retries and their warnings."""
        tried = []
        for host, port in quorum_addresses(self.hosts):
            try:
                socket.create_connection(
                    (host, port), timeout=min(self.timeout, FIRST_CONTACT_TIMEOUT)).close()
                return
            except OSError as exc:
                tried.append(f"{host}:{port}: {exc.strerror or exc}")
        raise self._never_answered("; ".join(tried))

    def _never_answered(self, why: str) -> ZooKeeperNeverAnsweredError:
        where = f" (cluster {self.cluster!r})" if self.cluster != self.hosts else ""
        return ZooKeeperNeverAnsweredError(
            f"ZooKeeper quorum {self.hosts}{where} has never answered ({why}); is the "
            "quorum address right (host, port) and ZooKeeper running?", endpoint=self.hosts)

    def close(self) -> None:
        """End the session (ephemeral lock nodes go with it)."""
        if self._client is not None:
            self._client.stop()
            self._client.close()
            self._client = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @property
    def client(self) -> KazooClient:
        if self._client is None:
            raise ClusterError(f"ZooKeeper quorum {self.hosts}: not connected (call start())")
        return self._client

    # --- low level ----------------------------------------------------------------------

    def path(self, *parts: str) -> str:
        """A znode path under the parent znode."""
        return "/".join((self.znode_parent.rstrip("/"), *parts))

    def _failed(self, path: str, exc: Exception) -> ClusterError:
        if isinstance(exc, SessionClosedRequireSaslError):
            return KerberosError(
                f"cluster {self.cluster!r}, ZooKeeper {self.hosts}: the quorum requires SASL "
                "(Kerberos) authentication and this client has no credentials; set auth = "
                "\"kerberos\" with principal and keytab for the cluster", endpoint=self.hosts)
        lost = isinstance(exc, (ConnectionLoss, SessionExpiredError, ConnectionClosedError))
        return (ZooKeeperUnreachableError if lost else ClusterError)(
            f"ZooKeeper quorum {self.hosts}, znode {path}: {type(exc).__name__}: {exc}",
            endpoint=self.hosts)

    def _check_parent(self) -> None:
        if self._parent_seen:
            return
        try:
            found = self.client.exists(self.znode_parent) is not None
            top = [] if found else sorted(self.client.get_children("/"))
        except KazooException as exc:
            raise self._failed(self.znode_parent, exc) from exc
        if not found:
            raise ClusterError(
                f"ZooKeeper quorum {self.hosts} has no znode {self.znode_parent}: is "
                f"zookeeper.znode.parent right? (top-level znodes: {', '.join(top) or 'none'})"
            )
        self._parent_seen = True

    def _get(self, path: str) -> bytes | None:
        """The raw data of a znode, None when it does not exist."""
        self._check_parent()
        try:
            data, _ = self.client.get(path)
        except NoNodeError:
            return None
        except KazooException as exc:
            raise self._failed(path, exc) from exc
        return bytes(data)

    def _children(self, path: str) -> list[str]:
        """Sorted child names; empty when the znode does not exist."""
        self._check_parent()
        try:
            return sorted(self.client.get_children(path))
        except NoNodeError:
            return []
        except KazooException as exc:
            raise self._failed(path, exc) from exc

    def _exists(self, path: str) -> bool:
        self._check_parent()
        try:
            return self.client.exists(path) is not None
        except KazooException as exc:
            raise self._failed(path, exc) from exc

    # --- cluster ------------------------------------------------------------------------

    def live_servers(self) -> list[ServerName]:
        """Region servers with an ephemeral ``rs/<sn>`` znode."""
        names = self._children(self.path("rs"))
        return [ServerName.parse(n) for n in names if is_server_name(n)]

    def master(self) -> ServerName | None:
        """The active master, None while there is none."""
        data = self._get(self.path("master"))
        return decode_master(data, self.path("master")).server if data else None

    def meta_server(self) -> ServerName | None:
        """The server hosting hbase:meta (replica 0)."""
        path = self.path("meta-region-server")
        data = self._get(path)
        return decode_meta_region_server(data, path).server if data else None

    def cluster_id(self) -> str | None:
        """The cluster id (``hbaseid``), None before a master first started."""
        data = self._get(self.path("hbaseid"))
        return decode_cluster_id(data, self.path("hbaseid")).cluster_id if data else None

    # --- replication --------------------------------------------------------------------

    def replication_peers(self) -> list[PeerInfo]:
        """Peers under ``replication/peers``, in peer-id order."""
        peers_path = self.path("replication", "peers")
        result = []
        for peer_id in self._children(peers_path):
            path = f"{peers_path}/{peer_id}"
            data = self._get(path)
            if not data:
                continue  # removed meanwhile
            config = decode_replication_peer(data, "auto", path)
            state_data = self._get(f"{path}/peer-state")
            state = decode_replication_state(state_data, f"{path}/peer-state") \
                if state_data else None
            table_cfs = config.table_cfs
            legacy = self._get(f"{path}/tableCFs")
            if not table_cfs and legacy:
                text = strip_metadata(legacy).decode("utf-8", "replace")
                table_cfs = parse_legacy_table_cfs(text)
            result.append(PeerInfo(peer_id, config.cluster_key, state, table_cfs,
                                   detect_peer_schema(data, path), config))
        return result

    def queues_location(self) -> str:
        """``"zookeeper"`` or ``"table hbase:replication"`` (rule in the module docstring)."""
        if self._exists(self.path("replication", "rs")):
            return QUEUES_IN_ZOOKEEPER
        if self._children(self.path("replication", "peers")):
            return QUEUES_IN_TABLE
        return QUEUES_IN_ZOOKEEPER

    def replication_queues(self) -> list[QueueInfo]:
        """Every queue under ``replication/rs``; empty when the queues live in a table."""
        if self.queues_location() != QUEUES_IN_ZOOKEEPER:
            log.info("replication queues of %s live in %s; not read from ZooKeeper",
                     self.hosts, QUEUES_IN_TABLE)
            return []
        rs_path = self.path("replication", "rs")
        result = []
        for server in self._children(rs_path):
            if not is_server_name(server):
                continue  # transient claim markers (cversion_...) and the like
            for queue_id in self._children(f"{rs_path}/{server}"):
                if queue_id == _RS_LOCK_ZNODE:
                    continue
                result.append(self._queue(ServerName.parse(server), queue_id,
                                          f"{rs_path}/{server}/{queue_id}"))
        return result

    def _queue(self, server: ServerName, queue_id: str, path: str) -> QueueInfo:
        wals: dict[str, int] = {}
        for wal in self._children(path):
            data = self._get(f"{path}/{wal}")
            if data is not None:
                wals[wal] = decode_wal_position(data, f"{path}/{wal}")
        parsed = parse_queue_id(queue_id)
        return QueueInfo(server, queue_id, parsed.peer_id, parsed.dead_servers, wals)

    # --- the migration lock ---------------------------------------------------------------

    def lock(self, migration: str, identifier: str,
             timeout: float | None = DEFAULT_LOCK_TIMEOUT) -> MigrationLock:
        """The lock of one migration at ``<lock_root>/<migration>`` (not yet acquired).
        ``identifier`` (e.g. ``host:pid run-id``) is what a waiting process is told; a
        blocking acquire gives up after ``timeout`` s with MigrationLockedError."""
        if not migration or "/" in migration or migration in (".", ".."):
            raise ConfigError(f"migration name {migration!r} cannot name a lock znode")
        return MigrationLock(self.client, f"{self.lock_root}/{migration}", identifier,
                             migration, timeout)
