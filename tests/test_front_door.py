"""``hbase_migrate.hbase`` is the front door by its exports: what a step needs of a cluster
is imported from the package itself (``__all__``), each name the object where it is
defined, every public function of the door's modules among them, and importing the door
imports no transport."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import hbase_migrate.hbase as door

DOOR_MODULES = ("connect", "admin", "bulk", "identity", "handle")
TRANSPORTS = ("hbase_migrate.rpc", "hbase_migrate.thrift", "happybase",
              "google.cloud.bigtable")


def test_the_door_exports_the_protocols_descriptors_errors_and_ways_in() -> None:
    from hbase_migrate.hbase import (  # noqa: F401 - the import is the test
        Admin,
        Client,
        ClusterError,
        Compactor,
        FamilyDescriptor,
        GatewayUnreachableError,
        RegionDescriptor,
        TableDescriptor,
        connect,
        open_client,
    )

    assert sorted(door.__all__) == door.__all__, "keep __all__ sorted"
    assert len(set(door.__all__)) == len(door.__all__)
    for name in door.__all__:
        found = getattr(door, name)
        home = importlib.import_module(found.__module__)
        assert getattr(home, name) is found, f"{name} is no re-export of {found.__module__}"


def test_every_public_function_of_the_door_is_exported() -> None:
    for module in DOOR_MODULES:
        defined = importlib.import_module(f"hbase_migrate.hbase.{module}")
        public = {name for name, obj in vars(defined).items()
                  if not name.startswith("_") and (inspect.isfunction(obj) or
                                                   inspect.isclass(obj))
                  and obj.__module__ == defined.__name__}
        assert public - set(door.__all__) == set(), f"hbase_migrate.hbase.{module}"


def test_importing_the_door_imports_no_transport() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import sys, hbase_migrate.hbase\n"
         f"print(sorted(m for m in sys.modules if m.startswith({TRANSPORTS!r})))"],
        check=True, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "[]"
