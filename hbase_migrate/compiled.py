"""Compiled copies of hot paths (Cython extension modules built by ``make setup`` in a
checkout and into the wheel by its build hook, see ``scripts/build-speedups.py``) beside
their pure-Python references: which one runs. The compiled one when it is built, unless
``HBASE_MIGRATE_PURE_PYTHON=1``; ``use`` switches (the tests run both and compare). An
install without them (a pure-Python wheel, a build with no C compiler) gives the same
results, slower: it says so once in the log, and ``hbase-migrate --version`` lists which
hot paths run compiled (:func:`summary`)."""

from __future__ import annotations

import importlib
import logging
import os
from types import ModuleType
from typing import Literal

log = logging.getLogger(__name__)
Implementation = Literal["compiled", "python"]
# every compiled module of the project -> the hot path it runs
HOT_PATHS: dict[str, str] = {
    "hbase_migrate.wal._hotloops": "WAL reader",
    "hbase_migrate.replay._convert": "replay's entry converter",
    "hbase_migrate.sinks._render": "CDC message renderer",
    "hbase_migrate.hfile._crc32c": "HFile CRC32C",
    "hbase_migrate.hfile._cells": "HFile block decoders",
    "hbase_migrate.hfile._visible": "HFile scan matcher",
    "hbase_migrate.hfile._digestscan": "region digest from raw blocks",
    "hbase_migrate.hfile._writer": "HFile writer",
    "hbase_migrate.ranges._digest": "range digest",
}
_said: list[str] = []  # the missing modules already logged (once per process)


def _missing(module: str) -> None:
    """Log, once per process, that this install lacks compiled modules."""
    if not _said:
        log.info("hot paths run in pure Python where this install has no compiled module "
                 "(the same results, slower); `hbase-migrate --version` lists them")
    if module not in _said:
        _said.append(module)
        log.debug("%s (%s) not compiled in this install", HOT_PATHS.get(module, module),
                  module)


def compiled_modules() -> dict[str, bool]:
    """Each compiled module of :data:`HOT_PATHS` -> whether it imports in this install."""
    found = {}
    for module in HOT_PATHS:
        try:
            importlib.import_module(module)
        except ImportError:
            found[module] = False
        else:
            found[module] = True
    return found


def summary() -> str:
    """One line: which hot paths run compiled here, and which in pure Python."""
    built = compiled_modules()
    if os.environ.get("HBASE_MIGRATE_PURE_PYTHON") == "1":
        return "hot paths: all in pure Python (HBASE_MIGRATE_PURE_PYTHON=1)"
    fast = [HOT_PATHS[m] for m, ok in built.items() if ok]
    slow = [HOT_PATHS[m] for m, ok in built.items() if not ok]
    if not slow:
        return f"hot paths: all {len(fast)} compiled ({', '.join(fast)})"
    if not fast:
        return (f"hot paths: all {len(slow)} in pure Python, none compiled in this install "
                "(the same results, slower)")
    return (f"hot paths: {len(fast)} of {len(built)} compiled ({', '.join(fast)}); "
            f"in pure Python: {', '.join(slow)}")


class Choice:
    """The implementation of one hot path: ``module`` (compiled) or the reference."""

    def __init__(self, module: str, what: str) -> None:
        self.what = what
        try:
            self.module: ModuleType | None = importlib.import_module(module)
        except ImportError:
            self.module = None
            _missing(module)
        self.active: Implementation = (
            "compiled" if self.module is not None
            and os.environ.get("HBASE_MIGRATE_PURE_PYTHON") != "1" else "python")

    def implementation(self) -> Implementation:
        """Which one runs (from now on, for what opens from now on)."""
        return self.active

    def use(self, name: Implementation) -> None:
        """Run ``name`` from now on."""
        if name == "compiled" and self.module is None:
            raise RuntimeError(f"{self.what} not built (make setup builds it)")
        self.active = name

    def compiled(self) -> ModuleType | None:
        """The compiled module when it is the one that runs."""
        return self.module if self.active == "compiled" else None
