"""The HFile reader beside HBase's own Java readers, on the same store files of real HBase.

Usage: ``python bench/hfile_read.py [--mb 300] [--python-mb 40] [--quick]
[--keep DIR | --files DIR] [--baseline CHECKOUT] [--rounds 1] [--json bench/out/hfile_read.json]``

Starts real HBase 2.6.1 (``realstack``, one region server) and writes a table of one region
and two families of about ``--mb`` megabytes of cells in all (rows ``r%09d``, qualifiers
``q0``..``q3``, values of 120-280 bytes, half of each repeated text, half random): ``f`` with
FAST_DIFF and no compression, ``g`` with no encoding and GZ; HBase flushes as its memstore
fills, then once more, so each store has several files. A snapshot of it is taken and the
files it references are copied over WebHDFS, with the snapshot's folder, into a local HBase
root. Then, per family, on those files, each in its own process:

* the project's reader (:class:`hbase_migrate.hfile.reader.HFileReader`, every cell
  decoded, its value's length summed), compiled (the CRC32C of the block checksums) and
  pure Python (``HBASE_MIGRATE_PURE_PYTHON=1``; on the first files up to ``--python-mb``,
  as it is slow);
* ``HFilePrettyPrinter -k`` over all the family's files in one JVM: ``-k`` (check the row
  order) has it read every cell through HBase's own ``HFileScanner`` and print nothing
  unless a row is out of order, the nearest to a pure read it offers (``-e``/``-p`` print
  every cell, ``-s`` builds statistics on top);
* a snapshot scan by HBase's ``TableSnapshotScanner`` (the ``ClientSideRegionScanner`` of
  each region, what ``TableSnapshotInputFormat``'s tasks run) of the family, every version,
  block cache off, from the local root: a small Java class compiled here with ``javac``.

Rates are per CPU second (user + system) of the whole process (``wait4``), so the load of a
shared machine's others stays out: the JVM's includes its start, JIT and GC threads, so
``HFilePrettyPrinter -m`` on one file (its metadata, no cell) is run too, and the Java
rates are also given with its CPU seconds taken off (the JVM's start and HBase's classes). The
in-loop CPU seconds (``time.process_time`` around the read loop; the scanning thread's CPU
time from ``ThreadMXBean`` for the snapshot scan) are printed too. MB are of the files on
disk (compressed for ``g``). Prints each and the ratios (project / Java, > 1 means faster),
the load average, and writes the JSON. Asserts nothing.

``--keep DIR`` keeps the local root (snapshot and files) in ``DIR``; ``--files DIR`` reads
such a kept root again without starting HBase. ``--baseline CHECKOUT`` also runs the reader
of another checkout of the project (its compiled modules built), e.g. main's code, for a
before and after in one sitting; ``--rounds N`` runs every reader N times, one after the
other in turn, and reports each one's median CPU seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.storage.hdfs_files import HdfsRoot
from hbase_migrate.rpc.admin import NativeAdmin
from hbase_migrate.snapshot.manifest import parse_manifest
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType
from realstack.hbase import DEFAULT_VERSION, RealHBase, RealHBaseOptions
from realstack.maven import java_command, module_classpath
from stackprocs.admin_client import call_admin

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TABLE = "bench_hfile"
SNAPSHOT = "bench_hfile_snap"
FAMILIES = {"f": ("FAST_DIFF", "NONE"), "g": ("NONE", "GZ")}
QUALIFIERS = (b"q0", b"q1", b"q2", b"q3")
BATCH = 4_000  # cells per write
PRINTER = "org.apache.hadoop.hbase.io.hfile.HFilePrettyPrinter"

OURS = """
import json, sys, time
from hbase_migrate.hfile.reader import HFileReader
cpu, cells, values = time.process_time(), 0, 0
for path in sys.argv[1:]:
    with HFileReader(path) as reader:
        for stored in reader.cells():
            cells += 1
            values += len(stored.cell.value)
print(json.dumps({"cells": cells, "value_bytes": values, "loop_cpu": time.process_time() - cpu}))
"""

SCAN_JAVA = """
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.TableSnapshotScanner;
import org.apache.hadoop.hbase.util.Bytes;

