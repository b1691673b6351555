"""The HFile writer's rate and memory, per data block encoding, compression and Bloom filter.

Usage: ``python bench/hfile_write.py [--cells 200000] [--quick] [--rounds 1] [--reference]``

Writes ``--cells`` cells (a row each, rows ``user%010d``, five qualifiers, values of 100
bytes, one in eight a delete marker) to a temporary file for each setting: NONE, PREFIX,
DIFF, FAST_DIFF, ROW_INDEX_V1 without compression or Bloom filter; FAST_DIFF with GZ,
SNAPPY, LZ4, ZSTD; FAST_DIFF with a ROW and a ROWCOL Bloom filter. Each in a child process:
its cells/s and MB/s (of the file) per CPU second of the write loop (``time.process_time``,
so a shared machine's load stays out; the best of ``--rounds`` writes) and its peak RSS,
written once at a tenth of the cells too (flat memory: the two should be alike). The
writer's per-cell loop runs compiled (``hfile/_writer.pyx``, built by ``make setup``) where
it is built; ``--reference`` measures its pure-Python reference (the other compiled modules,
CRC32C among them, as built; ``HBASE_MIGRATE_PURE_PYTHON=1`` puts every one in pure Python).
Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SETTINGS = [(e, "NONE", "NONE") for e in ("NONE", "PREFIX", "DIFF", "FAST_DIFF", "ROW_INDEX_V1")]
SETTINGS += [("FAST_DIFF", c, "NONE") for c in ("GZ", "SNAPPY", "LZ4", "ZSTD")]
SETTINGS += [("FAST_DIFF", "NONE", b) for b in ("ROW", "ROWCOL")]


def child(cells: int, encoding: str, compression: str, bloom: str, loop: str
          ) -> dict[str, float]:
    """Write the file in this process with the writer loop ``loop``; its figures."""
    from hbase_migrate.hfile.writer import WRITER, HFileSettings, HFileWriter
    from hbase_migrate.wal.model import Cell

    if loop == "python":
        WRITER.use("python")

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "f"
        start = time.process_time()
        with HFileWriter(path, HFileSettings(encoding=encoding, compression=compression,
                                             bloom=bloom)) as writer:
            for i in range(cells):
                kind = 8 if i % 8 == 7 else 4
                writer.append(Cell(b"user%010d" % i, b"f", b"q%d" % (i % 5),
                                   1_700_000_000_000 + i, kind, b"" if kind == 8 else
                                   (b"value-%d-" % i * 12)[:100]))
            writer.close()
        cpu = time.process_time() - start
        size = path.stat().st_size
    return {"cpu": cpu, "bytes": size,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def measure(cells: int, setting: tuple[str, str, str], loop: str) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, "--child", str(cells), *setting, loop],
                          capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cells", type=int, default=200_000)
    parser.add_argument("--quick", action="store_true", help="20,000 cells")
    parser.add_argument("--rounds", type=int, default=1,
                        help="write each file this many times, keep the fastest")
    parser.add_argument("--reference", action="store_true",
                        help="the writer's per-cell loop in pure Python")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(int(args.child[0]), *args.child[1:])))
        return
    cells = 20_000 if args.quick else args.cells
    from hbase_migrate.hfile.writer import WRITER

    loop = "python" if args.reference else WRITER.implementation()
    print(f"{cells:,} cells a file; writer loop {loop}; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'encoding':<13}{'compression':<12}{'bloom':<8}{'cells/s':>10}{'MB/s':>8}"
          f"{'file MB':>9}{'RSS MB':>8}{'RSS MB at 1/10':>16}")
    for setting in SETTINGS:
        full = min((measure(cells, setting, loop) for _ in range(max(1, args.rounds))),
                   key=lambda r: r["cpu"])
        tenth = measure(cells // 10, setting, loop)
        print(f"{setting[0]:<13}{setting[1]:<12}{setting[2]:<8}{cells / full['cpu']:>10,.0f}"
              f"{full['bytes'] / full['cpu'] / 1e6:>8.1f}{full['bytes'] / 1e6:>9.1f}"
              f"{full['rss_mb']:>8.0f}{tenth['rss_mb']:>16.0f}")


if __name__ == "__main__":
    main()
