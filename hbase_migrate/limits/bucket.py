"""A token bucket without a clock of its own: every call says what time it is.

Tokens accrue at ``rate`` per second up to ``burst`` seconds' worth, from the first spend
on; a bucket starts empty, so a task that starts (or is slow to start) gets no free burst.
Spending more than there is leaves a debt: the caller waits ``wait(now)`` seconds before
going on, which keeps what is spent over any span ``t`` under ``rate * t + burst * rate``.
"""

from __future__ import annotations

DEFAULT_BURST = 0.25  # seconds of tokens a bucket may save while its task is idle


class TokenBucket:
    """Tokens per second (``rate`` > 0) for one task of a step."""

    def __init__(self, rate: float, burst: float = DEFAULT_BURST) -> None:
        if rate <= 0:
            raise ValueError(f"a token bucket needs a rate > 0, got {rate}")
        self.rate, self.burst = rate, burst
        self.tokens = 0.0
        self.stamp: float | None = None  # nothing accrues before the first spend

    def _refill(self, now: float) -> None:
        if self.stamp is None:
            return
        if now > self.stamp:
            self.tokens = min(self.rate * self.burst,
                              self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now

    def set_rate(self, rate: float, now: float) -> None:
        """From ``now`` on, ``rate`` tokens per second (what accrued so far is kept)."""
        if rate <= 0:
            raise ValueError(f"a token bucket needs a rate > 0, got {rate}")
        self._refill(now)
        self.rate = rate
        self.tokens = min(self.tokens, rate * self.burst)

    def spend(self, amount: float, now: float) -> None:
        """Take ``amount`` tokens (the balance may go below zero: a debt)."""
        if self.stamp is None:
            self.stamp = now
        self._refill(now)
        self.tokens -= amount

    def wait(self, now: float) -> float:
        """Seconds until the debt is paid (0 when there is none, or under a microsecond)."""
        self._refill(now)
        wait = -self.tokens / self.rate
        return wait if wait > 1e-6 else 0.0
