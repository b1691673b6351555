"""Make the golden snapshot of ``tests/data/real-mob-encoded/``: as ``mob_golden.py``'s, but
the families encoded, so their store files hold compressed tags (a family with a
``DATA_BLOCK_ENCODING`` compresses tags by default, ``COMPRESS_TAGS``), and cells with
their own TTL: a MOB family ``m`` in FAST_DIFF (its reference cells carry tags 5 and 6, and
the TTL tag of the cell they stand for) and a plain family ``f`` in DIFF. Real HBase
(realstack, one region server) takes the cells with their tags through the RPC codec that
carries them (``KeyValueCodecWithTags``), as replication does; TTL tags (type 8: a Put's
``setTTL`` becomes one) of ten days on most cells and of one second on some, expired
before HBase's scan. ``OUT/expected.json`` is the table as HBase's Java client scanned it
then, with the scan's time. ``python -m tests.realstack.mob_encoded_golden OUT
[--hbase-version V]`` (``make golden-mob``)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from tempfile import TemporaryDirectory

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.config import load_config
from hbase_migrate.hbase.admin import connect_admin
from hbase_migrate.rpc.client import NativeClient
from hbase_migrate.rpc.cluster import NativeCluster
from hbase_migrate.rpc.codec import KEYVALUE_CODEC_WITH_TAGS
from hbase_migrate.wal.model import Cell, CellType, Tag
from realstack.hbase import DEFAULT_VERSION, RealHBase, RealHBaseOptions
from stackprocs.admin_client import call_admin
from tests.realstack.java_cells import java_dump
from tests.realstack.mob_golden import copy_tree

TABLE = "mobenc"
SNAPSHOT = "mobenc_snapshot"
THRESHOLD = 100
SPLIT = b"row-5"
FAMILIES = (FamilyDescriptor(b"m", max_versions=3, mob=True, mob_threshold=THRESHOLD,
                             data_block_encoding="FAST_DIFF"),
            FamilyDescriptor(b"f", max_versions=2, data_block_encoding="DIFF"))
TEN_DAYS, ONE_SECOND = 10 * 86_400_000, 1000


def ttl(ms: int) -> tuple[Tag, ...]:
    """A cell's own TTL tag (``TagType.TTL_TAG_TYPE``: the TTL in ms, a long)."""
    return (Tag(8, ms.to_bytes(8, "big")),)


def first_cells(ts: int) -> list[Cell]:
    """Ten rows: a MOB value (over the threshold), a small value of the MOB family, a plain
    value, each with a TTL of ten days; row-2's MOB column twice; a MOB value and a plain
    one of one second on rows 3 and 6, expired before the scan."""
    cells = []
    for i in range(10):
        row = b"row-%d" % i
        cells += [Cell(row, b"m", b"big", ts, CellType.PUT, b"B%d-" % i * 60, ttl(TEN_DAYS)),
                  Cell(row, b"m", b"small", ts, CellType.PUT, b"s%d" % i * 5, ttl(TEN_DAYS)),
                  Cell(row, b"f", b"x", ts, CellType.PUT, b"x%d" % i, ttl(TEN_DAYS + i))]
        if i in (3, 6):
            cells += [Cell(row, b"m", b"brief", ts, CellType.PUT, b"G%d-" % i * 50,
                           ttl(ONE_SECOND)),
                      Cell(row, b"f", b"brief", ts, CellType.PUT, b"g%d" % i, ttl(ONE_SECOND))]
    cells.append(Cell(b"row-2", b"m", b"big", ts + 1, CellType.PUT, b"C2-" * 70, ttl(TEN_DAYS)))
    return cells


def second_cells(ts: int) -> list[Cell]:
    """After the first flush: a newer MOB version of row-3 with no TTL, row-7's MOB column
    deleted, a new MOB column of row-8."""
    return [Cell(b"row-3", b"m", b"big", ts, CellType.PUT, b"D3-" * 80),
            Cell(b"row-7", b"m", b"big", ts, CellType.DELETE_COLUMN, b""),
            Cell(b"row-8", b"m", b"new", ts, CellType.PUT, b"E8-" * 50, ttl(TEN_DAYS))]


def generate(out: Path, version: str = DEFAULT_VERSION) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with TemporaryDirectory(prefix="mobenc-") as tmp:
        stack = RealHBase(Path(tmp) / "hbase", RealHBaseOptions(
            hbase_version=version, region_servers=1, heap="768m", name="mobenc"))
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
            described = stack.described
            with NativeCluster.of(spec.source.endpoints(), spec.gateway) as cluster:
                cluster.create_table(TableDescriptor(TABLE, FAMILIES), [SPLIT])
            with NativeClient(str(described["zookeeper"]), str(described["znode_parent"]),
                              tags=True) as client:
                client.write(TABLE, first_cells(ts))
                call_admin(stack.cluster_json, "flush", {"table": TABLE})
                client.write(TABLE, second_cells(ts + 10))
                call_admin(stack.cluster_json, "flush", {"table": TABLE})
            connect_admin(spec.source, version).snapshot(TABLE, SNAPSHOT, 0)
            copy_tree(stack, out / "root", TABLE, SNAPSHOT)
            scanned = int(time.time() * 1000)
            dump = java_dump(described, TABLE, codec=KEYVALUE_CODEC_WITH_TAGS)
            (out / "expected.json").write_text(json.dumps(
                {"table": TABLE, "snapshot": SNAPSHOT, "hbase_version": version,
                 "scanned_at_ms": scanned,
                 "cells": [[c.row.hex(), c.family.hex(), c.qualifier.hex(), c.timestamp,
                            c.type, c.value.hex(), [[t.type, t.value.hex()] for t in c.tags]]
                           for c in dump.visible]}, indent=1) + "\n", encoding="utf-8")
        finally:
            stack.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--hbase-version", default=DEFAULT_VERSION)
    args = parser.parse_args()
    generate(args.out, args.hbase_version)
    print(args.out)


if __name__ == "__main__":
    main()
