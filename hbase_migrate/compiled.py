"""Compiled copies of hot paths (Cython extension modules built by ``make setup``, see
``scripts/build-speedups.py``) beside their pure-Python references: which one runs.
The compiled one when it is built, unless ``HBASE_MIGRATE_PURE_PYTHON=1``; ``use`` switches
(the tests run both and compare)."""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Literal

Implementation = Literal["compiled", "python"]


class Choice:
    """The implementation of one hot path: ``module`` (compiled) or the reference."""

    def __init__(self, module: str, what: str) -> None:
        self.what = what
        try:
            self.module: ModuleType | None = importlib.import_module(module)
        except ImportError:
            self.module = None
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