/** Counts the cells of one family of a snapshot: ROOT RESTORE SNAPSHOT FAMILY. */
public class SnapshotScan {
  public static void main(String[] args) throws Exception {
    Configuration conf = HBaseConfiguration.create();
    conf.set("fs.defaultFS", "file:///");
    conf.set("hbase.rootdir", args[0]);
    Scan scan = new Scan().readAllVersions().setCacheBlocks(false)
        .addFamily(Bytes.toBytes(args[3]));
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long cpu = threads.getCurrentThreadCpuTime();
    long cells = 0, values = 0;
    try (TableSnapshotScanner scanner = new TableSnapshotScanner(conf, new Path(args[0]),
        new Path(args[1]), args[2], scan)) {
      for (Result row = scanner.next(); row != null; row = scanner.next()) {
        for (Cell cell : row.rawCells()) {
          cells++;
          values += cell.getValueLength();
        }
      }
    }
    double loop = (threads.getCurrentThreadCpuTime() - cpu) / 1e9;
    System.out.println("{\\"cells\\": " + cells + ", \\"value_bytes\\": " + values
        + ", \\"loop_cpu\\": " + loop + "}");
  }
}
"""


def load(endpoints: ClusterEndpoints, cluster_json: Path, megabytes: int) -> int:
    """About ``megabytes`` of cells over both families; the cells written."""
    rng = random.Random(61)
    text = b"the quick brown fox jumps over the lazy dog; " * 8
    families = [FamilyDescriptor(name.encode(), data_block_encoding=encoding,
                                 compression=codec)
                for name, (encoding, codec) in FAMILIES.items()]
    target = megabytes * 1_000_000
    written = cells = row = 0
    with Thrift2Client(endpoints.thrift2 or "") as client:
        client.create_table(TableDescriptor(TABLE, tuple(families)))
        while written < target:
            batch = []
            for _ in range(BATCH // (len(QUALIFIERS) * len(families))):
                key = b"r%09d" % row
                row += 1
                for family in families:
                    for qualifier in QUALIFIERS:
                        size = rng.randint(120, 280)
                        value = text[:size // 2] + rng.randbytes(size - size // 2)
                        batch.append(Cell(key, family.name, qualifier, 1_700_000_000_000,
                                          CellType.PUT, value))
                        written += len(key) + len(value) + 20
            client.put_cells(TABLE, batch)
            cells += len(batch)
        call_admin(cluster_json, "flush", {"table": TABLE})
    return cells


def copy_snapshot(endpoints: ClusterEndpoints, local_root: Path) -> dict[str, list[Path]]:
    """The snapshot's folder and every file it references, from HDFS into ``local_root`` at
    the same paths; the copied files per family (sorted)."""
    root = HdfsRoot(endpoints.webhdfs or "", endpoints.hbase_root or "", "source")

    def copy(relpath: str) -> Path:
        out = local_root / relpath
        out.parent.mkdir(parents=True, exist_ok=True)
        with root.read(relpath) as chunks, out.open("wb") as f:
            for chunk in chunks:
                f.write(chunk)
        return out

    folder = f".hbase-snapshot/{SNAPSHOT}"
    for name in root.listing(folder):
        copy(f"{folder}/{name}")
    manifest = local_root / folder / "data.manifest"
    files: dict[str, list[Path]] = {name: [] for name in FAMILIES}
    for stored in parse_manifest(manifest.read_bytes(), str(manifest)):
        live, archived = stored.source_paths()
        files[stored.family].append(copy(live if root.status(live) is not None else archived))
    return {family: sorted(paths) for family, paths in files.items()}


def kept_files(local_root: Path) -> dict[str, list[Path]]:
    """The files per family of a root kept by ``--keep`` (sorted)."""
    manifest = local_root / f".hbase-snapshot/{SNAPSHOT}/data.manifest"
    files: dict[str, list[Path]] = {name: [] for name in FAMILIES}
    for stored in parse_manifest(manifest.read_bytes(), str(manifest)):
        live, archived = stored.source_paths()
        files[stored.family].append(local_root / (live if (local_root / live).exists()
                                                  else archived))
    return {family: sorted(paths) for family, paths in files.items()}


def make_files(folder: Path, megabytes: int, results: dict[str, Any]) -> Path:
    """Real HBase writes the table; its snapshot is copied into ``folder / "root"``."""
    options = RealHBaseOptions(region_servers=1, heap="1g")
    with RealHBase(folder / "hbase", options) as hbase:
        endpoints = ClusterEndpoints.from_json(hbase.described)
        began = time.monotonic()
        results["cells_written"] = load(endpoints, hbase.cluster_json, megabytes)
        print(f"table {TABLE}: {results['cells_written']} cells written and flushed in "
              f"{time.monotonic() - began:.0f} s", flush=True)
        NativeAdmin(endpoints.zookeeper or "", endpoints.znode_parent or "").snapshot(
            TABLE, SNAPSHOT)
        local = folder / "root"
        copy_snapshot(endpoints, local)
    return local


def run(command: list[str], env: dict[str, str] | None = None, cwd: Path = REPO
        ) -> dict[str, Any]:
    """Run ``command`` in ``cwd``: its wall and CPU seconds (user + system, ``wait4``) and the
    JSON line it printed last, if any."""
    began = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(command, stdout=out, stderr=err, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - began
        out.seek(0)
        err.seek(0)
        said, problems = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{command[0]} {command[-1]} failed ({code}): {problems[-3000:]}")
    lines = [line for line in said.splitlines() if line.startswith("{")]
    found = json.loads(lines[-1]) if lines else {}
    return found | {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                    "warnings": problems.count("WARNING, previous row")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=300, help="megabytes of cells written")
    parser.add_argument("--python-mb", type=int, default=40,
                        help="megabytes of files per family the pure-Python reader reads")
    parser.add_argument("--quick", action="store_true", help="a smoke run (30 MB)")
    parser.add_argument("--keep", type=Path, help="keep the snapshot's local root here")
    parser.add_argument("--files", type=Path, help="read a root kept by --keep (no HBase)")
    parser.add_argument("--baseline", type=Path,
                        help="another checkout of the project whose reader runs too")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each reader, in turn")
    parser.add_argument("--json", type=Path, default=HERE / "out" / "hfile_read.json")
    args = parser.parse_args()
    megabytes = 30 if args.quick else args.mb
    classpath = module_classpath("mapreduce", {"hbase.version": DEFAULT_VERSION})
    results: dict[str, Any] = {"hbase_version": DEFAULT_VERSION, "mb": megabytes,
                               "rounds": args.rounds, "families": {}}
    with tempfile.TemporaryDirectory(prefix="bench-hfile-") as tmp:
        folder = Path(tmp)
        classes = folder / "classes"
        classes.mkdir()
        (folder / "SnapshotScan.java").write_text(SCAN_JAVA, encoding="utf-8")
        subprocess.run(["javac", "-nowarn", "-d", str(classes), "-cp", os.pathsep.join(classpath),
                        str(folder / "SnapshotScan.java")], check=True)
        local = args.files.resolve() if args.files else make_files(folder, megabytes, results)
        if args.keep and not args.files:
            shutil.copytree(local, args.keep)
        files = kept_files(local)
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        pure = env | {"HBASE_MIGRATE_PURE_PYTHON": "1"}
        java_cp = [str(classes), *classpath]
        props = {"hbase.rootdir": local.as_uri(), "fs.defaultFS": "file:///"}
        for family, paths in files.items():
            size = sum(p.stat().st_size for p in paths)
            subset: list[Path] = []
            subset_size = 0
            for p in paths:
                if subset and subset_size >= args.python_mb * 1_000_000:
                    break
                subset.append(p)
                subset_size += p.stat().st_size
            names = [str(p) for p in paths]
            commands: dict[str, tuple[list[str], dict[str, str] | None, int]] = {
                "project (compiled)": ([sys.executable, "-c", OURS, *names], env, size)}
            if args.baseline:  # run in its folder: ``-c`` puts the working folder first
                commands["baseline (compiled)"] = (
                    [sys.executable, "-c", OURS, *names],
                    {**os.environ, "PYTHONPATH": str(args.baseline.resolve())}, size)
            commands |= {
                "project (pure Python)": ([sys.executable, "-c", OURS, *map(str, subset)], pure,
                                          subset_size),
                "HFilePrettyPrinter -k": (java_command(
                    classpath, PRINTER, ["-k", *(p.as_uri() for p in paths)], heap="1g",
                    system_properties=props), None, size),
                "HFilePrettyPrinter -m (1 file)": (java_command(
                    classpath, PRINTER, ["-m", paths[0].as_uri()], heap="1g",
                    system_properties=props), None, 0),
                "TableSnapshotScanner": (java_command(
                    java_cp, "SnapshotScan", [local.as_uri(), (folder / f"restore-{family}")
                                              .as_uri(), SNAPSHOT, family], heap="1g",
                    system_properties=props), None, size)}
            every: dict[str, list[dict[str, Any]]] = {name: [] for name in commands}
            for _ in range(args.rounds):
                for name, (command, environment, _read) in commands.items():
                    if name == "TableSnapshotScanner":  # restores into a fresh folder
                        shutil.rmtree(folder / f"restore-{family}", ignore_errors=True)
                    where = args.baseline.resolve() if name.startswith("baseline") else REPO
                    every[name].append(run(command, environment, where))
            runs = {name: (median_run(found), commands[name][2]) for name, found in every.items()}
            start = runs["HFilePrettyPrinter -m (1 file)"][0]["cpu"]
            encoding, codec = FAMILIES[family]
            results["families"][family] = {
                "encoding": encoding, "compression": codec, "files": len(paths),
                "bytes": size, "runs": {name: found | {"bytes": read, "mb_per_cpu_s":
                                                       read / found["cpu"] / 1e6,
                                                       "mb_per_cpu_s_less_start": read / max(
                                                           found["cpu"] - start, 1e-9) / 1e6
                                                       if "HFile" in name or "Table" in name
                                                       else None}
                                        for name, (found, read) in runs.items()}}
    results["load_average"] = os.getloadavg()
    report(results)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(f"\nJSON: {args.json}")


def median_run(found: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median CPU seconds, with every run's CPU seconds beside it."""
    ordered = sorted(found, key=lambda r: r["cpu"])
    middle = ordered[(len(ordered) - 1) // 2]
    return middle | {"cpu_each": [r["cpu"] for r in found],
                     "cpu_median": statistics.median(r["cpu"] for r in found)}


def report(results: dict[str, Any]) -> None:
    for family, found in results["families"].items():
        print(f"\nfamily {family}: {found['encoding']}, {found['compression']}, "
              f"{found['files']} files, {found['bytes'] / 1e6:.1f} MB")
        print(f"{'':32}{'MB':>8}{'cells':>10}{'CPU s':>8}{'loop s':>8}{'wall s':>8}"
              f"{'MB/CPU s':>10}{'cells/CPU s':>13}")
        for name, run_ in found["runs"].items():
            cells = run_.get("cells")
            print(f"{name:32}{run_['bytes'] / 1e6:8.1f}{cells if cells is not None else '-':>10}"
                  f"{run_['cpu']:8.1f}{run_.get('loop_cpu', float('nan')):8.1f}"
                  f"{run_['wall']:8.1f}{run_['mb_per_cpu_s']:10.1f}"
                  + (f"{cells / run_['cpu']:13.0f}" if cells else f"{'-':>13}"))
        runs = found["runs"]
        ours = runs["project (compiled)"]["mb_per_cpu_s"]
        pure = runs["project (pure Python)"]["mb_per_cpu_s"]
        if "baseline (compiled)" in runs:
            print(f"ratio project / baseline, compiled: "
                  f"{ours / runs['baseline (compiled)']['mb_per_cpu_s']:.2f}")
        for java in ("HFilePrettyPrinter -k", "TableSnapshotScanner"):
            theirs, warm = runs[java]["mb_per_cpu_s"], runs[java]["mb_per_cpu_s_less_start"]
            print(f"ratio project / {java}: compiled {ours / theirs:.2f}, "
                  f"pure Python {pure / theirs:.2f}; with the JVM's start (the -m run's CPU) "
                  f"taken off the Java side: compiled {ours / warm:.2f}, pure Python "
                  f"{pure / warm:.2f}")
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in results['load_average'])}")


if __name__ == "__main__":
    main()
