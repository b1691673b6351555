"""The throttle of one task of a step: a token bucket per unit (cells, bytes) at the task's
share of each limit, limits re-read while the task runs, and (``adaptive``) an AIMD cap fed
with the gateway's response times.

A task calls :meth:`Throttle.take` after each piece of work (a row scanned, a batch
written) and :meth:`Throttle.call` around gateway calls; :func:`metered` does both for a
scan. Unlimited and not adaptive, :meth:`take` costs one clock read and a comparison.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Self, TypeVar

from hbase_migrate.cluster.sizing import cell_bytes
from hbase_migrate.config import LimitSettings
from hbase_migrate.limits.aimd import Aimd
from hbase_migrate.limits.bucket import TokenBucket
from hbase_migrate.limits.watch import KINDS, LimitWatch, ThrottlePlan
from hbase_migrate.wal.model import Cell

T = TypeVar("T")

MAX_NAP = 0.25  # seconds slept at once, so that a raised limit applies at once
USERS_LOCK = threading.Lock()  # guards Throttle.users, and the registry's tables with it


class Throttle:
    """Limits one task to its share of the step's limits (see the module)."""

    def __init__(self, plan: ThrottlePlan, watch: LimitWatch | None = None, *,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.plan = plan
        self._clock, self._sleep = clock, sleep
        self._watch = watch or LimitWatch(plan, clock=clock)
        self._lock = threading.Lock()
        self._units = dict(KINDS[plan.kind])  # unit -> [limits] key
        self._buckets: dict[str, TokenBucket] = {}
        self._aimd: dict[str, Aimd] = {}
        self._settings: LimitSettings | None = None
        self.idle = True  # no bucket and not adaptive: take() returns at once
        self.adaptive = False
        self.weighs_bytes = False
        self.users = 0  # tasks in this process using it now (see the registry)
        self._refresh(self._clock())

    # --- limits in force ----------------------------------------------------------------

    def _refresh(self, now: float) -> None:
        settings = self._watch.current(now)
        if settings == self._settings:
            return
        with self._lock:
            self._settings = settings
            self.adaptive = settings.adaptive
            for unit, key in self._units.items():
                limit = getattr(settings, key) / self.plan.tasks or None
                if settings.adaptive:
                    aimd = self._aimd.setdefault(unit, Aimd(settings.latency_target_ms / 1000))
                    aimd.target = settings.latency_target_ms / 1000
                    aimd.set_ceiling(limit)
                else:
                    self._aimd.pop(unit, None)
                self._set_rate(unit, now)
            self.weighs_bytes = "bytes" in self._buckets or (
                self.adaptive and "bytes" in self._units)
            self.idle = not self._buckets and not self.adaptive

    def _set_rate(self, unit: str, now: float) -> None:
        """The bucket of ``unit`` at the rate in force (none when unlimited)."""
        rate = self._rate(unit)
        bucket = self._buckets.get(unit)
        if rate is None:
            self._buckets.pop(unit, None)
        elif bucket is None:
            self._buckets[unit] = TokenBucket(rate)
        elif bucket.rate != rate:
            bucket.set_rate(rate, now)

    def _rate(self, unit: str) -> float | None:
        aimd = self._aimd.get(unit)
        if aimd is not None:
            return aimd.rate()
        assert self._settings is not None
        return getattr(self._settings, self._units[unit]) / self.plan.tasks or None

    def quantum(self, seconds: float = MAX_NAP) -> int | None:
        """About ``seconds`` worth of cells at the rate in force (None: unlimited): how
        much one call should carry so that writes follow the rate closely."""
        with self._lock:
            rate = self._rate("cells") if not self.idle else None
        return None if rate is None else max(1, int(rate * seconds))

    def rates(self) -> dict[str, float | None]:
        """This task's rate in force per ``[limits]`` key (None: unlimited)."""
        with self._lock:
            return {key: self._rate(unit) for unit, key in self._units.items()}

    # --- the hot path -------------------------------------------------------------------

    def take(self, cells: int, nbytes: int = 0) -> None:
        """Account for ``cells`` (and ``nbytes``) done; wait while over the rate."""
        now = self._clock()
        if now >= self._watch.next_read:
            self._refresh(now)
        if self.idle:
            return
        with self._lock:
            for unit, amount in (("cells", cells), ("bytes", nbytes)):
                if amount:
                    bucket = self._buckets.get(unit)
                    if bucket is not None:
                        bucket.spend(amount, now)
                    aimd = self._aimd.get(unit)
                    if aimd is not None:
                        aimd.taken(amount, now)
        while True:
            with self._lock:
                wait = max((b.wait(now) for b in self._buckets.values()), default=0.0)
            if wait <= 0:
                return
            self._sleep(min(wait, MAX_NAP))
            now = self._clock()
            if now >= self._watch.next_read:
                self._refresh(now)

    def observe(self, seconds: float, ok: bool = True) -> None:
        """One gateway call took ``seconds`` (and failed unless ``ok``): the AIMD signal."""
        if not self.adaptive:
            return
        now = self._clock()
        with self._lock:
            for unit, aimd in self._aimd.items():
                aimd.observe(seconds, ok, now)
                self._set_rate(unit, now)

    @contextmanager
    def call(self) -> Iterator[None]:
        """Time the gateway call made inside (a failure is observed as one)."""
        if not self.adaptive:
            yield
            return
        began = self._clock()
        try:
            yield
        except Exception:
            self.observe(self._clock() - began, ok=False)
            raise
        self.observe(self._clock() - began)

    # --- in use -------------------------------------------------------------------------

    def __enter__(self) -> Self:
        with USERS_LOCK:
            self.users += 1
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        with USERS_LOCK:
            self.users = max(0, self.users - 1)


def metered(pieces: Iterable[list[Cell]], throttle: Throttle | None) -> Iterator[list[Cell]]:
    """``pieces`` of a scan, each taken from ``throttle`` as it comes (and each fetch timed
    when the throttle is adaptive)."""
    if throttle is None:
        return iter(pieces)
    return _metered(pieces, throttle, _piece_weight)


def metered_batches(batches: Iterable[list[list[Cell]]], throttle: Throttle | None
                    ) -> Iterator[list[list[Cell]]]:
    """:func:`metered` a reply's pieces at a time (``Client.scan_batches``)."""
    if throttle is None:
        return iter(batches)
    return _metered(batches, throttle, _batch_weight)


def _piece_weight(piece: list[Cell], nbytes: bool) -> tuple[int, int]:
    return len(piece), sum(map(cell_bytes, piece)) if nbytes else 0


def _batch_weight(batch: list[list[Cell]], nbytes: bool) -> tuple[int, int]:
    return (sum(map(len, batch)),
            sum(cell_bytes(c) for piece in batch for c in piece) if nbytes else 0)


def _metered(items: Iterable[T], throttle: Throttle,
             weight: Callable[[T, bool], tuple[int, int]]) -> Iterator[T]:
    it = iter(items)
    clock = time.monotonic
    while True:
        if throttle.adaptive:
            began = clock()
            try:
                item = next(it)
            except StopIteration:
                return
            except Exception:
                throttle.observe(clock() - began, ok=False)
                raise
            throttle.observe(clock() - began)
        else:
            found: T | None = next(it, None)
            if found is None:
                return
            item = found
        throttle.take(*weight(item, throttle.weighs_bytes))
        yield item
