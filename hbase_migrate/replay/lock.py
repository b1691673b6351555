"""The migration lock: two replays of one migration never run at once (DESIGN 4.4).

It is a kazoo lock on the source's ZooKeeper, under ``/hbase-migrate/locks/<migration>``;
a second run waits up to the job's ``lock_timeout`` and then fails with
:class:`~hbase_migrate.cluster.errors.MigrationLockedError` naming the holder. A source
without ZooKeeper (a bare HBase root folder) has no lock.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager

from hbase_migrate.cluster.zookeeper import HBaseZooKeeper
from hbase_migrate.replay.job import ReplayJob


def lock_identifier(job: ReplayJob) -> str:
    """What a waiting process is told about the holder: host, pid and kind of run."""
    return f"{socket.gethostname()}:{os.getpid()} {job.step_kind} ({job.mode})"


@contextmanager
def migration_lock(job: ReplayJob) -> Iterator[str | None]:
    """Hold the migration's lock for the block; yields the identifier (None: no lock)."""
    endpoints = job.source.endpoints()
    if not endpoints.zookeeper:
        yield None
        return
    identifier = lock_identifier(job)
    with HBaseZooKeeper(endpoints.zookeeper, endpoints.znode_parent) as zk:
        lock = zk.lock(job.name, identifier, timeout=job.lock_timeout)
        lock.acquire()
        try:
            yield identifier
        finally:
            lock.release()
