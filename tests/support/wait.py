"""The suite's one bounded wait."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

MAX_STRETCH = 8.0  # how far a loaded machine may stretch a wait's bound


def load_stretch() -> float:
    """How much slower than an idle machine this one runs now: the 1-minute load average
    per core, at least 1 (a CI runner or edge node busy with other work)."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return 1.0
    return min(MAX_STRETCH, max(1.0, load / (os.cpu_count() or 1)))


def wait_for(check: Callable[[], Any], timeout: float, what: str, *, every: float = 0.02) -> Any:
    """Poll ``check`` every ``every`` seconds until it returns something truthy, and return
    that; fail naming ``what`` after ``timeout`` seconds, a bound stretched by the machine's
    load (:func:`load_stretch`) so that a busy machine waits longer, never concludes less."""
    began = time.monotonic()
    while True:
        value = check()
        if value:
            return value
        waited = time.monotonic() - began
        if waited >= timeout * load_stretch():
            raise AssertionError(f"timed out after {waited:.0f}s (bound {timeout:g}s, "
                                 f"stretched by the load) waiting for {what}")
        time.sleep(every)
