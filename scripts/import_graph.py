"""Count what keeps the packages from one front door to HBase (issue 59), on grimp's graph
(import-linter's; imports inside functions and under ``TYPE_CHECKING`` included):

* cycles of two modules (``a`` imports ``b`` and ``b`` imports ``a``);
* package cycles: per package, the imports grimp nominates to break the cycles among its
  children (what import-linter's ``acyclic_siblings`` reports), for every package;
* circles between the top-level packages (``minihbase`` importing ``realstack`` and
  ``realstack`` importing ``minihbase``: no package holds both, so no package cycle shows it);
* imports of a transport (``rpc``, ``thrift``, ``bigtable``) by any module of the core or
  the plugins but the front door's (``hbase_migrate.hbase``) and the transports' own, less
  those the import-linter contract names in its ``ignore_imports`` (``pyproject.toml``).

``python scripts/import_graph.py`` prints the counts and each finding; ``--check`` exits 1
when any count is not 0.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from collections.abc import Iterable
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
ROOTS = ("hbase_migrate", "hbase_migrate_airflow", "minihbase", "realstack", "stackprocs")
DOOR = "hbase_migrate.hbase"
TRANSPORTS = ("hbase_migrate.rpc", "hbase_migrate.thrift", "hbase_migrate.bigtable")
# what reaches a cluster through the front door only: every other module of these
DOMAIN = ("hbase_migrate", "hbase_migrate_airflow")


def within(module: str, packages: Iterable[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def two_module_cycles(graph: grimp.ImportGraph) -> list[tuple[str, str]]:
    pairs = set()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if module < imported and module in graph.find_modules_directly_imported_by(imported):
                pairs.add((module, imported))
    return sorted(pairs)


def package_cycles(graph: grimp.ImportGraph) -> dict[str, set[tuple[str, str]]]:
    found = {}
    for package in sorted(m for m in graph.modules if len(graph.find_children(m)) >= 2):
        if breakers := graph.nominate_cycle_breakers(package):
            found[package] = breakers
    return found


def root_cycles(graph: grimp.ImportGraph) -> list[tuple[str, str]]:
    """Pairs of top-level packages each importing the other."""
    edges = {(module.split(".")[0], imported.split(".")[0]) for module in graph.modules
             for imported in graph.find_modules_directly_imported_by(module)}
    return sorted((a, b) for a, b in edges if a < b and (b, a) in edges)


def allowed_transport_imports() -> set[tuple[str, str]]:
    """The ``ignore_imports`` of the import-linter contract forbidding the transports."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        contracts = tomllib.load(f)["tool"]["importlinter"]["contracts"]
    found = set()
    for contract in contracts:
        if contract["type"] == "forbidden" and DOOR not in contract["forbidden_modules"] \
                and set(TRANSPORTS) <= set(contract["forbidden_modules"]):
            for line in contract.get("ignore_imports", ()):
                importer, imported = (m.strip() for m in line.split("->"))
                found.add((importer, imported))
    return found


def transport_imports(graph: grimp.ImportGraph) -> list[tuple[str, str]]:
    allowed = allowed_transport_imports()
    return sorted((module, imported) for module in graph.modules
                  if within(module, DOMAIN) and not within(module, (DOOR, *TRANSPORTS))
                  for imported in graph.find_modules_directly_imported_by(module)
                  if within(imported, TRANSPORTS) and (module, imported) not in allowed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 unless every count is 0")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    graph = grimp.build_graph(*ROOTS, include_external_packages=False, cache_dir=None)
    cycles, packages, transports = (two_module_cycles(graph), package_cycles(graph),
                                    transport_imports(graph))
    roots = root_cycles(graph)
    breakers = sum(len(b) for b in packages.values())
    for a, b in cycles:
        print(f"cycle: {a} <-> {b}")
    for package, found in packages.items():
        for importer, imported in sorted(found):
            print(f"package cycle in {package}: break {importer} -> {imported}")
    for a, b in roots:
        print(f"top-level circle: {a} <-> {b}")
    for importer, imported in transports:
        print(f"transport import: {importer} -> {imported}")
    print(f"two-module cycles: {len(cycles)}; packages with cycles: {len(packages)} "
          f"({breakers} imports to break); top-level circles: {len(roots)}; "
          f"domain imports of a transport: {len(transports)}")
    return 1 if args.check and (cycles or packages or roots or transports) else 0


if __name__ == "__main__":
    sys.exit(main())
