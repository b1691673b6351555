"""Clients kept for the life of a process and lent to one task at a time.

A Spark worker (or the in-process engine) runs many range and replay tasks one after the
other; each would otherwise connect again, and over HBase's own RPC a connection is a
ZooKeeper session, the ``hbase:meta`` lookups of every region, and a TCP connection (with
its SASL exchange) to each region server. :func:`lent_client` hands a task a client that an
earlier task of this process gave back, or a new one, and takes it back when the task ends.

A client is lent to one task at a time (a Thrift client is not shared across threads), and
only to a task of the same cluster, endpoints and ``[gateway]`` settings
(:attr:`~hbase_migrate.hbase.Cluster.reuse_key`): a cluster restarted on new ports (its
``cluster.json`` written anew, so read again) gets new clients. A task that ends with an
error closes its client instead of giving it back. What a kept client knew (its region
locations) may be stale by the next task: the clients find moved regions again as they
find them within a task (relocate and retry).
The clients kept idle are closed when the process exits, or by :func:`close_idle`.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from hbase_migrate.cluster.client import Client
from hbase_migrate.config import ClusterSpec
from hbase_migrate.hbase import open_cluster

MAX_IDLE = 4  # clients kept per cluster (tasks of one process that run at once)

_lock = threading.Lock()
_idle: dict[str, list[Client]] = {}


@contextmanager
def lent_client(cluster: ClusterSpec) -> Iterator[Client]:
    """A client of ``cluster`` for the length of the block: one given back by an earlier
    task of this process, else a new one (:meth:`hbase_migrate.hbase.Cluster.client`).
    It is given back when the block ends, closed when it ends with an error."""
    handle = open_cluster(cluster)
    key = handle.reuse_key
    with _lock:
        kept = _idle.get(key)
        client = kept.pop() if kept else None
    if client is None:
        client = handle.client()
    try:
        yield client
    except BaseException:
        client.close()
        raise
    give_back(key, client)


def give_back(key: str, client: Client) -> None:
    """Keep ``client`` for the next task of ``key`` (closed if :data:`MAX_IDLE` are kept)."""
    with _lock:
        kept = _idle.setdefault(key, [])
        if len(kept) < MAX_IDLE:
            kept.append(client)
            return
    client.close()


def idle_clients(cluster: ClusterSpec) -> int:
    """How many clients of ``cluster`` are kept idle now."""
    with _lock:
        return len(_idle.get(open_cluster(cluster).reuse_key, ()))


def close_idle() -> None:
    """Close every client kept idle (the process's tasks are done)."""
    with _lock:
        clients = [c for kept in _idle.values() for c in kept]
        _idle.clear()
    for client in clients:
        with suppress(Exception):  # closing at exit: a connection already gone is no matter
            client.close()


atexit.register(close_idle)
