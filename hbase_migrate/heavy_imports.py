"""Importing a library that builds tens of thousands of long-lived objects (Great
Expectations: about 2 s) without the cyclic garbage collector walking them again and
again while it loads, nor at every later collection (``gc.freeze``): they live as long as
the process. GX loads about a fifth faster this way."""

from __future__ import annotations

import gc
import importlib
from types import ModuleType


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
