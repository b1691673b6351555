"""A snapshot side's per-cell work, local: store files read, merged, matched and digested
(``validate --from snapshot``'s path from a region's file bytes to its range digest), no
HBase. CPU seconds per run and cells per CPU second, side by side: the pure-Python
reference, another checkout (``--baseline``: the code before a change, its compiled modules
built) and this one.

Usage: ``python bench/snapshot_read.py [--cells 200000 2000000] [--families 2] [--files 2]
[--encoding NONE] [--baseline CHECKOUT] [--reference-cells 200000] [--rounds 1] [--keep DIR]``

Writes, with the project's HFile writer, one region's store files: ``--families`` families
of ``--files`` files each (``--encoding``'s data blocks, no compression, mvcc kept), rows
``r%09d`` of four qualifiers a family, 50-byte values; row ``n`` in file ``n % files`` of
each family, so the files of a family interleave row by row as successive flushes of random
writes do. Each file's ``MAX_SEQ_ID_KEY`` is its index plus one. Then, in a child process
per run (the checkout's ``hbase_migrate`` first on its path), reads and digests the region as
``snapshot_range_stats`` (``snapshot/read.py``) does, every version, from its start row to
its end: ``hfile.region.region_digest`` (from the raw blocks) where the checkout has it and
its compiled modules run; else the rows digested by ``ranges.stats.digest_rows``, from
``hfile.region.region_rows`` where the checkout has it, else ``region_cells`` cut into rows
by ``itertools.groupby``, as ``range_rows`` did before it. The CPU seconds are the
child's ``time.process_time`` around that read, opening the files included. Checks that
every run gives the same rows, cells and digest; asserts nothing else. ``--keep DIR`` keeps
the written files there and reuses them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from hbase_migrate.hfile.writer import HFileSettings, HFileWriter
from hbase_migrate.wal.model import Cell

REPO = Path(__file__).resolve().parent.parent
PER_ROW = 4
# the child: argv families, files per family, then the folder; prints its figures as JSON
CHILD = """
import itertools, json, sys, time
from hbase_migrate.cluster.descriptors import ALL_VERSIONS, FamilyDescriptor
from hbase_migrate.hfile import region
from hbase_migrate.hfile.visible import ScanSpec
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.stats import DIGEST, RangeStats, digest_rows
families, files, folder = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
names = [b"f%d" % f for f in range(families)]
stores = {n: [f"{folder}/{n.decode()}-{k}" for k in range(files)] for n in names}
descriptors = [FamilyDescriptor(n, max_versions=ALL_VERSIONS) for n in names]
scan = ScanSpec(now_ms=int(time.time() * 1000), max_versions=ALL_VERSIONS)
key_range = KeyRange("t", b"", b"")
began = time.process_time()
if hasattr(region, "region_digest") and DIGEST.compiled() is not None:
    into = DIGEST.compiled().RangeDigest()  # this checkout: from the raw blocks
    region.region_digest(stores, descriptors, scan, into, key_range.start, key_range.stop)
    stats = RangeStats(key_range, *into.result())
else:
    if hasattr(region, "region_rows"):
        rows = region.region_rows(stores, descriptors, scan, key_range.start, key_range.stop)
    else:
        cells = region.region_cells(stores, descriptors, scan)
        rows = (list(g) for _r, g in itertools.groupby(cells, key=lambda c: c.row))
    stats = digest_rows(key_range, rows)
spent = time.process_time() - began
print(json.dumps({"cpu_s": spent, "rows": stats.rows, "cells": stats.cells,
                  "digest": stats.digest}))
"""


def write(folder: Path, cells: int, families: int, files: int, encoding: str) -> None:
    """The region's store files (skipped when ``folder`` holds them from an earlier run)."""
    done = folder / "done"
    if done.exists() and done.read_text() == f"{cells} {families} {files} {encoding}":
        return
    folder.mkdir(parents=True, exist_ok=True)
    rows = cells // (PER_ROW * families)
    for f in range(families):
        family = b"f%d" % f
        for k in range(files):
            with open(folder / f"{family.decode()}-{k}", "wb") as out:
                writer = HFileWriter(out, HFileSettings(encoding=encoding))
                for n in range(k, rows, files):
                    row = b"r%09d" % n
                    for q in range(PER_ROW):
                        writer.append(Cell(row, family, b"q%d" % q, 1_700_000_000_000 + n, 4,
                                           (b"%050d" % (n * PER_ROW + q))[:50]), n + 1)
                writer.close({b"MAX_SEQ_ID_KEY": (k + 1).to_bytes(8, "big")})
    done.write_text(f"{cells} {families} {files} {encoding}")


def run(checkout: Path, folder: Path, families: int, files: int, pure: bool) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    if pure:
        env["HBASE_MIGRATE_PURE_PYTHON"] = "1"
    done = subprocess.run([sys.executable, "-c", CHILD, str(families), str(files), str(folder)],
                          env=env, cwd=checkout, check=True, capture_output=True, text=True)
    found: dict[str, float] = json.loads(done.stdout)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, nargs="+", default=[200_000, 2_000_000])
    parser.add_argument("--families", type=int, default=2)
    parser.add_argument("--files", type=int, default=2)
    parser.add_argument("--encoding", default="NONE",
                        help="the data blocks' encoding (NONE, PREFIX, DIFF, FAST_DIFF, ...)")
    parser.add_argument("--baseline", type=Path, help="another checkout, compiled modules built")
    parser.add_argument("--reference-cells", type=int, default=200_000,
                        help="run the pure-Python reference up to this many cells")
    parser.add_argument("--rounds", type=int, default=1, help="runs each; the least CPU kept")
    parser.add_argument("--keep", type=Path, help="folder to keep the written files in")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="snapshot-read-") as scratch:
        base = args.keep or Path(scratch)
        for cells in args.cells:
            folder = base / f"{cells}-{args.families}x{args.files}-{args.encoding}"
            write(folder, cells, args.families, args.files, args.encoding)
            runs = {}
            if cells <= args.reference_cells:
                runs["reference (pure Python)"] = (REPO, True)
            if args.baseline:
                runs["baseline (compiled)"] = (args.baseline.resolve(), False)
            runs["this checkout (compiled)"] = (REPO, False)
            found = {name: min((run(where, folder, args.families, args.files, pure)
                                for _ in range(args.rounds)), key=lambda r: r["cpu_s"])
                     for name, (where, pure) in runs.items()}
            results = {(r["rows"], r["cells"], r["digest"]) for r in found.values()}
            print(f"{cells:,} cells written, {args.families} families x {args.files} files, "
                  f"{args.encoding} "
                  f"({next(iter(found.values()))['cells']:,} read); same rows, cells and "
                  f"digest in every run: {len(results) == 1}")
            for name, r in found.items():
                print(f"  {name:26} {r['cpu_s']:8.2f} CPU s  {r['cells'] / r['cpu_s']:>11,.0f} "
                      "cells / CPU s")


if __name__ == "__main__":
    main()
