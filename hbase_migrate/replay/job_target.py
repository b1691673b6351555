"""Where a replay job's mutations go by default: the migration's target cluster, over
``[replay] writers`` connections paced by the replay limit; opened per run
(:func:`open_job_target`), over clients lent by the process (:func:`lent_job_target`), or
on a thread of its own while the run plans (:class:`Opening`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

from hbase_migrate.hbase import open_cluster
from hbase_migrate.limits import ThrottlePlan, throttle_for
from hbase_migrate.ranges.lent import lent_client
from hbase_migrate.replay.apply import ReplayTarget
from hbase_migrate.replay.client_target import ClientTarget
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.partitioned import RowPartitionedTarget
from hbase_migrate.replay.targets import open_target
from hbase_migrate.replay.throttled import ThrottledTarget


def open_job_target(job: ReplayJob, tasks: int = 1) -> ReplayTarget:
    """The migration's target cluster (its endpoints re-read on reconnect: a restart may
    move the ports) over ``[replay] writers`` connections, paced by the replay limit (of
    which this is one of ``tasks``)."""
    targets: list[ReplayTarget] = []
    try:
        for _ in range(job.spec.replay.writers):
            targets.append(open_target(
                job.target, allow_lossy_deletes=job.spec.replay.allow_lossy_deletes,
                force_thrift1=job.force_thrift1, probe=not targets))
    except BaseException:
        for opened in targets:
            opened.close()
        raise
    return _paced(job, targets, tasks)


def _paced(job: ReplayJob, targets: list[ReplayTarget], tasks: int) -> ReplayTarget:
    target = targets[0] if len(targets) == 1 else RowPartitionedTarget(targets)
    return ThrottledTarget(target, throttle_for(ThrottlePlan.of(job.spec, "replay", tasks)))


@contextmanager
def lent_job_target(job: ReplayJob, tasks: int = 1) -> Iterator[ReplayTarget]:
    """:func:`open_job_target` over clients lent by this process
    (:mod:`hbase_migrate.ranges.lent`), for a task of a process that runs many (a Spark
    worker): connected once per process, not once per WAL file. A Thrift1 target (no client
    to lend) is opened and closed as before."""
    cluster = open_cluster(job.target)
    if not cluster.writes_exactly(job.force_thrift1):
        target = open_job_target(job, tasks)
        try:
            yield target
        finally:
            target.close()
        return
    with ExitStack() as clients:
        name = cluster.name
        targets: list[ReplayTarget] = [
            ClientTarget(clients.enter_context(lent_client(job.target)), cluster=name,
                         owned=False) for _ in range(job.spec.replay.writers)]
        target = _paced(job, targets, tasks)
        try:
            yield target
        finally:
            target.close()  # the throttle and the writers' threads; the clients go back


class Opening:
    """A run's target, opened on a thread of its own from the start of the run, so that
    the target's ZooKeeper and ``hbase:meta`` answer while the source's WALs are listed
    and read for planning. Taken by the replay, or abandoned (closed as soon as it is
    open; a failure to open is then nobody's business: no file needed the target)."""

    def __init__(self, opener: Callable[[], ReplayTarget]) -> None:
        self._lock = threading.Lock()
        self._target: ReplayTarget | None = None
        self._error: BaseException | None = None
        self._abandoned = False
        self._thread = threading.Thread(target=self._open, args=(opener,),
                                        name="replay target", daemon=True)
        self._thread.start()

    def _open(self, opener: Callable[[], ReplayTarget]) -> None:
        try:
            target = opener()
        except BaseException as exc:  # raised by take()
            self._error = exc
            return
        with self._lock:
            self._target = target
            if not self._abandoned:
                return
        target.close()

    def take(self) -> ReplayTarget:
        """The target (waits for it to open), or what opening it raised."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        with self._lock:
            target, self._target = self._target, None
        assert target is not None, "a run's target is taken once"
        return target

    def abandon(self) -> None:
        """Not needed (or needed no longer): closed once open, without waiting for it."""
        with self._lock:
            self._abandoned = True
            target, self._target = self._target, None
        if target is not None:
            target.close()
