"""Run every benchmark in ``bench/``, one after the other, each in its own process.

Usage: ``python bench/run_all.py [--quick]``

Each script runs with this interpreter and prints its own figures under a header; a script
that fails is reported and the others still run (the exit status is then 1). ``--quick``
asks each for its smoke size: ``--quick`` where the script has it, a small ``--cells`` for
``gateway_throughput.py``. Asserts nothing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# script -> the arguments that make it a smoke run
BENCHMARKS: dict[str, list[str]] = {
    "wal_read.py": ["--quick"],
    "gateway_throughput.py": ["--cells", "4000", "--batches", "100,1000"],
    "replay_throughput.py": ["--quick"],
    "range_engine.py": ["--quick"],
    "report_build.py": ["--quick"],
    "cdc_throughput.py": ["--quick"],
    "bigtable_replay.py": ["--quick"],  # the Bigtable emulator (cbtemulator)
    "catchup_listing.py": ["--quick"],
    "open_wal_poll.py": ["--quick"],
    "ledger_growth.py": ["--quick"],
    "peers.py": ["--quick"],
    "clients.py": ["--quick"],  # one real HBase; hbase-driver from the `bench` group
    "sustained.py": ["--quick"],  # real HBase and its MapReduce tools: Java 17 and Maven
    "snapshot_export.py": ["--quick"],  # two real HBase and ExportSnapshot: Java 17, Maven
    "validate_resume.py": ["--quick"],
    "hfile_read.py": ["--quick"],  # real HBase, HFilePrettyPrinter, javac: Java 17, Maven
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke size for every benchmark")
    args = parser.parse_args()
    failed = []
    total = time.perf_counter()
    for script, quick in BENCHMARKS.items():
        argv = [sys.executable, str(HERE / script), *(quick if args.quick else [])]
        print(f"\n=== {script} {' '.join(argv[2:])}".rstrip(), flush=True)
        t0 = time.perf_counter()
        code = subprocess.run(argv, check=False).returncode
        status = "ok" if code == 0 else f"FAILED (exit {code})"
        print(f"=== {script}: {status} in {time.perf_counter() - t0:.0f} s", flush=True)
        if code:
            failed.append(script)
    print(f"\n{len(BENCHMARKS) - len(failed)}/{len(BENCHMARKS)} benchmarks ran in "
          f"{time.perf_counter() - total:.0f} s" + (f"; failed: {', '.join(failed)}"
                                                    if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
