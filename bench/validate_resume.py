"""What a resumable validation saves, and what recording each range costs.

Usage: ``python bench/validate_resume.py [--cells 200000] [--ranges 40] [--quick]``

Two embedded clusters in this process; a source table of ``--cells`` cells (rows of 4 cells
of 100 bytes) copied to the target and cut into about ``--ranges`` key ranges. Prints the
seconds of: a whole validation (in-process, the step as ``hbase-migrate validate`` runs it,
GX's judgement included, after one untimed to load GX); one stopped by a fault once half
its ranges are recorded (the source gateway refuses new scanners); the validation that
continues it; and a ledger row per range (``range_checksums``, SQLite: on the step's open
ledger, as in-process tasks record, and on a ledger opened for the row, as tasks elsewhere
do). Asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import sqlite3
import tempfile
import time
from pathlib import Path

from bench.range_engine import fill
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.config import load_config
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.lifecycle import prepare, snapshot, validate
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.stats import RangeStats
from hbase_migrate.ranges.tasks import RangePair
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.validate.gx_process import GxProcess
from hbase_migrate.validate.resume import ChecksumRecorder
from minihbase.model import MiniHBaseError
from minihbase.server import MiniHBase

TABLE = "bench"


class RefuseAfter(collections.deque[tuple[str, bytes, bytes]]):
    """The source gateway's log of scanners opened: refuses them once ``after`` more
    ranges are recorded in the ledger."""

    def __init__(self, ledger: Path, after: int) -> None:
        super().__init__()
        self.ledger = ledger
        self.after = self.recorded() + after

    def recorded(self) -> int:
        with sqlite3.connect(self.ledger) as db:
            return int(db.execute("SELECT count(*) FROM range_checksums").fetchone()[0])

    def append(self, scan: tuple[str, bytes, bytes]) -> None:
        if self.recorded() >= self.after:
            raise MiniHBaseError("bench fault: the gateway refuses new scanners")
        super().append(scan)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cells", type=int, default=200_000)
    parser.add_argument("--ranges", type=int, default=40)
    parser.add_argument("--quick", action="store_true", help="20,000 cells in 10 ranges")
    args = parser.parse_args()
    if args.quick:
        args.cells, args.ranges = 20_000, 10
    with tempfile.TemporaryDirectory(prefix="resume-bench-") as tmp, \
            MiniHBase(Path(tmp) / "src", "source") as src, \
            MiniHBase(Path(tmp) / "dst", "target") as dst, GxProcess() as gx:
        with Thrift2Client(src.endpoints.thrift2 or "") as client:
            fill(client, TABLE, args.cells)
        config = Path(tmp) / "migration.toml"
        config.write_text(
            f'[migration]\nname = "bench"\nledger = "sqlite:///{tmp}/ledger.db"\n'
            f'[source]\ncluster_json = "{src.write_cluster_json()}"\n'
            f'[target]\ncluster_json = "{dst.write_cluster_json()}"\n'
            f'[[tables]]\nsource = "{TABLE}"\n[spark]\nmaster = "in-process"\n'
            f'[ranges]\nmax_cells = {max(1, args.cells // args.ranges)}\n', encoding="utf-8")
        spec = load_config(config)
        prepare(spec)
        snapshot(spec)
        gateway = src.thrift2_handler
        assert gateway is not None

        validate(spec, recompare_wait=0, gx=gx)  # GX loaded before the timed runs
        began = time.monotonic()
        whole = validate(spec, recompare_wait=0, gx=gx)
        full = time.monotonic() - began
        ranges = whole.metrics["tables"][0]["ranges"]
        gateway.scans_opened = RefuseAfter(Path(tmp) / "ledger.db", ranges // 2)
        began = time.monotonic()
        with contextlib.suppress(HBaseMigrateError):
            validate(spec, recompare_wait=0, gx=gx)
        stopped = time.monotonic() - began
        gateway.scans_opened = collections.deque()
        began = time.monotonic()
        resumed = validate(spec, recompare_wait=0, gx=gx)
        rest = time.monotonic() - began
        carried = resumed.metrics["resumed"]["ranges"]
        with sqlite3.connect(Path(tmp) / "ledger.db") as db:
            rows = int(db.execute("SELECT count(*) FROM range_checksums").fetchone()[0])
        per_row = record_cost(spec.ledger_url, resumed.step_id or 0, shared=False)
        shared_row = record_cost(spec.ledger_url, resumed.step_id or 0, shared=True)
    print(f"{args.cells} cells, {ranges} key ranges (in-process, [ranges] threads 4)")
    print(f"  whole validation                      {full:7.2f} s")
    print(f"  stopped once {ranges // 2} ranges were recorded  {stopped:7.2f} s")
    print(f"  continued: {carried} ranges carried over  {rest:7.2f} s "
          f"(verdict {resumed.verdict})")
    print(f"  range_checksums rows recorded: {rows}; one row (SQLite): "
          f"{shared_row * 1000:.1f} ms on the step's ledger (in-process tasks), "
          f"{per_row * 1000:.1f} ms opening a ledger for it (tasks elsewhere)")


def record_cost(ledger_url: str, step_id: int, shared: bool, rows: int = 200) -> float:
    """Seconds per ``range_checksums`` row as a range task records it: on one open ledger
    (``shared``), or on a ledger opened for the row."""
    recorder = ChecksumRecorder(ledger_url, 1, step_id, "bench", (), ())
    with Ledger.open(ledger_url) as ledger:
        began = time.monotonic()
        for i in range(rows):
            key_range = KeyRange(TABLE, b"%d-%06d" % (shared, i), b"%d-%06d~" % (shared, i))
            side = RangeStats(key_range, 1, 4, "0" * 64)
            recorder.record(RangePair(side, side), ledger if shared else None)
        return (time.monotonic() - began) / rows


if __name__ == "__main__":
    main()
