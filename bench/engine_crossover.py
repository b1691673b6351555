"""Where Spark starts to pay: a step's range work in-process against Spark ``local[*]``, as a
step runs it (session start and stop included), at growing table sizes.

Usage: ``python bench/engine_crossover.py [--cells 10000,50000,200000] [--repeat 1]``

Starts two embedded clusters (subprocesses, as ``bench/range_engine.py`` does); for each size
fills a source table (rows of 4 cells of 100 bytes, cut into ranges of at most
``--max-cells`` cells) and prints, side by side, the seconds and cells/s of:

* the snapshot copy of every range (into a fresh target table), and
* the checksums of every range (both sides read),

each on the in-process engine and on ``local[*]`` (a new session per run, as a step that
starts Spark pays it), and the ratio Spark / in-process. The crossover is the size where
the ratio falls under 1: ``[spark] auto_cells`` (README). Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from bench.range_engine import FAMILY, cluster, cuts, fill, two_clusters
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.config import IN_PROCESS, LOCAL_SPARK_MASTER
from hbase_migrate.ranges.engine import bind, range_engine
from hbase_migrate.ranges.tasks import (
    ChecksumJob,
    CopyJob,
    checksum_range_task,
    copy_range_task,
)
from hbase_migrate.thrift.thrift2 import Thrift2Client

ENGINES = (IN_PROCESS, LOCAL_SPARK_MASTER)


def timed_step(master: str, task: Any, ranges: list[Any]) -> float:
    """Seconds of one step's range work on ``master``, engine start and stop included."""
    began = time.perf_counter()
    with range_engine(master, "bench-engine-crossover") as engine:
        engine.map(task, ranges, what="bench")
    return time.perf_counter() - began


def run(endpoints: tuple[str, str], sizes: list[int], max_cells: int, repeat: int) -> None:
    source, target = Thrift2Client(endpoints[0]), Thrift2Client(endpoints[1])
    src_spec, dst_spec = cluster("source", endpoints[0]), cluster("target", endpoints[1])
    fresh_tables = iter(range(1, 1_000_000))
    print(f"{'cells':>8} {'ranges':>6}  {'work':<10}" + "".join(
        f"{m + ' s':>14}" for m in ENGINES) + f"{'spark/in-process':>18}", flush=True)
    for cells in sizes:
        table = f"src{cells}"
        fill(source, table, cells)
        ranges = cuts(cells // 4, max(1, -(-cells // max_cells)), table)
        best: dict[tuple[str, str], float] = {}
        for _ in range(repeat):
            for master in ENGINES:
                copy_to = f"t{next(fresh_tables)}"
                target.create_table(TableDescriptor(copy_to, (FamilyDescriptor(
                    FAMILY, max_versions=3),)))
                copy = bind(copy_range_task, CopyJob(src_spec, dst_spec, ((table, copy_to),),
                                                     (0, 1 << 62)))
                checks = bind(checksum_range_task, ChecksumJob(src_spec, dst_spec,
                                                               ((table, copy_to),)))
                for work, task in (("copy", copy), ("checksums", checks)):
                    secs = timed_step(master, task, ranges)
                    key = (work, master)
                    best[key] = min(best.get(key, secs), secs)
        for work in ("copy", "checksums"):
            times = [best[(work, m)] for m in ENGINES]
            print(f"{cells:>8} {len(ranges):>6}  {work:<10}"
                  + "".join(f"{t:>14.1f}" for t in times)
                  + f"{times[1] / times[0]:>18.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", default="10000,50000,200000",
                        help="table sizes, comma-separated")
    parser.add_argument("--max-cells", type=int, default=20_000,
                        help="cells per range ([ranges] max_cells)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds (best run is kept)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.cells.split(",")]
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    with two_clusters() as endpoints:
        run(endpoints, sizes, args.max_cells, args.repeat)

if __name__ == "__main__":
    main()
