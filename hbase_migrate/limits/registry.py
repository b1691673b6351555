"""The rates in force in this process, for progress output and metrics: the throttles of
tasks running here, and the steps this process drives (their tasks may run on Spark).

:func:`throttle_for` gives the tasks of one step that run one after the other in a process
(the in-process engine, a reused Spark worker) one throttle, so that a new task does not
start a new bucket.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager

from hbase_migrate.limits.throttle import USERS_LOCK as _lock
from hbase_migrate.limits.throttle import Throttle
from hbase_migrate.limits.watch import LimitWatch, ThrottlePlan

_throttles: OrderedDict[ThrottlePlan, Throttle] = OrderedDict()
_steps: dict[int, LimitWatch] = {}
KEPT = 8  # throttles of past steps kept for reuse


def throttle_for(plan: ThrottlePlan) -> Throttle:
    """This process's throttle for ``plan`` (made on first use)."""
    with _lock:
        found = _throttles.get(plan)
        if found is None:
            found = _throttles[plan] = Throttle(plan)
            while len(_throttles) > KEPT:
                oldest = next(iter(_throttles))
                if _throttles[oldest].users:
                    break
                del _throttles[oldest]
        _throttles.move_to_end(plan)
        return found


@contextmanager
def step_limits(plan: ThrottlePlan) -> Iterator[LimitWatch]:
    """Announce the step ``plan`` describes while it runs here (its limits, re-read from
    the ledger when asked, stand for tasks that run elsewhere)."""
    watch = LimitWatch(plan)
    with _lock:
        _steps[id(watch)] = watch
    try:
        yield watch
    finally:
        with _lock:
            del _steps[id(watch)]


def current_rates(migration: str | None = None) -> dict[str, dict[str, float | None]]:
    """The rate in force per migration and ``[limits]`` key (per second; None: unlimited):
    the sum of the throttles of the tasks running here (adaptive caps included), else the
    whole limit of a step driven from here. Only kinds of work under way appear."""
    with _lock:
        running = [t for t in _throttles.values() if t.users]
        steps = list(_steps.values())
    out: dict[str, dict[str, float | None]] = {}
    for throttle in running:
        rates = out.setdefault(throttle.plan.migration, {})
        for key, rate in throttle.rates().items():
            known = rates.get(key, 0.0)
            rates[key] = None if rate is None or (key in rates and known is None) \
                else (known or 0.0) + rate
    for watch in steps:
        rates = out.setdefault(watch.plan.migration, {})
        for key, limit in watch.limits().items():
            rates.setdefault(key, limit)
    return {m: r for m, r in out.items() if migration is None or m == migration}


def in_force_text(migration: str | None = None) -> str:
    """The rates in force here as one progress-line text ("" when no step runs)."""
    merged: dict[str, float | None] = {}
    for rates in current_rates(migration).values():
        merged.update(rates)
    return describe(merged)


def describe(rates: dict[str, float | None]) -> str:
    """``copy cells 5,000 cells/s, copy bytes 50 MiB/s``, ``replay cells unlimited``."""
    from hbase_migrate.cluster.sizing import format_bytes

    parts = []
    for key, rate in sorted(rates.items()):
        what, unit = key.split("_")[0], key.split("_")[1]
        if rate is None:
            text = "unlimited"
        elif unit == "bytes":
            text = f"{format_bytes(int(rate))}/s"
        else:
            text = f"{rate:,.0f} cells/s"
        parts.append(f"{what} {unit} {text}")
    return ", ".join(parts)
