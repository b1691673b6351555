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
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext

from kazoo.protocol.states import KazooState

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cluster.errors import MigrationLockedError
from hbase_migrate.cluster.zk.zookeeper import HBaseZooKeeper, holder_is_dead
from hbase_migrate.hbase import open_cluster
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


class HeldLock:
    """The migration's lock while held. :meth:`check`, before each run of a long hold (a
    follow), takes a ZooKeeper lock again whose session expired during an outage (its node
    went with the session), and fails when a ledger lease was taken over."""

    def __init__(self, identifier: str, check: Callable[[], None]) -> None:
        self.identifier = identifier
        self._check = check

    def check(self) -> None:
        self._check()


@contextmanager
def migration_lock(job: ReplayJob, ledger: Ledger | None = None) -> Iterator[HeldLock]:
    """Hold the migration's lock for the block (a lease in ``ledger``, the run's own, when
    the source has no ZooKeeper; without one, in the job's ledger opened for it)."""
    identifier = lock_identifier(job)
    endpoints = open_cluster(job.source).endpoints
    if not endpoints.zookeeper:
        with ledger_lease(_ledger_of(job, ledger), f"migration/{job.lock_name}", identifier,
                          job.name, job.lock_timeout) as check:
            yield HeldLock(identifier, check)
        return
    with HBaseZooKeeper(endpoints.zookeeper, endpoints.znode_parent,
                        **endpoints.client_auth) as zk:
        locks = [zk.lock(job.lock_name, identifier, timeout=job.lock_timeout)]
        locks[0].acquire()
        expired = threading.Event()
        zk.client.add_listener(lambda state: expired.set() if state == KazooState.LOST
                               else None)

        def take_again() -> None:
            if not expired.is_set() or not zk.client.connected:
                return  # held, or the quorum is still away (nobody else can take it)
            expired.clear()
            log.warning("the ZooKeeper session holding the lock of %s expired; taking the "
                        "lock again", job.name)
            locks.append(zk.lock(job.lock_name, identifier, timeout=job.lock_timeout))
            locks[-1].acquire()  # MigrationLockedError when another run took it meanwhile

        try:
            yield HeldLock(identifier, take_again)
        finally:
            if zk.client.connected:
                locks[-1].release()
            else:  # the quorum is away: closing the session drops the lock's ephemeral node
                log.warning("ZooKeeper quorum %s unreachable: the lock of %s goes with this "
                            "session", endpoints.zookeeper, job.name)


def _take_lease(ledger: Ledger, name: str, identifier: str, migration: str, timeout: float,
                ttl_ms: int) -> None:
    """Wait up to ``timeout`` s for the lease (at once from a holder whose process is
    gone)."""
    deadline = time.monotonic() + timeout
    while True:
        holder, expires = ledger.take_lease(name, identifier, ttl_ms)
        if holder == identifier:
            return
        if holder_is_dead(holder):
            holder, expires = ledger.take_lease(name, identifier, ttl_ms, steal_from=holder)
            if holder == identifier:
                return
        if time.monotonic() >= deadline:
            state = "its process is gone" if holder_is_dead(holder) else "alive"
            raise MigrationLockedError(
                migration, holder, f"ledger lease {name!r}", timeout,
                detail=f"{state}; the lease expires at {format_time(expires)} unless renewed")
        time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))


def _ledger_of(job: ReplayJob, ledger: Ledger | None) -> Ledger | str:
    return job.ledger_url if ledger is None else ledger


@contextmanager
def ledger_lease(ledger: Ledger | str, name: str, identifier: str, migration: str,
                 timeout: float, ttl_ms: int = LEASE_TTL_MS) -> Iterator[Callable[[], None]]:
    """Hold the lease ``name`` in ``ledger`` (an open one, or its URL: opened for the
    block) for the block; yields a check that fails once another holder took the lease
    over."""
    with Ledger.open(ledger) if isinstance(ledger, str) else nullcontext(ledger) as opened:
        _take_lease(opened, name, identifier, migration, timeout, ttl_ms)
        stop = threading.Event()
        lost: list[str] = []

        def renew() -> None:
            while not stop.wait(min(RENEW_EVERY_S, ttl_ms / 3000)):
                try:
                    holder, _ = opened.take_lease(name, identifier, ttl_ms)
                except Exception as exc:  # retried at the next tick
                    log.warning("cannot renew the lease %s: %s", name, exc)
                    continue
                if holder != identifier:
                    lost.append(holder)
                    log.error("the lease %s was taken over by %s", name, holder)
                    return

        def taken_over() -> MigrationLockedError:
            return MigrationLockedError(
                migration, lost[0], f"ledger lease {name!r}", 0.0,
                detail="it was taken over while this run held it: another run may have "
                       "worked at the same time")

        def check() -> None:
            if lost:
                raise taken_over()

        renewer = threading.Thread(target=renew, name=f"lease {name}", daemon=True)
        renewer.start()
        try:
            yield check
        finally:
            stop.set()
            renewer.join()
            opened.release_lease(name, identifier)
        if lost:
            raise taken_over()


# -- the hold a validation from both snapshots takes -------------------------------------------

RUN_WAIT_S = 300.0  # how long a run waits for a hold to end (a target's snapshot: seconds)


def run_lease_name(migration: str, lock_name: str) -> str:
    """The ledger lease each replay run of ``lock_name`` holds while it reads and applies."""
    return f"replay-run/{migration}/{lock_name}"


@contextmanager
def run_lease(job: ReplayJob, ledger: Ledger | None = None) -> Iterator[None]:
    """Held by each run, from before it lists the WALs until its offsets are recorded (in
    ``ledger``, the run's own; without one, the job's opened for it): a validation from
    both snapshots takes it (:func:`held_still`) to keep the target still at the offsets
    the ledger holds while the target's snapshot is taken."""
    with ledger_lease(_ledger_of(job, ledger), run_lease_name(job.name, job.lock_name),
                      lock_identifier(job), job.name, max(job.lock_timeout, RUN_WAIT_S)):
        yield


@contextmanager
def held_still(ledger_url: str, migration: str, why: str, timeout: float = RUN_WAIT_S
               ) -> Iterator[None]:
    """No replay run of ``migration``'s (source) stream runs during the block: it waits for
    the run under way to end (at most ``timeout`` s) and the next waits for the block."""
    identifier = f"{socket.gethostname()}:{os.getpid()}/{uuid.uuid4().hex[:6]} {why}"
    with ledger_lease(ledger_url, run_lease_name(migration, migration), identifier,
                      migration, timeout):
        yield
