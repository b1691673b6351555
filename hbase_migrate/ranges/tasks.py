"""The work of one key range, as a picklable job plus a function of the range: what a Spark
task (or the in-process engine) runs. Each task borrows its clients from those its process
keeps (:mod:`hbase_migrate.ranges.lent`: connected once per process, not once per range)
and opens the ledger for the copy; a job's ``throttle`` plan gives each task its share of
the step's ``[limits]``.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

from hbase_migrate.cluster.requests import counted
from hbase_migrate.config import ClusterSpec
from hbase_migrate.hbase.bigtable_target import AcceptedLosses
from hbase_migrate.limits import Throttle, ThrottlePlan, throttle_for
from hbase_migrate.ranges.copy import DEFAULT_BATCH_CELLS, copy_range
from hbase_migrate.ranges.keyrange import KeyRange, RangeError
from hbase_migrate.ranges.lent import lent_client
from hbase_migrate.ranges.stats import Keep, RangeStats, range_stats


@contextmanager
def task_throttle(plan: ThrottlePlan | None) -> Iterator[Throttle | None]:
    """The throttle of a task of the step ``plan`` describes (None: no plan, no limits)."""
    if plan is None:
        yield None
        return
    with throttle_for(plan) as throttle:
        yield throttle


def target_table(tables: tuple[tuple[str, str], ...], key_range: KeyRange) -> str:
    """The target table of ``key_range``'s (source) table."""
    for source, target in tables:
        if source == key_range.table:
            return target
    raise RangeError(f"range {key_range}: table {key_range.table} is not in the job")


@dataclass(frozen=True)
class RangeCopy:
    """One range copied: what was read and written, and how long it took."""

    range: KeyRange
    rows: int
    cells: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {**self.range.to_json(), "rows": self.rows, "cells": self.cells,
                "seconds": round(self.seconds, 3)}


@dataclass(frozen=True)
class CopyJob:
    """What every copy task of one snapshot shares; the ledger records each range done."""

    source: ClusterSpec
    target: ClusterSpec
    tables: tuple[tuple[str, str], ...]  # source table -> target table
    time_range: tuple[int, int]
    ledger_url: str | None = None
    migration_id: int | None = None
    step_id: int | None = None
    batch_cells: int = DEFAULT_BATCH_CELLS
    throttle: ThrottlePlan | None = None

    def target_table(self, key_range: KeyRange) -> str:
        return target_table(self.tables, key_range)


def copy_range_task(job: CopyJob, key_range: KeyRange) -> RangeCopy:
    """Copy one range and record it in the ledger as done."""
    began = time.monotonic()
    with lent_client(job.source) as source, lent_client(job.target) as target, \
            task_throttle(job.throttle) as throttle:
        try:
            copied = copy_range(source, target, key_range.table, job.target_table(key_range),
                                key_range.start, key_range.stop, job.time_range,
                                job.batch_cells, throttle)
        except Exception as exc:
            raise RangeError(f"copy of range {key_range} failed: {exc}") from exc
    record_copied(job, key_range, copied.rows, copied.cells)
    return RangeCopy(key_range, copied.rows, copied.cells, time.monotonic() - began)


def record_copied(job: CopyJob, key_range: KeyRange, rows: int, cells: int) -> None:
    """``key_range`` recorded as copied in the job's ledger (none: the caller records what
    the task returns)."""
    if job.ledger_url is not None and job.migration_id is not None:
        from hbase_migrate.audit.ledger import Ledger

        with Ledger.open(job.ledger_url) as ledger:
            ledger.record_range_copied(job.migration_id, key_range.table, key_range.start,
                                       job.step_id, rows, cells)


@dataclass(frozen=True)
class RangePair:
    """One range's statistics on both sides; ``source_requests``: the requests reading its
    source side sent to the source's region servers, as the transports counted them
    (:mod:`hbase_migrate.cluster.requests`; none when read from snapshot files);
    ``accepted_losses``: the source's cells left out as accepted losses to a Bigtable
    target (:mod:`hbase_migrate.bigtable.accepted`), ``(name, cells)`` by name."""

    source: RangeStats
    target: RangeStats
    source_requests: int = 0
    accepted_losses: tuple[tuple[str, int], ...] = ()
    target_requests: int = 0  # those reading its target side sent (none from snapshot files)

    @property
    def range(self) -> KeyRange:
        return self.source.range

    @property
    def equal(self) -> bool:
        s, t = self.source, self.target
        return (s.rows, s.cells, s.digest) == (t.rows, t.cells, t.digest)


