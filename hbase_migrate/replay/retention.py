"""Whether the source keeps its archived WALs long enough for replay to read them.

HBase's log cleaner deletes an archived WAL ``hbase.master.logcleaner.ttl`` after archiving
(default 10 minutes) unless a replication peer still queues it. So retention is:

* ``pinned`` (guaranteed): a disabled replication peer queues the WALs of every live
  server: nothing since the peer was added can be deleted before replay reads it (1.x/2.x
  keep the queues in ZooKeeper; 3.x in the table ``hbase:replication``, read here too:
  ``replay.table_queues``);
* ``at-risk``: no pin, and replay lists the source less often than every half TTL: a file
  can be archived and deleted between two listings (``--follow`` refuses such an interval
  unless forced);
* ``ttl``: no pin; files survive as long as replay lists at least every half TTL.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.timeutil import format_duration

if TYPE_CHECKING:
    from hbase_migrate.cluster.zk.zookeeper import HBaseZooKeeper

log = logging.getLogger(__name__)
PINNED, TTL, AT_RISK = "pinned", "ttl", "at-risk"


@dataclass(frozen=True)
class ReplicationView:
    """What ZooKeeper says about the source's replication: live servers, peers, queues."""

    live_servers: tuple[str, ...]
    disabled_peers: tuple[str, ...]
    queues_location: str
    queued: Mapping[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    """(server, peer id) -> WAL names the peer still queues (in the table layout, the first
    file of each WAL group still needed: the later ones are too)."""

    def queued_names(self) -> dict[str, set[str]]:
        """Server -> the WAL names disabled peers queue for it: files the log cleaner must
        keep (an enabled peer's queue moves on and its shipped files may go)."""
        names: dict[str, set[str]] = {}
        for (server, peer), wals in self.queued.items():
            if peer in self.disabled_peers:
                names.setdefault(server, set()).update(wals)
        return names

    def pinning_peer(self) -> str | None:
        """A disabled peer with a queue on every live server, if any."""
        for peer in self.disabled_peers:
            if self.live_servers and all((s, peer) in self.queued for s in self.live_servers):
                return peer
        return None


def read_replication(endpoints: ClusterEndpoints) -> ReplicationView | None:
    """The replication view of a cluster, None when it names no ZooKeeper (one given by
    ``hbase+rpc://`` alone says so: the peers are kept there, on 2.x the queues too)."""
    if not endpoints.zookeeper:
        if endpoints.bootstrap:
            log.warning("replication state of %s unknown (retention assumed unpinned): the "
                        "replication peers (on HBase 2.x the queues too) are kept in ZooKeeper "
                        "(3.x: its peer storage by default) and the cluster is given by an "
                        "hbase+rpc:// uri only; add zookeeper = \"host:2181\" to read them",
                        endpoints.name)
        return None
    from hbase_migrate.cluster.errors import ClusterError
    from hbase_migrate.cluster.zk.zookeeper import HBaseZooKeeper

    try:
        return _read(HBaseZooKeeper(endpoints.zookeeper, endpoints.znode_parent,
                                    **endpoints.client_auth), endpoints)
    except ClusterError as exc:
        log.warning("replication state of %s unknown (retention assumed unpinned): %s",
                    endpoints.name, exc)
        return None


def _read(client: HBaseZooKeeper, endpoints: ClusterEndpoints) -> ReplicationView:
    from hbase_migrate.cluster.zk.zookeeper import QUEUES_IN_TABLE, QUEUES_IN_ZOOKEEPER

    with client as zk:
        live = tuple(sorted(str(s) for s in zk.live_servers()))
        disabled = tuple(p.peer_id for p in zk.replication_peers() if not p.enabled)
        location = zk.queues_location()
        if location == QUEUES_IN_ZOOKEEPER:
            queued = {(str(q.server), q.peer_id): tuple(sorted(q.wals))
                      for q in zk.replication_queues() if not q.recovered}
        elif zk.meta_server() is None:  # no hbase:meta to find the table's regions in
            log.warning("replication queues of %s unread: ZooKeeper names no server of "
                        "hbase:meta, where %s is found", endpoints.name, QUEUES_IN_TABLE)
            queued = {}
        else:
            queued = table_queued(endpoints)
        return ReplicationView(live, disabled, location, queued)


def table_queued(endpoints: ClusterEndpoints) -> dict[tuple[str, str], tuple[str, ...]]:
    """(server, peer) -> the first file each WAL group still needs, from ``hbase:replication``
    (HBase 3.0's queues, :mod:`~hbase_migrate.replay.table_queues`): every later file of the
    group is needed too, as the ZooKeeper layout's oldest queued file says."""
    from hbase_migrate.hbase import open_cluster
    from hbase_migrate.replay.table_queues import QUEUE_FAMILY, QUEUE_TABLE, queues_from_rows

    with open_cluster(endpoints).client() as cluster:
        rows = cluster.scan(QUEUE_TABLE, columns=[(QUEUE_FAMILY, None)])
        try:
            queues = queues_from_rows(rows)
        except ValueError as exc:
            log.warning("replication queues of %s unread: %s", endpoints.name, exc)
            return {}
    return {(q.server, q.peer_id): q.oldest_needed() for q in queues if not q.recovered}


@dataclass(frozen=True)
class Retention:
    """The verdict, with the facts behind it (``interval`` None: not following)."""

    kind: str
    archive_ttl: int
    interval: int | None
    peer: str | None
    detail: str

    @property
    def guaranteed(self) -> bool:
        return self.kind == PINNED

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def assess(view: ReplicationView | None, archive_ttl: int, interval: int | None) -> Retention:
    """Retention of the source's archived WALs for replay runs ``interval`` ms apart."""
    peer = view.pinning_peer() if view is not None else None
    ttl = format_duration(archive_ttl)
    if peer is not None:
        return Retention(PINNED, archive_ttl, interval, peer,
                         f"disabled replication peer {peer!r} queues the WALs of every live "
                         "server: the log cleaner keeps them until replay has read them")
    if interval is not None and interval * 2 >= archive_ttl:
        return Retention(AT_RISK, archive_ttl, interval, None,
                         f"archived WALs live {ttl} (archive TTL) and replay lists every "
                         f"{format_duration(interval)}: a file can be archived and deleted "
                         "between two listings")
    every = format_duration(archive_ttl // 2)
    return Retention(TTL, archive_ttl, interval, None,
                     f"archived WALs are kept {ttl} (archive TTL), no replication peer pins "
                     f"them: replay must list the source at least every {every}")
