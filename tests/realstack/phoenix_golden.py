"""Make Apache Phoenix WAL golden files: start real HBase 1.x with phoenix-core in its JVM and
Phoenix's ``IndexedWALEditCodec`` as its WAL codec, make a Phoenix table with a global index
(through Phoenix's JDBC driver, on the mutable-index coprocessor that writes index updates into
the WAL), roll the WALs, write rows, roll again and copy out the WALs of the writes. Each is
read by HBase's own WAL reader with phoenix-core on its class path (and given to HBase's
WALPrettyPrinter, which 1.x cannot finish on an index update: the error is kept).
``python -m tests.realstack.phoenix_golden OUT [SET...]`` writes them as committed under
``tests/data/phoenix-wal/`` (see its README)."""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from minihbase.cli.minicluster import call_admin
from realstack.hbase import RealHBase, RealHBaseOptions
from realstack.walprinter import pretty_print
from tests.realstack.golden import PRINTOUT, collect

HBASE_VERSION = "1.4.13"
PHOENIX_VERSION = "4.14.3-HBase-1.4"
OPTION_SETS = {"plain": "none", "dict": "dict", "dict+tags": "dict+tags"}
# Phoenix 4.14.3+ maintains new global indexes in its IndexRegionObserver, which writes no
# index update into the WAL; this property makes tables take the Indexer, which does.
INDEXER = {"phoenix.index.region.observer.enabled": "false"}
SCHEMA = [
    "CREATE TABLE ORDERS (ID VARCHAR PRIMARY KEY, CUSTOMER VARCHAR, AMOUNT INTEGER)",
    "CREATE INDEX ORDERS_BY_CUSTOMER ON ORDERS (CUSTOMER) INCLUDE (AMOUNT)",
]
WRITES = [
    "UPSERT INTO ORDERS VALUES ('o1', 'ada', 10)",
    "UPSERT INTO ORDERS VALUES ('o2', 'grace', 20)",
    "UPSERT INTO ORDERS VALUES ('o1', 'edsger', 11)",  # the index row moves: delete + put
    "UPSERT INTO ORDERS (ID, CUSTOMER) VALUES ('o3', 'barbara')",
    "DELETE FROM ORDERS WHERE ID = 'o2'",
]
QUERY = "SELECT ID, CUSTOMER, AMOUNT FROM ORDERS ORDER BY ID"
EXPECTED_ROWS = [["o1", "edsger", "11"], ["o3", "barbara", None]]


def generate(option_set: str, out: Path) -> dict[str, dict[str, Any]]:
    """Write the WAL files of the writes into ``out``; return file name -> HBase's view."""
    with TemporaryDirectory(prefix="phoenixwal-") as tmp, RealHBase(
            Path(tmp) / "stack", RealHBaseOptions(
                hbase_version=HBASE_VERSION, region_servers=1, heap="768m",
                wal_compression=OPTION_SETS[option_set], phoenix=PHOENIX_VERSION)) as stack:
        call_admin(stack.cluster_json, "sql", {"statements": SCHEMA, "properties": INDEXER})
        earlier = collect(stack, Path(tmp) / "schema")  # Phoenix's own tables: not kept
        found = call_admin(stack.cluster_json, "sql", {"statements": [*WRITES, QUERY],
                                                       "properties": INDEXER})
        if found[-1] != EXPECTED_ROWS:
            raise AssertionError(f"Phoenix read back {found[-1]}, expected {EXPECTED_ROWS}")
        written = collect(stack, out, skip=frozenset(p.name for p in earlier))
    return read_by_hbase(written)


def read_by_hbase(files: list[Path]) -> dict[str, dict[str, Any]]:
    """File name -> ``{"entries": what HBase's reader read, "printer_error": ...}``."""
    printed = pretty_print(files, HBASE_VERSION, PHOENIX_VERSION)
    views = {}
    for path in files:
        result = printed[path.name]
        if "reads" not in result:
            raise AssertionError(f"HBase could not read {path.name}: {result}")
        views[path.name] = {"hbase": HBASE_VERSION, "phoenix": PHOENIX_VERSION,
                            "printer_error": result.get("error"), "entries": result["reads"]}
    return views


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.realstack.phoenix_golden")
    parser.add_argument("out", type=Path)
    parser.add_argument("sets", nargs="*", metavar="SET")
    args = parser.parse_args(argv)
    for option_set in args.sets or list(OPTION_SETS):
        folder = args.out / option_set
        views = generate(option_set, folder)
        for name, view in views.items():
            text = (json.dumps(view, indent=1) + "\n").encode()
            (folder / f"{name}{PRINTOUT}.gz").write_bytes(gzip.compress(text, mtime=0))
        print(option_set, {name: len(v["entries"]) for name, v in views.items()})


if __name__ == "__main__":
    main(sys.argv[1:])
