"""Adaptive rates: additive increase, multiplicative decrease (AIMD) on the gateway's
response times and failed calls, without a clock of its own (every call says the time).

A call slower than the latency target, or one that failed, halves the rate (at most once
per ``cooldown``, so a queue of slow calls counts as one signal); each good call adds back
``step`` per second elapsed, until the configured limit (the ``ceiling``) is reached again.
Without a ceiling the first back-off starts from the throughput measured before it and the
rate is lifted altogether once it doubled that throughput.
"""

from __future__ import annotations

DECREASE = 0.5  # a slow or failed call multiplies the rate by this
STEP = 0.05  # of the ceiling (or the measured throughput) added back per second
FLOOR = 0.01  # of the same: the rate never falls below this (nor below 1 per second)
WINDOW = 2.0  # seconds of throughput measured


class Aimd:
    """The adaptive cap of one task's rate; :attr:`cap` is None while nothing holds it back."""

    def __init__(self, target_seconds: float, ceiling: float | None = None) -> None:
        self.target = target_seconds
        self.cooldown = max(1.0, 2 * target_seconds)
        self.ceiling = ceiling
        self.cap: float | None = None
        self.base = 0.0  # what the step and the floor are fractions of
        self.last_decrease: float | None = None
        self.last_seen: float | None = None
        self.window: list[tuple[float, float]] = []  # (time, amount) taken lately

    def rate(self) -> float | None:
        """The rate in force: the lower of the ceiling and the adaptive cap (None: none)."""
        limits = [r for r in (self.ceiling, self.cap) if r is not None]
        return min(limits) if limits else None

    def set_ceiling(self, ceiling: float | None) -> None:
        """A new configured limit (``limits set``); the cap is kept below it."""
        self.ceiling = ceiling
        if ceiling is not None and self.cap is not None and self.cap >= ceiling:
            self.cap = None

    def taken(self, amount: float, now: float) -> None:
        """``amount`` went through at ``now`` (the throughput a back-off starts from)."""
        self.window.append((now, amount))
        while self.window and self.window[0][0] < now - WINDOW:
            self.window.pop(0)

    def throughput(self, now: float) -> float | None:
        if len(self.window) < 2:
            return None
        span = max(now - self.window[0][0], 0.1)
        return sum(a for _, a in self.window) / span

    def observe(self, seconds: float, ok: bool, now: float) -> None:
        """One gateway call took ``seconds`` and succeeded (``ok``) or failed."""
        elapsed = 0.0 if self.last_seen is None else max(0.0, now - self.last_seen)
        self.last_seen = now
        if not ok or seconds > self.target:
            self._decrease(now)
        elif self.cap is not None:
            self.cap += self.base * STEP * min(elapsed, 1.0)
            top = self.ceiling if self.ceiling is not None else 2 * self.base
            if self.cap >= top:
                self.cap = None

    def _decrease(self, now: float) -> None:
        if self.last_decrease is not None and now - self.last_decrease < self.cooldown:
            return
        current = self.rate()
        measured = self.throughput(now)
        start = min(r for r in (current, measured, float("inf")) if r is not None)
        if start == float("inf"):
            return  # nothing measured yet: no rate to lower
        if self.cap is None:
            self.base = self.ceiling if self.ceiling is not None else start
        self.cap = max(start * DECREASE, self.base * FLOOR, 1.0)
        self.last_decrease = now
