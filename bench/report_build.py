"""How long the audit report takes as a migration's ledger grows, beside ``status`` on the
same ledger.

Usage: ``python bench/report_build.py [--quick] [--repeat 3]``

Writes ledgers through the ledger's API (the test suite's synthetic migration: region
servers with WAL files, catch-up runs by a DAG, a backfill, gaps, validations, a cutover
check) of about 500 and 5,000 WAL files, then prints for each: the time to read the ledger,
the time to render the page, the page's size, and the time ``status`` takes to compute its
report of the same ledger, with the ratio report / status. Best of ``--repeat``. Asserts
nothing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' synthetic ledger

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.status import compute_status
from hbase_migrate.report import model, page
from tests.report.synthetic import NAME, build


def best(repeat: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the small ledger")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = [(10, 50, 100)] + ([] if args.quick else [(10, 500, 1000)])
    print(f"{'WAL files':>9} {'steps':>6} {'read s':>7} {'render s':>9} {'page KB':>8} "
          f"{'status s':>9} {'report/status':>14}")
    for servers, per_server, runs in sizes:
        with tempfile.TemporaryDirectory() as folder:
            measure(Path(folder), servers, per_server, runs, args.repeat)


def measure(folder: Path, servers: int, per_server: int, runs: int, repeat: int) -> None:
    t0 = time.perf_counter()
    facts = build(folder, servers=servers, files_per_server=per_server, runs=runs)
    written = time.perf_counter() - t0
    with Ledger.open(facts.url, upgrade_schema=False) as ledger:
        data = model.load(ledger, NAME, facts.now)
        read = best(repeat, lambda: model.load(ledger, NAME, facts.now))
        render = best(repeat, lambda: page.render(data, folder))
        status = best(repeat, lambda: compute_status(ledger, now=facts.now))
    size = len(page.render(data, folder).encode()) / 1024
    print(f"{facts.files:>9} {len(data.steps):>6} {read:>7.3f} {render:>9.3f} "
          f"{size:>8.0f} {status:>9.3f} {(read + render) / status:>14.2f}"
          f"   (ledger written in {written:.0f} s)", flush=True)

if __name__ == "__main__":
    main()
