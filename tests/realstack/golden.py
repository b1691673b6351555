"""Make real-WAL golden files: start real HBase with one WAL option set, run the scripted
workload, roll, copy every closed WAL (with entries) out through WebHDFS, and print each with
HBase's WALPrettyPrinter. ``python -m tests.realstack.golden OUT [SET...] [--hbase-version V]``
writes them as committed under ``tests/data/real-wal/`` (see its README)."""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from hbase_migrate.cluster.walstore import WebHdfsWalStore
from minihbase.cli.minicluster import call_admin
from realstack.hbase import DEFAULT_VERSION, RealHBase, RealHBaseOptions
from realstack.walprinter import parse, pretty_print
from tests.realstack import wal_workload

PRINTOUT = ".hbase.json"  # HBase's entries of WAL file X, committed as X.hbase.json[.gz]
HEADER_ONLY = 100  # a rolled WAL with no entry is its header and trailer, under this
# option set -> (WAL dictionary compression, value compression codec)
OPTION_SETS = {
    "plain": ("none", "none"),
    "dict": ("dict", "none"),
    "dict+tags": ("dict+tags", "none"),
    "dict+tags+gz": ("dict+tags", "gz"),
    "dict+tags+snappy": ("dict+tags", "snappy"),
    "dict+tags+lz4": ("dict+tags", "lz4"),
    "dict+tags+zstd": ("dict+tags", "zstd"),
    "dict+tags+brotli": ("dict+tags", "brotli"),
}


def generate(option_set: str, out: Path, version: str = DEFAULT_VERSION
             ) -> dict[str, list[dict[str, Any]]]:
    """Write the WAL files of one run into ``out``; return file name -> HBase's entries."""
    if option_set not in OPTION_SETS:
        raise ValueError(f"unknown WAL option set {option_set!r}; known: {list(OPTION_SETS)}")
    compression, codec = OPTION_SETS[option_set]
    out.mkdir(parents=True, exist_ok=True)
    with TemporaryDirectory(prefix="realwal-") as tmp, RealHBase(tmp, RealHBaseOptions(
            hbase_version=version, region_servers=2, wal_compression=compression,
            value_compression=codec, heap="768m")) as stack:
        cluster_json = stack.cluster_json
        wal_workload.run(stack.described["thrift2"],
                         flush=lambda table: call_admin(cluster_json, "flush", {"table": table}))
        store = WebHdfsWalStore(stack.described["webhdfs"], stack.described["hbase_root"])
        before = {f.relpath for f in store.list_wal_files()}
        call_admin(cluster_json, "roll", {})
        _wait_for_new_files(store, before)
        written = []
        for status in store.list_wal_files():
            if status.relpath in before and status.size > HEADER_ONLY:
                target = out / status.name
                with store.open(status.path) as source:
                    target.write_bytes(source.read())
                written.append(target)
    printed = pretty_print(written, version)
    entries = {}
    for path in written:
        result = printed[path.name]
        if "error" in result:
            raise AssertionError(f"WALPrettyPrinter failed on {path.name}: {result['error']}")
        entries[path.name] = parse(result["output"])
    return entries


def _wait_for_new_files(store: WebHdfsWalStore, before: set[str], timeout: float = 60) -> None:
    """A roll answers before every writer switched: wait until each old file is closed
    (a newer file of its server and kind exists and its size stays put)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        files = store.list_wal_files()
        new = {(f.server, ".meta" in f.name) for f in files if f.relpath not in before}
        old = {(f.server, ".meta" in f.name) for f in files if f.relpath in before}
        if old <= new:
            time.sleep(1)
            return
        time.sleep(0.5)
    raise AssertionError("the WAL roll did not finish within 60 s")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.realstack.golden")
    parser.add_argument("out", type=Path)
    parser.add_argument("sets", nargs="*", metavar="SET")
    parser.add_argument("--hbase-version", default=DEFAULT_VERSION)
    parser.add_argument("--gzip", action="store_true",
                        help="write each printout gzipped (X.hbase.json.gz, no timestamp)")
    args = parser.parse_args(argv)
    out: Path = args.out
    for option_set in args.sets or list(OPTION_SETS):
        entries = generate(option_set, out / option_set, args.hbase_version)
        for name, found in entries.items():
            text = (json.dumps(found, indent=1) + "\n").encode()
            if args.gzip:
                (out / option_set / f"{name}{PRINTOUT}.gz").write_bytes(
                    gzip.compress(text, mtime=0))
            else:
                (out / option_set / f"{name}{PRINTOUT}").write_bytes(text)
        print(option_set, {name: len(found) for name, found in entries.items()})


if __name__ == "__main__":
    main(sys.argv[1:])
