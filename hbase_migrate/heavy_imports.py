"""The cyclic garbage collector kept off what a process keeps for its whole life.

Importing a library that builds tens of thousands of long-lived objects (Great
Expectations: about 2 s) without the collector walking them again and again while it loads,
nor at every later collection (``gc.freeze``): they live as long as the process. GX loads
about a fifth faster this way. A command settles the same way once it imported what its
step needs (:func:`settle`)."""

from __future__ import annotations

import gc
import importlib
from types import ModuleType

# allocations between two collections of the youngest generation (Python's default: 700)
YOUNG = 20_000


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


def settle(young: int = YOUNG) -> None:
    """For a command's process (never a long-lived one that runs many steps): what exists
    now (the modules, the config) is moved out of later collections, and the youngest
    generation is collected every ``young`` allocations. A validation makes hundreds of
    thousands of short-lived cells; each collection holds every thread, and the full ones
    walked every imported module: this halves the collector's CPU there."""
    gc.freeze()
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(young, middle, oldest)
