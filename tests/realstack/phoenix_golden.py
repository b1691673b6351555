"""Make Apache Phoenix WAL golden files: start real HBase 1.x with phoenix-core in its JVM and
Phoenix's ``IndexedWALEditCodec`` as its WAL codec, make a Phoenix table with a global index
(through Phoenix's JDBC driver, on the mutable-index coprocessor that writes index updates into
the WAL), roll the WALs, write rows, roll again and copy out the WALs of the writes. Each is
read by HBase's own WAL reader with phoenix-core on its class path (and given to HBase's
WALPrettyPrinter, which 1.x cannot finish on an index update: the error is kept).
On HBase 2.x with Phoenix 5 the printer prints every entry, index updates too, and its
printout is kept. ``python -m tests.realstack.phoenix_golden OUT [SET...] [--hbase-version
V]`` writes them as committed under ``tests/data/phoenix-wal/`` (see its README)."""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from realstack.hbase import RealHBase, RealHBaseOptions, is_1x
from realstack.walprinter import parse, pretty_print
from stackprocs.admin_client import call_admin
from tests.realstack.golden import PRINTOUT, collect

# HBase version -> the Phoenix release run on it (phoenix-core 4.x on 1.x, Phoenix 5 on 2.x)
PHOENIX = {"1.4.13": "4.14.3-HBase-1.4", "2.6.1": "5.2.1"}
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


def generate(option_set: str, out: Path, version: str) -> dict[str, dict[str, Any]]:
    """Write the WAL files of the writes into ``out``; return file name -> HBase's view."""
    with TemporaryDirectory(prefix="phoenixwal-") as tmp, RealHBase(
            Path(tmp) / "stack", RealHBaseOptions(
                hbase_version=version, region_servers=1, heap="1g",
                wal_compression=OPTION_SETS[option_set], phoenix=PHOENIX[version])) as stack:
        call_admin(stack.cluster_json, "sql", {"statements": SCHEMA, "properties": INDEXER})
        earlier = collect(stack, Path(tmp) / "schema")  # Phoenix's own tables: not kept
        found = call_admin(stack.cluster_json, "sql", {"statements": [*WRITES, QUERY],
                                                       "properties": INDEXER})
        if found[-1] != EXPECTED_ROWS:
            raise AssertionError(f"Phoenix read back {found[-1]}, expected {EXPECTED_ROWS}")
        written = collect(stack, out, skip=frozenset(p.name for p in earlier))
    return read_by_hbase(written, version)


def read_by_hbase(files: list[Path], version: str) -> dict[str, dict[str, Any]]:
    """File name -> ``{"entries": ..., "printer_error": ...}``: on 1.x what HBase's reader
    read (``reads``), on 2.x what its printer printed (``parse``)."""
    printed = pretty_print(files, version, PHOENIX[version])
    views = {}
    for path in files:
        result = printed[path.name]
        if is_1x(version):
            if "reads" not in result:
                raise AssertionError(f"HBase could not read {path.name}: {result}")
            entries = result["reads"]
        elif "error" in result:
            raise AssertionError(f"WALPrettyPrinter failed on {path.name}: {result['error']}")
        else:
            entries = parse(result["output"])
        views[path.name] = {"hbase": version, "phoenix": PHOENIX[version],
                            "printer_error": result.get("error"), "entries": entries}
    return views


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.realstack.phoenix_golden")
    parser.add_argument("out", type=Path)
    parser.add_argument("sets", nargs="*", metavar="SET")
    parser.add_argument("--hbase-version", choices=list(PHOENIX), default="1.4.13")
    args = parser.parse_args(argv)
    for option_set in args.sets or list(OPTION_SETS):
        folder = args.out / option_set
        views = generate(option_set, folder, args.hbase_version)
        for name, view in views.items():
            text = (json.dumps(view, indent=1) + "\n").encode()
            (folder / f"{name}{PRINTOUT}.gz").write_bytes(gzip.compress(text, mtime=0))
        print(option_set, {name: len(v["entries"]) for name, v in views.items()})


if __name__ == "__main__":
    main(sys.argv[1:])
