"""Replication queues of one peer, kept as HBase 2.x keeps them, and what they pin.

Each region server has a queue (id = the peer id) listing its WAL files with the byte offset
already shipped, mirrored to ZooKeeper under ``<parent>/replication/rs/<server>/<queue>/<wal>``
when a registrar is given. The shipping rule of this simulated source:

* while the peer is **enabled**, everything written is shipped at once: a live file's
  position follows its last entry (written to ZooKeeper on :meth:`sync` and on roll), and a
  file leaves the queue when it is closed (rolled, or its server died), as HBase's source
  drops a WAL once it has read it to the end and moved on to the next one;
* while the peer is **disabled**, nothing ships: new files join the queue at offset 0 and
  stay there. Re-enabling ships (drops) every closed file.

A dead server's queue is claimed by a live server as ``<peer>-<dead server>``
(``ReplicationQueueInfo``). Every file named in a queue is pinned: the log cleaner keeps it
(HBase's ``ReplicationLogCleaner``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hbase_migrate.cluster.zk.replication_payload import claimed_queue_id
from hbase_migrate.wal.names import ServerName
from minihbase.zkregistry import ZkRegistrar


@dataclass
class _Queue:
    server: ServerName
    queue_id: str
    positions: dict[str, int] = field(default_factory=dict)
    closed: set[str] = field(default_factory=set)
    dirty: set[str] = field(default_factory=set)


class ReplicationQueues:
    """The queues of peer ``peer_id``; the caller serialises calls (cluster lock)."""

    def __init__(self, peer_id: str, registrar: ZkRegistrar | None = None,
                 enabled: bool = True) -> None:
        self.peer_id = peer_id
        self.registrar = registrar
        self.enabled = enabled
        self._queues: dict[tuple[str, str], _Queue] = {}

    def _queue(self, server: ServerName, queue_id: str | None = None) -> _Queue:
        qid = queue_id or self.peer_id
        key = (str(server), qid)
        if key not in self._queues:
            self._queues[key] = _Queue(server, qid)
        return self._queues[key]

    def wal_created(self, server: ServerName, wal: str) -> None:
        queue = self._queue(server)
        queue.positions[wal] = 0
        if self.registrar is not None:
            self.registrar.add_queue_wal(server, queue.queue_id, wal)

    def written(self, server: ServerName, wal: str, end: int) -> None:
        queue = self._queue(server)
        if self.enabled and wal in queue.positions:
            queue.positions[wal] = end
            queue.dirty.add(wal)

    def wal_closed(self, server: ServerName, wal: str) -> None:
        queue = self._queue(server)
        queue.closed.add(wal)
        if self.enabled:
            self._ship_closed(queue)
        else:
            self._sync_queue(queue)

    def _ship_closed(self, queue: _Queue) -> None:
        for wal in sorted(queue.closed):
            queue.positions.pop(wal, None)
            queue.dirty.discard(wal)
            if self.registrar is not None:
                self.registrar.remove_queue_wal(queue.server, queue.queue_id, wal)
        queue.closed.clear()
        self._sync_queue(queue)

    def server_died(self, dead: ServerName, claimant: ServerName) -> None:
        """``claimant`` takes over the dead server's queues (all their files are closed)."""
        if self.registrar is not None:
            self.registrar.claim_queues(dead, claimant)
        for key in [k for k in self._queues if k[0] == str(dead)]:
            old = self._queues.pop(key)
            new = self._queue(claimant, claimed_queue_id(old.queue_id, dead))
            new.positions.update(old.positions)
            new.closed.update(old.positions)
            if self.enabled:
                self._ship_closed(new)

    def adopt_dead_queues(self, live: set[ServerName], claimant: ServerName) -> None:
        """At start: queues left in ZooKeeper by servers that are not live (an earlier run)
        are claimed by ``claimant``; their files stay pinned until shipped."""
        if self.registrar is None:
            return
        rs_path = self.registrar.path("replication", "rs")
        if not self.registrar.client.exists(rs_path):
            return
        for child in sorted(self.registrar.client.get_children(rs_path)):
            try:
                dead = ServerName.parse(child)
            except ValueError:
                continue
            if dead in live:
                continue
            for queue_id in self.registrar.claim_queues(dead, claimant):
                queue = self._queue(claimant, queue_id)
                path = self.registrar.path("replication", "rs", str(claimant), queue_id)
                for wal in self.registrar.client.get_children(path):
                    queue.positions[wal] = 0
                    queue.closed.add(wal)
                if self.enabled:
                    self._ship_closed(queue)

    def set_enabled(self, enabled: bool) -> None:
        """Enable (ship what waits) or disable the peer, and write its ``peer-state``."""
        self.enabled = enabled
        if self.registrar is not None:
            self.registrar.set_peer_state(self.peer_id, enabled)
        if enabled:
            for queue in list(self._queues.values()):
                self._ship_closed(queue)

    def _sync_queue(self, queue: _Queue) -> None:
        if self.registrar is not None:
            for wal in sorted(queue.dirty):
                if wal in queue.positions:
                    self.registrar.set_queue_position(queue.server, queue.queue_id,
                                                      wal, queue.positions[wal])
        queue.dirty.clear()

    def sync(self) -> None:
        """Write changed positions to ZooKeeper (called periodically)."""
        for queue in list(self._queues.values()):
            self._sync_queue(queue)

    def pinned(self) -> set[str]:
        """Names of every WAL file still in a queue."""
        return {wal for q in self._queues.values() for wal in q.positions}

    def describe(self) -> dict[str, dict[str, int]]:
        return {f"{k[0]}/{k[1]}": dict(sorted(q.positions.items()))
                for k, q in sorted(self._queues.items())}
