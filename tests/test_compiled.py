"""The compiled hot paths (WAL reader's loops, CDC renderer) are chosen by the environment:
``HBASE_MIGRATE_PURE_PYTHON=1`` runs the pure-Python references."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("module", ["hbase_migrate.wal.hotloops", "hbase_migrate.sinks.render"])
@pytest.mark.parametrize(("env", "expected"), [("0", "compiled"), ("1", "python")])
def test_the_environment_chooses(module: str, env: str, expected: str) -> None:
    if importlib.import_module(module).COMPILED is None:
        pytest.skip(f"{module}'s compiled module is not built")
    out = subprocess.run(
        [sys.executable, "-c", f"import {module} as m; print(m.implementation())"],
        env={**os.environ, "HBASE_MIGRATE_PURE_PYTHON": env}, capture_output=True, text=True,
        check=True)
    assert out.stdout.strip() == expected
