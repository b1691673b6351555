"""The token bucket, the AIMD cap and one task's throttle on a model clock (no sleeping):
rates kept, shares taken, limits re-read, back-off and recovery."""

from __future__ import annotations

from typing import Any

import pytest

from hbase_migrate.config import LimitSettings
from hbase_migrate.limits.aimd import Aimd
from hbase_migrate.limits.bucket import TokenBucket
from hbase_migrate.limits.throttle import Throttle
from hbase_migrate.limits.watch import LimitWatch, ThrottlePlan


class Clock:
    """A model clock: sleeping moves it on."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds > 0
        self.now += seconds


def throttle(settings: LimitSettings, clock: Clock, kind: str = "copy", tasks: int = 1,
             ledger: dict[str, Any] | None = None) -> Throttle:
    plan = ThrottlePlan(kind, "m", "sqlite:///unused" if ledger is not None else None,
                        settings, tasks)
    watch = LimitWatch(plan, read=lambda url, name: dict(ledger or {}), clock=clock)
    return Throttle(plan, watch, clock=clock, sleep=clock.sleep)


def test_a_bucket_starts_empty_and_keeps_its_rate() -> None:
    bucket = TokenBucket(100)
    bucket.spend(50, 0.0)
    assert bucket.wait(0.0) == pytest.approx(0.5)
    assert bucket.wait(0.5) == 0
    bucket.spend(10, 10.0)  # idle for long: at most a quarter second saved
    assert bucket.tokens == pytest.approx(15)
    bucket.set_rate(10, 10.0)
    assert bucket.tokens == pytest.approx(2.5)


def test_a_throttle_holds_the_rate_and_each_task_takes_its_share() -> None:
    clock = Clock()
    limited = throttle(LimitSettings(copy_cells_per_second=1000), clock, tasks=2)
    began = clock.now
    for _ in range(50):
        limited.take(100)
    # 5,000 cells at 500 per second (one task of two): ten seconds, less the last batch's wait
    assert clock.now - began == pytest.approx(10.0, abs=0.01)
    assert limited.rates() == {"copy_cells_per_second": 500.0, "copy_bytes_per_second": None}


def test_bytes_are_limited_beside_cells() -> None:
    clock = Clock()
    limited = throttle(LimitSettings(copy_bytes_per_second=1_000_000), clock)
    began = clock.now
    for _ in range(10):
        limited.take(1, nbytes=500_000)
    assert clock.now - began == pytest.approx(5.0, abs=0.01)


def test_unlimited_never_sleeps() -> None:
    clock = Clock()
    free = throttle(LimitSettings(), clock)
    free.take(10**9, 10**12)
    assert clock.now == 1000.0 and free.idle and free.quantum() is None


def test_a_limit_set_in_the_ledger_applies_at_the_next_read() -> None:
    clock = Clock()
    ledger: dict[str, Any] = {}
    limited = throttle(LimitSettings(replay_cells_per_second=100, refresh=2000), clock,
                       "replay", ledger=ledger)
    limited.take(100)
    assert clock.now == pytest.approx(1001.0)
    ledger["replay_cells_per_second"] = 1000
    limited.take(100)  # the rate read last still holds until the refresh is due
    assert clock.now == pytest.approx(1002.0)
    began = clock.now
    for _ in range(10):
        limited.take(100)
    assert clock.now - began == pytest.approx(1.0, abs=0.01)
    ledger["replay_cells_per_second"] = 0
    clock.now += 2
    limited.take(10**6)
    assert limited.idle


def test_aimd_halves_on_slow_or_failed_calls_and_climbs_back_additively() -> None:
    aimd = Aimd(target_seconds=0.1, ceiling=1000)
    assert aimd.rate() == 1000
    aimd.observe(0.5, True, now=0.0)
    assert aimd.rate() == 500
    aimd.observe(0.5, True, now=0.5)  # within the cooldown: one signal
    assert aimd.rate() == 500
    aimd.observe(0.01, False, now=2.0)  # a failed call
    assert aimd.rate() == 250
    for second in range(3, 8):
        aimd.observe(0.01, True, now=float(second))
    # 50 per second (5% of the ceiling) for the five seconds since the failure
    assert aimd.rate() == pytest.approx(500)
    for second in range(8, 30):
        aimd.observe(0.01, True, now=float(second))
    assert aimd.rate() == 1000 and aimd.cap is None
    for second in range(30, 60, 2):  # slow calls forever: down to the floor, not to zero
        aimd.observe(1.0, True, now=float(second))
    assert aimd.rate() == 10


def test_aimd_without_a_ceiling_starts_from_the_measured_throughput() -> None:
    aimd = Aimd(target_seconds=0.2)
    aimd.observe(1.0, True, now=0.0)
    assert aimd.rate() is None  # nothing measured: nothing to lower
    for tick in range(21):
        aimd.taken(100, now=tick / 10)  # 1,000 per second
    aimd.observe(1.0, True, now=2.0)
    assert aimd.rate() == pytest.approx(525, rel=0.01)  # 2,100 over 2 s, halved
    for second in range(3, 40):
        aimd.observe(0.01, True, now=float(second))
    assert aimd.rate() is None  # climbed to twice what it started from: lifted


def test_an_adaptive_throttle_lowers_its_bucket_on_slow_calls() -> None:
    clock = Clock()
    limited = throttle(LimitSettings(validate_cells_per_second=2000, adaptive=True,
                                     latency_target_ms=100), clock, "validate", tasks=2)
    assert limited.rates() == {"validate_cells_per_second": 1000.0}
    with limited.call():
        clock.now += 0.3  # a slow scan call
    assert limited.rates() == {"validate_cells_per_second": 500.0}
    with pytest.raises(OSError), limited.call():
        clock.now += 1.5
        raise OSError("gateway gone")
    assert limited.rates() == {"validate_cells_per_second": 250.0}
    began = clock.now
    for _ in range(10):
        limited.take(50)
    assert clock.now - began == pytest.approx(2.0, abs=0.01)  # 500 cells at 250 per second
