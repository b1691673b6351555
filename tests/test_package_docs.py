"""A package whose docstring says it names every module names exactly its modules, each once:
a module added, renamed or removed without the docstring fails here."""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections import Counter

import pytest

# docstrings that list their modules
PACKAGES = ["hbase_migrate.rpc", "hbase_migrate.hfile", "hbase_migrate.bigtable",
            "hbase_migrate.ranges", "hbase_migrate.spark", "stackprocs",
            "hbase_migrate_airflow", "hbase_migrate_airflow.hooks"]


@pytest.mark.parametrize("name", PACKAGES)
def test_the_docstring_names_every_module_once(name: str) -> None:
    package = importlib.import_module(name)
    doc = package.__doc__ or ""
    assert "every module is" in " ".join(doc.lower().split()), (
        f"{name}'s docstring no longer says it names them all")
    modules = {m.name for m in pkgutil.iter_modules(package.__path__)
               if not m.name.startswith("_")}
    named = Counter(re.findall(r"``([a-z_]+)``", doc))  # a bare lowercase name is a module
    assert set(named) == modules, (
        f"{name}: not modules {sorted(set(named) - modules)}, "
        f"left out {sorted(modules - set(named))}")
    assert [n for n, k in named.items() if k > 1] == []
