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

from hbase_migrate.cluster.storage.walstore import WebHdfsWalStore
from realstack.hbase import DEFAULT_VERSION, RealHBase, RealHBaseOptions, has_gateways
from realstack.walprinter import parse, pretty_print
from stackprocs.admin_client import call_admin
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
    """Write the WAL files of one run into ``out``; return file name -> HBase's entries.
    A version whose hbase-thrift the mirror lacks runs with no gateway: the workload then
    goes over HBase's RPC."""
    if option_set not in OPTION_SETS:
        raise ValueError(f"unknown WAL option set {option_set!r}; known: {list(OPTION_SETS)}")
    compression, codec = OPTION_SETS[option_set]
    with TemporaryDirectory(prefix="realwal-") as tmp, RealHBase(tmp, RealHBaseOptions(
            hbase_version=version, region_servers=2, wal_compression=compression,
            value_compression=codec, heap="768m", gateways=has_gateways(version))) as stack:
        wal_workload.run_on(stack.cluster_json, stack.described)
        written = collect(stack, out)
    return printed_entries(written, version)


def collect(stack: RealHBase, out: Path, skip: frozenset[str] = frozenset()) -> list[Path]:
    """Roll every WAL and copy each closed one with entries (and a name not in ``skip``)
    out through WebHDFS into ``out``; the copies."""
    out.mkdir(parents=True, exist_ok=True)
    store = WebHdfsWalStore(stack.described["webhdfs"], stack.described["hbase_root"])
    before = {f.relpath: f.name for f in store.list_wal_files()}
    call_admin(stack.cluster_json, "roll", {})
    _wait_for_new_files(store, set(before))
    names = set(before.values())
    return [_copy(store, status.name, out / status.name) for status in store.list_wal_files()
            if status.name in names and status.size > HEADER_ONLY and status.name not in skip]


def _copy(store: WebHdfsWalStore, name: str, target: Path) -> Path:
    """WAL file ``name`` copied to ``target`` from wherever it is now: HBase archives a
    closed file once its regions flushed, maybe between the listing and the read."""
    for _ in range(3):
        path = next(f.path for f in store.list_wal_files() if f.name == name)
        try:
            with store.open(path) as source:
                data = source.read()
        except FileNotFoundError:
            continue
        target.write_bytes(data)
        return target
    raise AssertionError(f"WAL file {name} kept moving while it was copied")


def printed_entries(files: list[Path], version: str) -> dict[str, list[dict[str, Any]]]:
    """File name -> the entries ``version``'s own WALPrettyPrinter printed for it."""
    printed = pretty_print(files, version)
    entries = {}
    for path in files:
        result = printed[path.name]
        if "error" in result:
            raise AssertionError(f"WALPrettyPrinter failed on {path.name}: {result['error']}")
        entries[path.name] = parse(result["output"], result.get("reads"))
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