# (cluster, snapshot, range, now in ms, throttle, keep; table=, tail=) -> the range's
# statistics read from the snapshot's files: ``snapshot.read.snapshot_source_stats``
SnapshotReader = Callable[..., RangeStats]


@dataclass(frozen=True)
class ChecksumJob:
    """What every checksum task of one validation shares."""

    source: ClusterSpec
    target: ClusterSpec
    tables: tuple[tuple[str, str], ...]
    throttle: ThrottlePlan | None = None
    # ``validate --from snapshot``: (source table, snapshot) whose files the source side
    # reads (with ``snapshot_reader``) instead of scanning the region servers, the TTLs
    # counted at ``now_ms``
    source_snapshots: tuple[tuple[str, str], ...] = ()
    now_ms: int = 0
    snapshot_reader: SnapshotReader | None = None
    # from both snapshots: (source table, target snapshot) read with ``snapshot_reader``
    # too, and the source's WAL edits past its snapshot's files up to the point both
    # sides stand for (``snapshot.tail.Tail``, added to the source side)
    target_snapshots: tuple[tuple[str, str], ...] = ()
    tail: Any = None
    # records each range's pair in the ledger as it finishes (a resumable validation,
    # ``validate.resume.ChecksumRecorder``); None: the caller records what the tasks return
    recorder: Callable[[RangePair], None] | None = None
    # the source's cells whose loss to a Bigtable target was accepted: left out of the
    # source side (None: every cell counts)
    accepted: AcceptedLosses | None = None

    def target_table(self, key_range: KeyRange) -> str:
        return target_table(self.tables, key_range)

    def source_snapshot(self, key_range: KeyRange) -> str | None:
        return dict(self.source_snapshots).get(key_range.table)


def checksum_range_task(job: ChecksumJob, key_range: KeyRange) -> RangePair:
    """The statistics of one range on the source and on the target, both scanned at once
    (the source on a second thread: two clusters answer in parallel)."""

    lost: Counter[str] = Counter()
    keep: Keep | None = None if job.accepted is None else partial(
        job.accepted.left_out, key_range.table, counts=lost)

    def source_side(throttle: Throttle | None) -> tuple[RangeStats, int]:
        snapshot = job.source_snapshot(key_range)
        with counted() as sent:  # this thread's requests to region servers
            if snapshot is not None and job.snapshot_reader is not None:
                stats = job.snapshot_reader(job.source, snapshot, key_range, job.now_ms,
                                            throttle, keep, tail=job.tail)
            else:
                with lent_client(job.source) as source:
                    stats = range_stats(source, key_range, throttle=throttle, keep=keep)
        return stats, sent.count

    def target_side(throttle: Throttle | None) -> tuple[RangeStats, int]:
        snapshot = dict(job.target_snapshots).get(key_range.table)
        with counted() as sent:
            if snapshot is not None and job.snapshot_reader is not None:
                stats = job.snapshot_reader(job.target, snapshot, key_range, job.now_ms,
                                            throttle, None, table=job.target_table(key_range))
            else:
                with lent_client(job.target) as target:
                    stats = range_stats(target, key_range, job.target_table(key_range),
                                        throttle=throttle)
        return stats, sent.count

    try:
        with task_throttle(job.throttle) as throttle, \
                ThreadPoolExecutor(1, thread_name_prefix=f"scan {key_range.id}") as pool:
            left = pool.submit(source_side, throttle)
            right, target_sent = target_side(throttle)
            source, requests = left.result()
            pair = RangePair(source, right, requests, tuple(sorted(lost.items())),
                             target_sent)
        if job.recorder is not None:
            job.recorder(pair)
        return pair
    except RangeError:
        raise
    except Exception as exc:
        raise RangeError(f"checksums of range {key_range} failed: {exc}") from exc
