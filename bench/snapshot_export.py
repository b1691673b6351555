"""The ``hbase`` copy method's export against HBase's own ExportSnapshot, on the same snapshot
between the same two real HBase clusters, one after the other in one sitting.

Usage: ``python bench/snapshot_export.py [--mb 200] [--quick]``

Starts two real HBase 2.6.1 clusters (``realstack``, one region server each), writes a table
of ``--mb`` megabytes (two families, four regions, values of 64 KB, flushed in four rounds:
several HFiles per store) on the source and snapshots it through the project's admin helper.
Then, each in its own child process:

* the project's export (:func:`hbase_migrate.snapshot.hbase_method.export_snapshots`,
  in-process engine: one file at a time, each streamed over WebHDFS and compared on both
  sides, a ledger row each) into the target's HBase root;
* ``org.apache.hadoop.hbase.snapshot.ExportSnapshot`` from ``hbase-mapreduce`` (Hadoop's
  local job runner, one mapper, reading and writing through ``webhdfs://`` as the project
  does, checksums verified as by default) into another folder of the target's HDFS.

Prints, for each, the wall-clock time, the bytes of the snapshot's files per second and the
peak RSS of its process, and the ratios (ours over ExportSnapshot's). Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.config import load_config
from hbase_migrate.hbase.admin import connect_admin
from hbase_migrate.jvm.maven import java_command
from hbase_migrate.snapshot.hbase_method import (
    hdfs_root,
    take_snapshots,
)
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType
from minihbase.workload import FAMILIES, SPLITS
from realstack.hbase import RealHBase, RealHBaseOptions
from realstack.maven import module_classpath as realstack_classpath
from stackprocs.admin_client import call_admin

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TABLE = "bench_export"
VALUE = 64 * 1024
ROUNDS = 4
EXPORT_SNAPSHOT = "org.apache.hadoop.hbase.snapshot.ExportSnapshot"

OURS = """
import json, sys, time
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.config import IN_PROCESS, load_config
from hbase_migrate.snapshot.export import ExportJob
from hbase_migrate.snapshot.hbase_method import TableSnapshot, export_snapshots, hdfs_root
from hbase_migrate.snapshot.hbase_method import read_description
spec, name = load_config(sys.argv[1]), sys.argv[2]
source, target = hdfs_root(spec.source), hdfs_root(spec.target)
taken = [TableSnapshot(spec.tables[0], read_description(source, f".hbase-snapshot/{name}"))]
with Ledger.open(spec.ledger_url) as ledger:
    record = ledger.ensure_spec(spec)
    job = ExportJob(spec.source, spec.target, spec.ledger_url, record.id)
    began = time.monotonic()
    summary = export_snapshots(spec, taken, source, target, job, IN_PROCESS)
    print(json.dumps({"seconds": time.monotonic() - began, "bytes": summary.bytes,
                      "files": summary.files}))
"""


def load(endpoints: ClusterEndpoints, cluster_json: Path, megabytes: int) -> None:
    """``megabytes`` of 64 KB values over the four regions and both families, flushed in
    ``ROUNDS`` rounds."""
    rows = max(ROUNDS, megabytes * 1024 * 1024 // VALUE)
    keys = [f"{prefix}{i:06d}".encode() for i in range(rows // 4 + 1)
            for prefix in ("a", "h", "q", "s")][:rows]
    with Thrift2Client(endpoints.thrift2 or "") as client:
        client.create_table(TableDescriptor(TABLE, FAMILIES), SPLITS)
        for r in range(ROUNDS):
            batch = keys[r::ROUNDS]
            for i in range(0, len(batch), 16):
                client.put_cells(TABLE, [
                    Cell(key, FAMILIES[n % 2].name, b"v", 1_700_000_000_000 + r,
                         CellType.PUT, os.urandom(VALUE))
                    for n, key in enumerate(batch[i:i + 16])])
            call_admin(cluster_json, "flush", {"table": TABLE})


def measured(command: list[str], env: dict[str, str] | None = None) -> tuple[float, int, str]:
    """Run ``command``; its wall-clock seconds, peak RSS (bytes) and stdout."""
    began = time.monotonic()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE, env=env,
                                cwd=REPO)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.monotonic() - began
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        out.seek(0)
        text = out.read().decode(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"{command[0]} failed ({proc.returncode}): {err[-2000:]}")
    return seconds, usage.ru_maxrss * 1024, text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200, help="size of the table's data")
    parser.add_argument("--quick", action="store_true", help="a smoke run (24 MB)")
    args = parser.parse_args()
    megabytes = 24 if args.quick else args.mb
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        folder = Path(tmp)
        options = RealHBaseOptions(region_servers=1, heap="1g")
        with RealHBase(folder / "src", options) as src, RealHBase(folder / "dst", options) as dst:
            source = ClusterEndpoints.from_json(src.described)
            target = ClusterEndpoints.from_json(dst.described)
            began = time.monotonic()
            load(source, src.cluster_json, megabytes)
            print(f"table {TABLE}: {megabytes} MB written and flushed in {ROUNDS} rounds in "
                  f"{time.monotonic() - began:.0f} s", flush=True)
            config = folder / "m.toml"
            config.write_text(
                f'[migration]\nname = "bench"\nledger = "sqlite:///{folder / "l.db"}"\n'
                f'[source]\ncluster_json = "{src.cluster_json}"\n'
                f'[target]\ncluster_json = "{dst.cluster_json}"\n'
                f'[[tables]]\nsource = "{TABLE}"\n[snapshot]\nmethod = "hbase"\n',
                encoding="utf-8")
            spec = load_config(config)
            source_root = hdfs_root(spec.source)
            snap, = take_snapshots(spec, source_root,
                                   connect_admin(spec.source, spec.snapshot.hbase_version))
            env = {**os.environ, "PYTHONPATH": str(REPO)}
            ours_s, ours_rss, said = measured([sys.executable, "-c", OURS, str(config),
                                               snap.name], env)
            ours = json.loads(said.strip().splitlines()[-1])

            classpath = realstack_classpath("mapreduce",
                                            {"hbase.version": spec.snapshot.hbase_version})
            netloc = lambda e: urlsplit(e.webhdfs or "").netloc  # noqa: E731
            command = java_command(classpath, EXPORT_SNAPSHOT, [
                "-snapshot", snap.name,
                "-copy-from", f"webhdfs://{netloc(source)}{source.hbase_root}",
                "-copy-to", f"webhdfs://{netloc(target)}/exportsnapshot",
                "-mappers", "1"], heap="1g", system_properties={
                "mapreduce.framework.name": "local", "hadoop.tmp.dir": str(folder / "mr"),
                "fs.defaultFS": "file:///"})
            theirs_s, theirs_rss, _ = measured(command)

    size = ours["bytes"]
    print(f"snapshot {snap.name}: {ours['files']} files, {size / 1e6:.1f} MB\n")
    print(f"{'':24}{'seconds':>10}{'MB/s':>10}{'peak RSS MB':>14}")
    rows = [("hbase-migrate export", ours["seconds"], ours_rss),
            ("  (its process, whole)", ours_s, ours_rss),
            ("ExportSnapshot (local)", theirs_s, theirs_rss)]
    for name, seconds, rss in rows:
        print(f"{name:24}{seconds:10.1f}{size / seconds / 1e6:10.1f}{rss / 1e6:14.0f}")
    print(f"\nratio ours/ExportSnapshot: throughput {theirs_s / ours_s:.2f} (process to "
          f"process), peak RSS {ours_rss / theirs_rss:.2f}")


if __name__ == "__main__":
    main()
