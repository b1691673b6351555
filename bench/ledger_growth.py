"""How the ledger grows under a long ``--follow``: its size and the time of ``status`` after
many catch-up runs over many files, with each run's step metrics stored as the run's full
summary (per-file lists and manifest: the shape stored before) and as the run's totals (the
shape stored now), side by side in one run.

Usage: ``python bench/ledger_growth.py [--runs 1000] [--files 500] [--quick]``

Each ledger gets the same ``--files`` WAL-file rows (what the listings record, once per file)
and ``--runs`` replay steps, each finished with the metrics of a run that listed and read
every file; then ``status`` is computed three times (best time printed). SQLite files in a
temporary folder. Asserts nothing.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.status import compute_status
from hbase_migrate.replay.job import FileOutcome, Totals
from hbase_migrate.replay.summary import RunSummary
from hbase_migrate.wal.selection import Manifest, ManifestItem

T0 = 1_700_000_000_000
ROOT = "webhdfs://namenode:9870/hbase"


def summary(files: int) -> RunSummary:
    """A catch-up run that listed and read ``files`` files (one of them live)."""
    paths = [f"{ROOT}/oldWALs/rs{i % 20}.example.com%2C16020%2C1.{T0 + i * 60_000}"
             for i in range(files)]
    totals = Totals(120, {"Put": 400, "Delete": 3}, {"FLUSH": 2}, 0, T0 + 5_000)
    outcomes = [FileOutcome(p, f"rs{i % 20}.example.com,16020,1", 0, 65_536, True, totals,
                            "trailer", totals) for i, p in enumerate(paths)]
    items = tuple(ManifestItem(p, True, "content", "120 entries with write_time in the "
                               "window (write_time 2023-11-14 22:13:20 .. 22:14:20)",
                               T0 + i * 60_000, T0, T0 + 60_000, 120, state="archived",
                               size=65_536) for i, p in enumerate(paths))
    run = RunSummary("growth", "catch-up", T0, None, False, listed=files,
                     manifest=Manifest(T0, T0 + 86_400_000, 3_600_000, 300_000, items),
                     outcomes=outcomes)
    run.lag = 1_000
    return run


def grow(url: str, runs: int, files: int, metrics: Callable[[], dict[str, Any]]) -> None:
    with Ledger.open(url) as ledger:
        migration = ledger.ensure_migration("growth", "source", "target", [], now=T0)
        for i in range(files):
            ledger.record_wal_seen(migration.id, "source", f"rs{i % 20}",
                                   f"{ROOT}/oldWALs/f{i}", 65_536, T0 + i, now=T0)
        shape = metrics()
        for _ in range(runs):
            step = ledger.start_step(migration.id, "replay")
            ledger.finish_step(step, "succeeded", shape)


def status_seconds(url: str) -> float:
    best = float("inf")
    with Ledger.open(url) as ledger:
        for _ in range(3):
            began = time.perf_counter()
            compute_status(ledger, now=T0 + 86_400_000)
            best = min(best, time.perf_counter() - began)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--files", type=int, default=500)
    parser.add_argument("--quick", action="store_true", help="100 runs over 100 files")
    args = parser.parse_args()
    runs, files = (100, 100) if args.quick else (args.runs, args.files)
    run = summary(files)
    shapes = {"full summary (before)": run.to_json, "totals (now)": run.to_metrics}
    print(f"{runs} catch-up runs over {files} files")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, metrics in shapes.items():
            path = Path(tmp) / f"{len(results)}.db"
            began = time.perf_counter()
            grow(f"sqlite:///{path}", runs, files, metrics)
            took = time.perf_counter() - began
            results[label] = (path.stat().st_size, status_seconds(f"sqlite:///{path}"))
            size, status = results[label]
            print(f"{label:24} ledger {size / 1e6:9.2f} MB ({size / runs / 1e3:8.1f} KB a run), "
                  f"status {status * 1000:8.1f} ms, written in {took:.1f} s")
    (before_size, before_status), (after_size, after_status) = results.values()
    print(f"now / before: ledger size {after_size / before_size:.4f}x, "
          f"status time {after_status / before_status:.4f}x")


if __name__ == "__main__":
    main()
