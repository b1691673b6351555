"""Count what keeps the packages from one front door to HBase (issue 59), on grimp's graph
(import-linter's; imports inside functions and under ``TYPE_CHECKING`` included):

* cycles of two modules (``a`` imports ``b`` and ``b`` imports ``a``);
* package cycles: per package, the imports grimp nominates to break the cycles among its
  children (what import-linter's ``acyclic_siblings`` reports), for every package;
* imports of a transport module by a domain module.

``python scripts/import_graph.py`` prints the counts and each finding; ``--check`` exits 1
when any count is not 0.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

import grimp

ROOTS = ("hbase_migrate", "minihbase")
TRANSPORTS = ("hbase_migrate.rpc", "hbase_migrate.thrift")
# the packages of the migration's steps: they reach a cluster through the front door only
DOMAIN = tuple(f"hbase_migrate.{p}" for p in (
    "ranges", "snapshot", "validate", "replay", "lifecycle", "commands", "sinks", "report",
    "audit", "limits", "spark", "soak"))


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


def transport_imports(graph: grimp.ImportGraph) -> list[tuple[str, str]]:
    return sorted((module, imported) for module in graph.modules if within(module, DOMAIN)
                  for imported in graph.find_modules_directly_imported_by(module)
                  if within(imported, TRANSPORTS))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 unless every count is 0")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    graph = grimp.build_graph(*ROOTS, include_external_packages=False, cache_dir=None)
    cycles, packages, transports = (two_module_cycles(graph), package_cycles(graph),
                                    transport_imports(graph))
    breakers = sum(len(b) for b in packages.values())
    for a, b in cycles:
        print(f"cycle: {a} <-> {b}")
    for package, found in packages.items():
        for importer, imported in sorted(found):
            print(f"package cycle in {package}: break {importer} -> {imported}")
    for importer, imported in transports:
        print(f"transport import: {importer} -> {imported}")
    print(f"two-module cycles: {len(cycles)}; packages with cycles: {len(packages)} "
          f"({breakers} imports to break); domain imports of a transport: {len(transports)}")
    return 1 if args.check and (cycles or packages or transports) else 0


if __name__ == "__main__":
    sys.exit(main())
