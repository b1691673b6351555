"""What the live validation of a replay round costs beside a validation of every range.

Usage: ``python bench/round_validation.py [--cells 2000000] [--changed 0.1 1 10]``

Two embedded clusters in this process, reached over HBase's own RPC; a source table of
``--cells`` cells (rows of 4 cells of 100 bytes) copied to the target, replayed once and
validated whole (the rounds' baseline, untimed). Then, for each share of rows changed: that
share of the rows is rewritten on the source (one cell each), replayed, and validated twice
as the replay DAG would, timed: the round (``validate --live``) and every range
(``validate --live --whole``). Prints, side by side, the seconds of each, their ratio, and
the cells and requests each read on both sides. Checks that each round compared exactly the
rows changed and found them equal; asserts nothing else.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from bench.range_engine import FAMILY, fill
from hbase_migrate.config import load_config
from hbase_migrate.lifecycle import prepare, replay, snapshot, validate
from hbase_migrate.lifecycle.result import StepResult
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.validate.gx_process import GxProcess
from hbase_migrate.wal.model import Cell, CellType
from minihbase.server import MiniHBase
from minihbase.zookeeper import ZooKeeperServer

TABLE = "bench"


def read(result: StepResult) -> tuple[int, int]:
    """Cells and requests a validation read, both sides."""
    m = result.metrics
    tables = m["round"]["tables"] if "tables" in m.get("round", {}) else m["tables"]
    cells = sum(t["source_cells"] + t["target_cells"] for t in tables)
    return cells, m["source_requests"] + m["target_requests"]


def timed(run: callable) -> tuple[StepResult, float]:  # type: ignore[valid-type]
    began = time.monotonic()
    result = run()
    return result, time.monotonic() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cells", type=int, default=2_000_000)
    parser.add_argument("--changed", type=float, nargs="+", default=[0.1, 1.0, 10.0],
                        help="percent of the rows rewritten per round")
    args = parser.parse_args()
    rows = args.cells // 4
    rng = random.Random(72)
    with tempfile.TemporaryDirectory(prefix="round-bench-") as tmp, \
            ZooKeeperServer(Path(tmp) / "zk") as zk, \
            MiniHBase(Path(tmp) / "src", "source", zookeeper=zk.address,
                      znode_parent="/src") as src, \
            MiniHBase(Path(tmp) / "dst", "target", zookeeper=zk.address,
                      znode_parent="/dst") as dst, GxProcess() as gx:
        with Thrift2Client(src.endpoints.thrift2 or "") as client:
            fill(client, TABLE, args.cells)
        config = Path(tmp) / "migration.toml"
        config.write_text(
            f'[migration]\nname = "bench"\nledger = "sqlite:///{tmp}/ledger.db"\n'
            f'[source]\ncluster_json = "{src.write_cluster_json()}"\n'
            f'[target]\ncluster_json = "{dst.write_cluster_json()}"\n'
            f'[[tables]]\nsource = "{TABLE}"\n[spark]\nmaster = "in-process"\n'
            f'[replay]\nmargin = "1m"\n', encoding="utf-8")
        spec = load_config(config)
        prepare(spec)
        snapshot(spec)
        replay(spec)
        validate(spec, live=True, gx=gx)  # the baseline: every range
        print(f"{args.cells:,} cells in {rows:,} rows (embedded, HBase's RPC, in-process)")
        print(f"{'changed':>8} {'rows':>8} {'round s':>8} {'whole s':>8} {'faster':>7} "
              f"{'cells read':>18} {'requests':>16}")
        for pct in args.changed:
            changed = rng.sample(range(rows), max(1, int(rows * pct / 100)))
            with Thrift2Client(src.endpoints.thrift2 or "") as client:
                for at in range(0, len(changed), 2000):
                    client.put_cells(TABLE, [
                        Cell(b"row-%08d" % i, FAMILY, b"q0", 2_000, CellType.PUT, b"w" * 100)
                        for i in changed[at:at + 2000]])
            assert replay(spec).exit_code == 0
            round_, round_s = timed(lambda: validate(spec, live=True, gx=gx))
            found, = round_.metrics["round"]["tables"]
            assert (found["rows"], found["matching"]) == (len(changed), len(changed)), found
            whole, whole_s = timed(lambda: validate(spec, live=True, whole=True, gx=gx))
            (rc, rr), (wc, wr) = read(round_), read(whole)
            print(f"{pct:>7}% {len(changed):>8,} {round_s:>8.2f} {whole_s:>8.2f} "
                  f"{whole_s / round_s:>6.1f}x {rc:>8,}/{wc:<9,} {rr:>7,}/{wr:<8,}")


if __name__ == "__main__":
    main()
