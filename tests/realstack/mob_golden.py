"""Make the golden MOB snapshot of ``tests/data/real-mob/``: real HBase (realstack, one
region server) writes a table with a MOB family (``MOB_THRESHOLD`` 100 bytes) and a plain
one over two regions, values over and under the threshold, versions and a column delete,
in two flushes (two MOB files); an HBase snapshot of it is taken, and the snapshot's
manifest with every file under the table's ``data/``, ``mobdir/`` and ``archive/`` folders
is copied into ``OUT/root`` (the HBase root's layout). ``OUT/expected.json`` is the table as
HBase's Java client scans it then (every version a read sees). ``python -m
tests.realstack.mob_golden OUT [--hbase-version V]`` (``make golden-mob``)."""

from __future__ import annotations

import argparse
import json
import posixpath
import shutil
import time
from pathlib import Path
from tempfile import TemporaryDirectory

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.config import load_config
from hbase_migrate.hbase.admin import connect_admin
from hbase_migrate.rpc.cluster import NativeCluster
from hbase_migrate.wal.model import Cell, CellType
from realstack.hbase import DEFAULT_VERSION, RealHBase, RealHBaseOptions
from stackprocs.admin_client import call_admin
from tests.realstack.java_cells import java_dump

TABLE = "mobgold"
SNAPSHOT = "mobgold_snapshot"
THRESHOLD = 100
SPLIT = b"row-5"
FAMILIES = (FamilyDescriptor(b"m", max_versions=3, mob=True, mob_threshold=THRESHOLD),
            FamilyDescriptor(b"f", max_versions=2))


def first_cells(ts: int) -> list[Cell]:
    """Ten rows: a MOB value (over the threshold), a small value of the MOB family, a plain
    family's value; row-2's MOB column twice."""
    cells = []
    for i in range(10):
        row = b"row-%d" % i
        cells += [Cell(row, b"m", b"big", ts, CellType.PUT, b"B%d-" % i * 60),
                  Cell(row, b"m", b"small", ts, CellType.PUT, b"s%d" % i * 5),
                  Cell(row, b"f", b"x", ts, CellType.PUT, b"x%d" % i)]
    cells.append(Cell(b"row-2", b"m", b"big", ts + 1, CellType.PUT, b"C2-" * 70))
    return cells


def second_cells(ts: int) -> list[Cell]:
    """After the first flush: a newer MOB version of row-3, row-7's MOB column deleted."""
    return [Cell(b"row-3", b"m", b"big", ts, CellType.PUT, b"D3-" * 80),
            Cell(b"row-7", b"m", b"big", ts, CellType.DELETE_COLUMN, b""),
            Cell(b"row-8", b"m", b"new", ts, CellType.PUT, b"E8-" * 50)]


def generate(out: Path, version: str = DEFAULT_VERSION) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with TemporaryDirectory(prefix="mobgold-") as tmp:
        stack = RealHBase(Path(tmp) / "hbase", RealHBaseOptions(
            hbase_version=version, region_servers=1, heap="768m", name="mobgold"))
        stack.start()
        try:
            config = Path(tmp) / "migration.toml"
            config.write_text(
                f'[migration]\nname = "gold"\nledger = "sqlite:///{tmp}/ledger.db"\n'
                f'[source]\ncluster_json = "{stack.cluster_json}"\n'
                f'[target]\ncluster_json = "{stack.cluster_json}"\n'
                f'[[tables]]\nsource = "{TABLE}"\n', encoding="utf-8")
            spec = load_config(config)
            ts = int(time.time() * 1000) - 60_000
            with NativeCluster.of(spec.source.endpoints(), spec.gateway) as cluster:
                cluster.create_table(TableDescriptor(TABLE, FAMILIES), [SPLIT])
                cluster.write_cells(TABLE, first_cells(ts))
                call_admin(stack.cluster_json, "flush", {"table": TABLE})
                cluster.write_cells(TABLE, second_cells(ts + 10))
                call_admin(stack.cluster_json, "flush", {"table": TABLE})
            connect_admin(spec.source, version).snapshot(TABLE, SNAPSHOT, 0)
            copy_tree(stack, out / "root", TABLE, SNAPSHOT)
            dump = java_dump(stack.described, TABLE)
            (out / "expected.json").write_text(json.dumps(
                {"table": TABLE, "snapshot": SNAPSHOT, "hbase_version": version,
                 "cells": [[c.row.hex(), c.family.hex(), c.qualifier.hex(), c.timestamp,
                            c.type, c.value.hex()] for c in dump.visible]}, indent=1) + "\n",
                encoding="utf-8")
        finally:
            stack.stop()


def copy_tree(stack: RealHBase, into: Path, table: str, snapshot: str) -> None:
    """The snapshot's folder and the table's files (live, MOB, archived) under the HBase
    root, into ``into`` with the root's layout."""
    from hdfs import InsecureClient

    client = InsecureClient(str(stack.described["webhdfs"]))
    root = str(stack.described["hbase_root"])
    if into.exists():
        shutil.rmtree(into)
    for folder in (f".hbase-snapshot/{snapshot}", f"data/default/{table}",
                   f"mobdir/data/default/{table}", f"archive/data/default/{table}"):
        base = posixpath.join(root, folder)
        if client.status(base, strict=False) is None:
            continue
        for path, _dirs, files in client.walk(base):
            for name in files:
                skipped = "/.tmp" in path or "/recovered.edits" in path or (
                    name.startswith(".") and name != ".snapshotinfo")
                if skipped:
                    continue
                rel = posixpath.relpath(posixpath.join(path, name), root)
                local = into / rel
                local.parent.mkdir(parents=True, exist_ok=True)
                with client.read(posixpath.join(path, name)) as reader:
                    local.write_bytes(reader.read())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--hbase-version", default=DEFAULT_VERSION)
    args = parser.parse_args()
    generate(args.out, args.hbase_version)
    print(args.out)


if __name__ == "__main__":
    main()
