"""The migration lock: two replays of one migration never run at once (DESIGN 4.4).

With ZooKeeper it is a kazoo lock on the source's quorum under
``/hbase-migrate/locks/<migration>``; without one, a lease row in the ledger itself (renewed
in the background while held, taken over once expired, or at once from a holder on this
host whose process is gone). A second run waits up to the job's ``lock_timeout`` and then
fails with :class:`~hbase_migrate.cluster.errors.MigrationLockedError` naming the holder,
whether it is alive, and when the lock frees itself.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cluster.errors import MigrationLockedError
from hbase_migrate.cluster.zookeeper import HBaseZooKeeper, holder_is_dead
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.timeutil import format_time

# Well above the ledger's busy timeout (30 s), so that a renewal (every 10 s) that waits
# for the write lock cannot let the lease lapse while its holder works.
log = logging.getLogger(__name__)

LEASE_TTL_MS = 120_000
RENEW_EVERY_S = 10.0


def lock_identifier(job: ReplayJob) -> str:
    """What a waiting process is told about the holder: host, pid and kind of run."""
    token = uuid.uuid4().hex[:6]
    return f"{socket.gethostname()}:{os.getpid()}/{token} {job.step_kind} ({job.mode})"


@contextmanager
def migration_lock(job: ReplayJob) -> Iterator[str]:
    """Hold the migration's lock for the block; yields the holder identifier."""
    identifier = lock_identifier(job)
    endpoints = job.source.endpoints()
    if not endpoints.zookeeper:
        with ledger_lease(job.ledger_url, f"migration/{job.lock_name}", identifier,
                          job.name, job.lock_timeout):
            yield identifier
        return
    with HBaseZooKeeper(endpoints.zookeeper, endpoints.znode_parent) as zk:
        lock = zk.lock(job.lock_name, identifier, timeout=job.lock_timeout)
        lock.acquire()
        try:
            yield identifier
        finally:
            lock.release()


@contextmanager
def ledger_lease(url: str, name: str, identifier: str, migration: str, timeout: float,
                 ttl_ms: int = LEASE_TTL_MS) -> Iterator[None]:
    """Hold the lease ``name`` in the ledger at ``url`` for the block."""
    with Ledger.open(url) as ledger:
        deadline = time.monotonic() + timeout
        while True:
            holder, expires = ledger.take_lease(name, identifier, ttl_ms)
            if holder == identifier:
                break
            if holder_is_dead(holder):
                holder, expires = ledger.take_lease(name, identifier, ttl_ms, steal_from=holder)
                if holder == identifier:
                    break
            if time.monotonic() >= deadline:
                state = "its process is gone" if holder_is_dead(holder) else "alive"
                raise MigrationLockedError(
                    migration, holder, f"ledger lease {name!r}", timeout,
                    detail=f"{state}; the lease expires at {format_time(expires)} unless "
                           "renewed")
            time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
        stop = threading.Event()
        lost: list[str] = []

        def renew() -> None:
            while not stop.wait(min(RENEW_EVERY_S, ttl_ms / 3000)):
                try:
                    holder, _ = ledger.take_lease(name, identifier, ttl_ms)
                except Exception as exc:  # retried at the next tick
                    log.warning("cannot renew the lease %s: %s", name, exc)
                    continue
                if holder != identifier:
                    lost.append(holder)
                    log.error("the lease %s was taken over by %s", name, holder)
                    return

        renewer = threading.Thread(target=renew, name=f"lease {name}", daemon=True)
        renewer.start()
        try:
            yield
        finally:
            stop.set()
            renewer.join()
            ledger.release_lease(name, identifier)
        if lost:
            raise MigrationLockedError(migration, lost[0], f"ledger lease {name!r}", 0.0,
                                       detail="it was taken over while this run held it: "
                                       "another run may have worked at the same time")
