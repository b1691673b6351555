"""The bulk replay's memory as its backlog grows: a window held whole beside one that spills
sorted runs past its memory budget (``replay/bulkfiles.py``, ``replay/bulkspill.py``).

Usage: ``python bench/bulk_window_memory.py [--cells 200000,2000000,20000000]
[--before REV] [--window 256MiB] [--memory BYTES] [--json bench/out/bulk_window_memory.json]``

In-process, no cluster: each size and mode in a child process of its own, which makes the
cells of issue 78's workload (``peers.py --row-cells 5``: rows of five cells over two
families of a table of four regions, values of 60-140 bytes, one cell in 25 a DeleteColumn
of the version just written), hands them to a ``BulkWindow`` a row at a time as the bulk
replay's sink does, and after every 280,000 cells (a WAL file of that workload, about 38 MB)
writes the window's HFiles once it holds ``--window`` bytes (``[replay] bulk_window``'s
default), as ``BulkReplay.after_file`` does, and once more at the end; the files are deleted
after each window (the load's stand-in). Modes: ``before``, the window held whole
(``bulkfiles.py`` of ``--before REV`` when given, else the current one with no memory
budget: the same algorithm) and ``after``, the current window with its budget
(``--memory``, else ``SPILL_BYTES``). Printed per run: wall and CPU seconds, the peak RSS
(``ru_maxrss``), the windows written, the runs spilled, the cells written and a digest of
every file's bytes (the two modes must write the same files). Asserts nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hbase_migrate.cluster.descriptors import (  # noqa: E402
    FamilyDescriptor,
    RegionDescriptor,
    TableDescriptor,
)
from hbase_migrate.cluster.sizing import format_bytes  # noqa: E402
from hbase_migrate.wal.model import Cell, CellType  # noqa: E402

FILE_CELLS = 280_000  # cells of one WAL file of the workload
TABLE = TableDescriptor("bench:bulk", (FamilyDescriptor(b"d"), FamilyDescriptor(b"e")))
BOUNDS = [b"", b"r2", b"r5", b"r7", b""]
REGIONS = [RegionDescriptor(TABLE.name, BOUNDS[n], BOUNDS[n + 1], n + 1) for n in range(4)]
LOADED_AT = 1_700_000_000_000  # the files' BULKLOAD_TIMESTAMP: the same in every run


def rows(count: int, seed: int = 5) -> Iterator[list[Cell]]:
    """Rows of five cells (columns over both families in turn), deletes as ``peers.py``."""
    import random
    rng = random.Random(seed)
    ts = made = 0
    while made < count:
        row = b"r%d-%08d" % (rng.randrange(10), rng.randrange(10**8))
        cells = []
        for column in range(5):
            family, qualifier = (b"d", b"e")[column % 2], b"q%d" % (column // 2)
            ts += 1
            cells.append(Cell(row, family, qualifier, LOADED_AT + ts, CellType.PUT,
                              rng.randbytes(rng.randint(60, 140))))
            made += 1
            if made % 25 == 0:
                cells.append(Cell(row, family, qualifier, LOADED_AT + ts,
                                  CellType.DELETE_COLUMN))
                made += 1
        yield cells


def window_class(before: str | None) -> Any:
    """``BulkWindow`` of revision ``before`` (its ``bulkfiles.py`` from git), or the current;
    its files stamped with a fixed creation time, so that two runs write the same bytes."""
    if before is None:
        from hbase_migrate.replay import bulkfiles as module
    else:
        source = subprocess.run(["git", "show", f"{before}:hbase_migrate/replay/bulkfiles.py"],
                                cwd=ROOT, check=True, capture_output=True).stdout
        spec = importlib.util.spec_from_loader("bulkfiles_before", loader=None)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        exec(compile(source, f"{before}:bulkfiles.py", "exec"), module.__dict__)
    settings = module.family_settings
    module.family_settings = lambda family: replace(settings(family), create_time=LOADED_AT)
    return module.BulkWindow


def child(mode: str, cells: int, window_bytes: int, memory: int | None,
          before: str | None) -> dict[str, Any]:
    cls = window_class(before if mode == "before" else None)
    options: dict[str, Any] = {}
    if mode == "before" and before is None:
        options["memory"] = None
    elif mode == "after" and memory is not None:
        options["memory"] = memory
    digest = hashlib.sha256()
    windows = runs = written = taken = 0
    began, cpu = time.monotonic(), time.process_time()
    with tempfile.TemporaryDirectory(prefix="bench-bulk-window-") as folder:
        win = cls(TABLE, REGIONS, **options)

        def write() -> None:
            nonlocal windows, runs, written
            runs += getattr(win, "runs", 0)
            out = Path(folder) / f"w{windows}"
            for f in win.write(out, "bench", loaded_at=LOADED_AT):
                written += f.cells
                with f.path.open("rb") as written_file:  # streaming: no file held whole
                    digest.update(hashlib.file_digest(written_file, "sha256").digest())
                f.path.unlink()
            windows += 1

        since = 0
        for row in rows(cells):
            win.add_cells(row)
            since += len(row)
            taken += len(row)
            if since >= FILE_CELLS:  # a file ended
                since = 0
                if win.bytes >= window_bytes:
                    write()
        if win.count:
            write()
    return {"mode": mode, "cells": taken, "wall_s": round(time.monotonic() - began, 2),
            "cpu_s": round(time.process_time() - cpu, 2),
            "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "windows": windows, "runs": runs, "written": written,
            "digest": digest.hexdigest()[:16]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", default="200000,2000000,20000000")
    parser.add_argument("--modes", default="before,after")
    parser.add_argument("--before", help="the revision whose bulkfiles.py is 'before'")
    parser.add_argument("--window", type=int, default=256 << 20)
    parser.add_argument("--memory", type=int, help="the window's memory budget (bytes)")
    parser.add_argument("--json", type=Path, default=ROOT / "bench/out/bulk_window_memory.json")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "CELLS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), args.window, args.memory,
                               args.before)))
        return
    results = []
    for cells in (int(c) for c in args.cells.split(",")):
        for mode in args.modes.split(","):
            command = [sys.executable, __file__, "--child", mode, str(cells),
                       "--window", str(args.window)]
            command += ["--memory", str(args.memory)] if args.memory is not None else []
            command += ["--before", args.before] if args.before else []
            done = subprocess.run(command, check=True, capture_output=True, text=True)
            result = json.loads(done.stdout.splitlines()[-1])
            results.append(result)
            print(f"{cells:>11,} {mode:<6} wall {result['wall_s']:7.1f} s  cpu "
                  f"{result['cpu_s']:7.1f} s  peak {result['peak_mb']:6,} MB  windows "
                  f"{result['windows']:3}  runs {result['runs']:4}  written "
                  f"{result['written']:,}  digest {result['digest']}", flush=True)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"window": format_bytes(args.window),
                                     "results": results}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
