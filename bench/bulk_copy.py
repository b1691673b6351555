"""The bulk copy beside the scan copy, on the embedded stack.

Usage: ``python -m bench.bulk_copy [--cells 2000000] [--ranges 4] [--repeat 1] [--quick]``
from the project's folder.

Starts two embedded clusters (``bench.range_engine.two_clusters``), fills a source table with
``--cells`` cells (rows of 4 cells, values of 100 bytes) and copies it in ``--ranges`` key
ranges, one after the other in this process, both ways into fresh target tables:

* the scan copy (``copy_range_task``): scanned and put through the target's write path;
* the bulk copy (``bulk_copy_range_task``): scanned, written as HFiles per target region and
  family, staged and loaded. The embedded cluster keeps no HFiles and takes no bulk load, so
  its load here is minihbase's stand-in (:mod:`minihbase.bulk_loads`): the staging is a local
  folder (the upload a local write, not WebHDFS) and, the target running in another process,
  each ``BulkLoadHFile`` is answered ``loaded`` at once (a real region server moves the file
  into the region: a rename). The figure is this process's side of the bulk
  copy (scan, HFile writing, staging); the scan copy's includes the embedded target's writes.

Prints seconds, cells/s and this process's CPU seconds of each, best of ``--repeat``
rounds (the two take turns), and the ratio. Asserts nothing.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from bench.range_engine import FAMILY, cluster, cuts, fill, two_clusters
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.ranges.tasks import CopyJob, copy_range_task
from hbase_migrate.snapshot import bulk_copy
from hbase_migrate.thrift.thrift2 import Thrift2Client
from minihbase.bulk_loads import BulkLoading
from tests.support.local_staging import LocalStaging


def run(endpoints: tuple[str, str], cells: int, ranges: int, repeat: int) -> None:
    source, dst = Thrift2Client(endpoints[0]), Thrift2Client(endpoints[1])
    source_spec, target_spec = cluster("source", endpoints[0]), cluster("target", endpoints[1])
    fill(source, "src", cells)
    names = iter(range(1, 1_000_000))
    staging = LocalStaging(Path(tempfile.mkdtemp(prefix="bulk-copy-bench-")))

    # the embedded target (in another process) takes no bulk load: acknowledged at once
    bulk_copy.open_loads = BulkLoading(target_spec.endpoints(), staging).open_loads

    def fresh() -> str:
        name = f"t{next(names)}"
        dst.create_table(TableDescriptor(name, (FamilyDescriptor(FAMILY, max_versions=3),)))
        return name

    best: dict[str, tuple[float, float, int]] = {}
    try:
        for _ in range(repeat):
            for label, task in (
                ("scan copy", copy_range_task),
                ("bulk copy", bulk_copy.bulk_copy_range_task),
            ):
                job = CopyJob(source_spec, target_spec, (("src", fresh()),), (0, 1 << 62))
                began, cpu = time.perf_counter(), time.process_time()
                copied = sum(task(job, r).cells for r in cuts(cells // 4, ranges, "src"))
                secs, cpu = time.perf_counter() - began, time.process_time() - cpu
                print(
                    f"  {label:<10} {copied:>9} cells {secs:>7.2f} s "
                    f"{copied / secs:>9.0f} cells/s  {cpu:>6.1f} CPU s here",
                    flush=True,
                )
                if label not in best or secs < best[label][0]:
                    best[label] = (secs, cpu, copied)
    finally:
        shutil.rmtree(staging.folder, ignore_errors=True)
    scan, bulk = best["scan copy"], best["bulk copy"]
    print(
        f"best: scan copy {scan[0]:.2f} s ({scan[1]:.1f} CPU s here), bulk copy "
        f"{bulk[0]:.2f} s ({bulk[1]:.1f} CPU s here): bulk {scan[0] / bulk[0]:.2f}x the "
        f"scan copy's rate at {cells} cells in {ranges} ranges"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=2_000_000)
    parser.add_argument("--ranges", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=1, help="rounds (best run is kept)")
    parser.add_argument("--quick", action="store_true", help="smoke run (8000 cells)")
    args = parser.parse_args()
    cells = 8_000 if args.quick else args.cells
    with two_clusters() as endpoints:
        run(endpoints, cells, args.ranges, args.repeat)


if __name__ == "__main__":
    main()
