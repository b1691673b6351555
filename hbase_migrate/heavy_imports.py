"""The cyclic garbage collector kept off what a process keeps for its whole life.

Importing a library that builds tens of thousands of long-lived objects (Great
Expectations: about 2 s) without the collector walking them again and again while it loads,
nor at every later collection (``gc.freeze``): they live as long as the process. GX loads
about a fifth faster this way. A step that makes hundreds of thousands of short-lived cells
(a copy, a validation's checksums) runs under :func:`fewer_collections`."""

from __future__ import annotations

import gc
import importlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

# allocations between two collections of the youngest generation while a step that makes
# many short-lived cells runs (Python's default: 700)
YOUNG_OBJECTS = 50_000


def import_heavy(name: str) -> ModuleType:
    """``importlib.import_module(name)`` with the collector paused while it runs; what
    exists by then is moved out of later collections."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return importlib.import_module(name)
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


class _Collector:
    """The steps running under :func:`fewer_collections`; the thresholds before them."""

    lock = threading.Lock()
    copies = 0
    thresholds: tuple[int, ...] = ()


@contextmanager
def fewer_collections() -> Iterator[None]:
    """The block with what exists now (imports, clients, the ledger) left out of the cyclic
    collector's walks (``gc.freeze``), and its youngest generation collected every
    :data:`YOUNG_OBJECTS` new objects instead of 700. A copy or a checksum creates and frees
    a few objects per cell, none in a cycle (reference counting frees them), and each full
    collection walked the whole heap again: two fifths of a copy's CPU at 200,000 cells.
    Steps running at once in one process share it: the last to end restores the
    collector."""
    with _Collector.lock:
        if _Collector.copies == 0:
            _Collector.thresholds = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(YOUNG_OBJECTS, *_Collector.thresholds[1:])
        _Collector.copies += 1
    try:
        yield
    finally:
        with _Collector.lock:
            _Collector.copies -= 1
            if _Collector.copies == 0:
                gc.set_threshold(*_Collector.thresholds)
                gc.unfreeze()
