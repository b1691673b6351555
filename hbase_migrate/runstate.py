"""This process's run state: a stop the user asked for (Ctrl-C, SIGTERM), which range work
checks between the pieces it reads, and a meter of the cells it moved, which progress bars
read; a wait the step is in (the meter's ``waiting``, for the same bars) and what it tells
the user at once (:func:`announce`, through the hook a command installs).

A step's work runs on threads (:func:`hbase_migrate.ranges.engine.in_threads`); only the
main thread receives Ctrl-C. It asks the others to stop (:func:`request_stop`): each ends at
its next piece with :class:`Stopped`, so the step stops in about the time one scan call
takes, and records what was finished. Every lifecycle step starts with :func:`reset`.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hbase_migrate.errors import HBaseMigrateError, StepInterrupted

if TYPE_CHECKING:
    from hbase_migrate.wal.model import Cell

__all__ = ["Meter", "StepInterrupted", "Stopped", "Wait", "announce", "announcing",
           "check_stop", "meter", "request_stop", "reset", "stop_requested", "watched"]

_stop = threading.Event()
log = logging.getLogger(__name__)
_announcers: list[Callable[[str], None]] = []  # the innermost last (announcing)


class Stopped(HBaseMigrateError):
    """A piece of work ended early because the user asked the process to stop."""


def request_stop() -> None:
    """Ask every piece of work of this process to end at its next piece."""
    _stop.set()


def stop_requested() -> bool:
    return _stop.is_set()


def check_stop(what: str) -> None:
    """Raise :class:`Stopped` (naming ``what``) when a stop was asked."""
    if _stop.is_set():
        raise Stopped(f"{what}: stopped on request")


@dataclass(frozen=True)
class Wait:
    """A wait a step is in: for ``what``, at most ``seconds``, since ``began``."""

    what: str
    seconds: float
    began: float = field(default_factory=time.monotonic)

    def text(self) -> str:
        """``waiting for X: 12s of at most 60s``."""
        waited = min(self.seconds, time.monotonic() - self.began)
        return f"waiting for {self.what}: {waited:.0f}s of at most {self.seconds:.0f}s"


def announce(text: str) -> None:
    """Tell the user ``text`` now: through the innermost hook a command installed
    (:func:`announcing`), else in the log (an Airflow task's)."""
    if _announcers:
        _announcers[-1](text)
    else:
        log.info("%s", text)


@contextlib.contextmanager
def announcing(hook: Callable[[str], None]) -> Iterator[None]:
    """:func:`announce` through ``hook`` while the block runs."""
    _announcers.append(hook)
    try:
        yield
    finally:
        _announcers.remove(hook)


@dataclass
class Meter:
    """What the step under way moved, for a progress bar (updated from any thread)."""

    cells: int = 0  # cells moved since the step started
    cells_goal: int | None = None  # cells it will move in all, when known
    ranges_done: int = 0
    ranges_total: int | None = None
    regions_done: int = 0  # a planning pass: regions passed, of regions_total
    regions_total: int | None = None
    waiting: Wait | None = None  # a wait the step is in, shown instead of the rate
    started: float = field(default_factory=time.monotonic)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add_cells(self, cells: int) -> None:
        with self._lock:
            self.cells += cells

    def rate(self) -> float:
        """Cells per second since the step started."""
        seconds = time.monotonic() - self.started
        return self.cells / seconds if seconds > 0.5 else 0.0

    def goal(self) -> int | None:
        """The cells the step will move: known once planned, else estimated from the
        regions a planning pass has passed."""
        if self.cells_goal is not None:
            return max(self.cells_goal, self.cells)
        if self.regions_total and self.regions_done:
            return max(self.cells, self.cells * self.regions_total // self.regions_done)
        return None

    def eta(self) -> float | None:
        """Seconds left at the rate so far; None when unknown."""
        goal, rate = self.goal(), self.rate()
        if goal is not None and self.cells >= goal:
            return 0.0
        if goal is None or rate <= 0:
            return None
        return max(0.0, (goal - self.cells) / rate)


meter = Meter()


def reset() -> None:
    """A new step: no stop asked, the meter at zero."""
    _stop.clear()
    fresh = Meter()
    with meter._lock:
        for name in ("cells", "cells_goal", "ranges_done", "ranges_total", "regions_done",
                     "regions_total", "waiting", "started"):
            setattr(meter, name, getattr(fresh, name))


def watched_batches(batches: Iterable[list[list[Cell]]], what: str
                    ) -> Iterator[list[list[Cell]]]:
    """:func:`watched` a reply's pieces at a time (``Client.scan_batches``)."""
    for batch in batches:
        check_stop(what)
        meter.add_cells(sum(map(len, batch)))
        yield batch


def watched(pieces: Iterable[list[Cell]], what: str) -> Iterator[list[Cell]]:
    """``pieces`` (a scan's), counted on the meter; :class:`Stopped` before the next piece
    once a stop was asked."""
    for piece in pieces:
        check_stop(what)
        meter.add_cells(len(piece))
        yield piece
