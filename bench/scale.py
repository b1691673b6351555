"""The cost curve: the project's copy, replay and validation on each engine at growing sizes,
beside HBase's tools on the same data, in one sitting.

Usage: ``python bench/scale.py [--cells 2000000,20000000]
[--engines in-process,local[2],standalone,yarn] [--steps copy,replay,validate]
[--copies scan,hbase] [--profile FOLDER] [--unflushed] [--before CHECKOUT]
[--client native|thrift] [--heap 1g] [--json bench/out/scale.json]``

Starts two real Apache HBase clusters (``realstack``, as ``bench/peers.py``) and, for the
``standalone`` engine, a Spark standalone master with two workers of one core each (from
pyspark's own jars, ``tests/spark/standalone.py``; their executors get the project as the
archive the driver ships) and, for the ``yarn`` engine, a YARN of ``realstack`` (a
ResourceManager with a staging HDFS and two NodeManagers; executors as Spark's YARN client
defaults them, two of one core, ``HADOOP_CONF_DIR`` set for the steps): its start-up and the
shipping set up once before the runs (the executors' archive built and Spark's jars staged on
its HDFS, in a cache of the sitting's own, by a child process) are timed and printed apart, so
that each step's row holds only its own application. For each size it loads the source once
(``peers.Peers.load``), runs each step as HBase's tool and then as the project's on each
engine (``[spark] master``), once, step after step: WALPlayer and ``replay --start 0``,
CopyTable and ``snapshot`` (the scan copy), snapshot + ExportSnapshot + clone and ``snapshot``
with ``[snapshot] method = "hbase"`` (the file copy), HashTable + SyncTable ``--dryrun`` and
``validate`` (each checking its own side's scan copy); each copy compared with the source cell
for cell. Every run starts with the target's memstores flushed (the cells of the runs before
would make it wait on HBase's "Blocking updates" limit) and writes a fresh table. Printed per
run: seconds, seconds per million cells, the peak RSS of the command's process (``wait4``),
each cluster JVM's CPU seconds and GC pauses meanwhile (``bench/jvm_share.py``) and, on the
standalone cluster, the largest executor JVM and Python worker seen (sampled every 0.5 s from
``/proc``, among this process's descendants). Asserts nothing; at 20,000,000 cells a sitting
takes hours. The source keeps its archived WALs for a day (HBase's cleaner would delete them
10 minutes after the roll, mid-sitting at 2 million cells, and the replay would find gaps).
With ``--before`` each of the project's steps also runs from another checkout (an earlier
commit) just before this one's, on the same engine, for a before and after in one sitting. The
project reaches both clusters over HBase's RPC (``--client native``) unless told.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

from bench.jvm_share import JvmMeter, Share
from bench.peers import Peers, Run
from realstack.hbase import DEFAULT_VERSION, RealHBase, RealHBaseOptions
from realstack.maven import module_classpath
from tests.spark.standalone import start_cluster

STEPS = ("replay", "copy", "validate")  # the copies stay until both validations ran
ARCHIVE_TTL_MS = 24 * 3600 * 1000  # archived WALs outlive the sitting
EXECUTOR_MARKS = {"executor JVM": "CoarseGrainedExecutorBackend",
                  "Python worker": "pyspark.daemon"}


def _status(pid: str, key: str) -> int:
    """A number of ``/proc/PID/status`` (``VmRSS`` in kB, ``PPid``); 0 when gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    line = next((x for x in status.splitlines() if x.startswith(f"{key}:")), f"{key}: 0")
    return int(line.split()[1])


def _ours(pid: str) -> bool:
    """Whether ``pid`` descends from this process (not another user's Spark)."""
    me, current = os.getpid(), int(pid)
    while current > 1:
        if current == me:
            return True
        current = _status(str(current), "PPid")
    return False


@contextmanager
def executor_peaks() -> Iterator[dict[str, float]]:
    """The largest RSS (MB) of any Spark executor JVM and Python worker while inside."""
    peaks = dict.fromkeys(EXECUTOR_MARKS, 0.0)
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.5):
            for proc in Path("/proc").glob("[0-9]*"):
                try:
                    command = (proc / "cmdline").read_bytes().decode(errors="replace")
                except OSError:
                    continue
                for what, mark in EXECUTOR_MARKS.items():
                    if mark in command and _ours(proc.name):
                        peaks[what] = max(peaks[what], _status(proc.name, "VmRSS") / 1024)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield peaks
    finally:
        done.set()
        sampler.join()


def load() -> str:
    """The machine's load averages (1, 5 and 15 minutes), as ``uptime`` gives them."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def row(size: int, step: str, engine: str, run: Run, peaks: dict[str, float],
        shares: dict[str, Share]) -> dict[str, object]:
    found = {"cells": size, "step": step, "engine": engine, **asdict(run), "load": load(),
             "seconds_per_million_cells": run.seconds / max(1, run.cells) * 1e6, **peaks,
             **{f"{side}_share": asdict(share) for side, share in shares.items()}}
    print(f"{size:>10,} {step:<9}{engine:<32}{run.seconds:>9.1f} s"
          f"{found['seconds_per_million_cells']:>9.1f} s/M{run.peak_rss_mb:>8.0f} MB"
          + "".join(f"  {k} {v:.0f} MB" for k, v in peaks.items() if v)
          + f"  {'equal' if run.equal else 'DIFFERS' if run.equal is False else '-'}"
          + "".join(f"  {side} {s.cpu_s:.1f} CPU s" + ("" if side == "command" else
                    f" (JVM; GC {s.gc_pause_s:.1f} s, {s.full_gcs} full; {s.flushes} flushes,"
                    f" {s.blocked} blocked, {s.slow_appends} slow WAL appends)")
                    for side, s in shares.items()),
          flush=True)
    return found


def measured(peers: Peers, fn: Callable[[], Run], flush: bool = True
             ) -> tuple[Run, dict[str, float], dict[str, Share]]:
    """``fn`` run with the target's memstores flushed first unless told (the cells of the
    runs before would make it wait on HBase's "Blocking updates" limit): the run, the
    executors' peaks, each cluster JVM's share and the command's CPU."""
    if flush:
        peers.flush_target()
    peers.shares = {}
    with executor_peaks() as peaks:
        run = fn()
    return run, dict(peaks), dict(peers.shares)


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", default="2000000,20000000")
    parser.add_argument("--engines", default="in-process,local[2],standalone")
    parser.add_argument("--hbase-version", default=DEFAULT_VERSION)
    parser.add_argument("--heap", default="1g",
                        help="each cluster's JVM heap: at 20,000,000 cells a 1g target spends "
                        "its time in full collections (its memstores and block cache fill it)")
    parser.add_argument("--steps", default=",".join(STEPS),
                        help="the steps to run, comma-separated (validate needs copy)")
    parser.add_argument("--before", type=Path, help="another checkout of the project: its "
                        "steps run too, each just before this one's")
    parser.add_argument("--client", choices=("native", "thrift"), default="native",
                        help="how the project's steps reach both clusters")
    parser.add_argument("--copies", default="scan,hbase",
                        help="the copies, comma-separated: scan (the scan copy, beside "
                        "CopyTable), hbase ([snapshot] method = \"hbase\", beside "
                        "snapshot + ExportSnapshot + clone)")
    parser.add_argument("--profile", type=Path, help="a folder: each size's in-process scan "
                        "copy and validation run twice more under py-spy (every thread "
                        "wherever it is, then only the one holding the GIL), their raw "
                        "stacks written there")
    parser.add_argument("--unflushed", action="store_true", help="each engine's scan copy "
                        "also runs first with the target's memstores as HBase's tools left "
                        "them, not flushed (as the sittings before this option ran)")
    parser.add_argument("--json", type=Path, default=Path("bench/out/scale.json"))
    return parser.parse_args()


@dataclass
class Sitting:
    """The runs of one sitting: HBase's tools and the project's steps on each engine."""

    peers: Peers
    args: argparse.Namespace
    masters: dict[str, str]
    rows: list[dict[str, object]] = field(default_factory=list)
    copies: dict[str, dict[Path, Path]] = field(default_factory=dict)  # each engine's scan copy

    def tools(self, step: str) -> list[Callable[[], Run]]:
        if step != "copy":
            return [{"replay": self.peers.replay_peer, "validate": self.peers.validate_peer}[step]]
        return [fn for method, fn in (("scan", self.peers.copy_peer),
                                      ("hbase", self.peers.snapshot_peer))
                if method in self.args.copies.split(",")]

    def ours(self, step: str) -> list[tuple[str, Callable[[], Run]]]:
        if step != "copy":
            return [("", {"replay": self.peers.replay_project,
                          "validate": self.peers.validate_project}[step])]
        return [(label, fn) for method, label, fn in (
            ("scan", "", self.peers.copy_project),
            ("hbase", ", method hbase", self.peers.snapshot_project))
            if method in self.args.copies.split(",")]

    def keep(self, found: dict[str, object]) -> None:
        self.rows.append(found)
        print(f"  (load {load()})", flush=True)
        write(self.args.json, self.args.hbase_version, self.rows)  # a long sitting may stop

    def step(self, size: int, step: str) -> None:
        """HBase's tools (SyncTable checks CopyTable's copy), then the project on each
        engine (its validation checks its own engine's scan copy)."""
        peers = self.peers
        for tool in self.tools(step):
            run, _, shares = measured(peers, tool)
            self.keep(row(size, step, run.tool, run, {}, shares))
        for engine, master in self.masters.items():
            peers.master = master
            if step == "validate":
                peers.copied = dict(self.copies[engine])
            if step == "copy" and self.args.unflushed and "scan" in self.args.copies.split(","):
                run, peaks, shares = measured(peers, peers.copy_project, flush=False)
                self.keep(row(size, step, f"{engine} (target unflushed)", run, peaks, shares))
            runs = [(f"{engine}{label}", fn) for label, fn in self.ours(step)]
            if self.args.before is not None:  # first: a fuller target slows the second
                runs[:0] = [(f"{engine}{label} (before)",
                             partial(peers.from_checkout, self.args.before, fn))
                            for label, fn in self.ours(step)]
            for label, fn in runs:
                run, peaks, shares = measured(peers, fn)
                self.keep(row(size, step, label, run, peaks, shares))
            if step == "copy" and "scan" in self.args.copies.split(","):
                self.copies[engine] = dict(peers.copied)
            if engine == "in-process" and self.args.profile and step in PROFILED:
                for kind in PROFILES:
                    self.keep(profiled(peers, self.args.profile, size, step, kind))


def main() -> None:
    args = arguments()
    if args.profile:
        py_spy()  # before hours of loading
    sizes = [int(c) for c in args.cells.split(",")]
    steps = [s for s in STEPS if s in args.steps.split(",")]
    classpath = module_classpath("mapreduce", {"hbase.version": args.hbase_version})
    with tempfile.TemporaryDirectory(prefix="scale-") as tmp, ExitStack() as stack:
        folder = Path(tmp)
        clusters, meters = {}, {}
        for side in ("source", "target"):
            hbase = RealHBase(folder / side, RealHBaseOptions(
                hbase_version=args.hbase_version, region_servers=1, heap=args.heap, name=side,
                archive_ttl_ms=ARCHIVE_TTL_MS))
            hbase.start()
            stack.callback(hbase.stop)
            clusters[side] = hbase.cluster_json
            assert hbase.pid is not None
            meters[side] = JvmMeter(hbase.pid, folder / side / "gc.log", hbase.log_path)
        masters = {e: e for e in args.engines.split(",")}
        if "standalone" in masters:
            (folder / "spark").mkdir()
            spark = start_cluster(folder / "spark", workers=2, cores=1)
            masters["standalone"] = next(spark)
            stack.callback(spark.close)
        if "yarn" in masters:
            stack.enter_context(yarn_for(folder / "yarn"))
        peers = Peers(clusters["source"], clusters["target"], classpath, folder)
        peers.use_client(args.client)
        peers.archive_ttl = "1d"  # as the stacks keep them (ARCHIVE_TTL_MS)
        peers.meters = meters
        sitting = Sitting(peers, args, masters)
        for size in sizes:
            peers.load(size)
            peers.drop_made()
            sitting.copies.clear()
            for step in steps:
                sitting.step(size, step)
                if step != "copy":  # the copies stay for the validations
                    peers.drop_made()
            peers.drop_made()
    write(args.json, args.hbase_version, sitting.rows)
    print(f"written {args.json}")


# the executors' archive and Spark's jars on the cluster, as the first step on YARN makes them
SHIP = """
import time
from hbase_migrate.spark.archive import executor_archive
from hbase_migrate.spark.yarn import staged_jars
began = time.monotonic()
executor_archive()
built = time.monotonic()
staged_jars({})
print(f"{built - began:.1f} {time.monotonic() - built:.1f}")
"""


@contextmanager
def yarn_for(folder: Path) -> Iterator[None]:
    """realstack's YARN in ``folder`` for the ``yarn`` engine's steps (``HADOOP_CONF_DIR``
    and a cache of the sitting's own in this process's environment, which they inherit):
    its start-up and the shipping set up once, timed and printed apart."""
    from hbase_migrate.spark.archive import CACHE_ENV
    from realstack.yarn import RealYarn, RealYarnOptions

    yarn = RealYarn(folder, RealYarnOptions(node_managers=2, memory_mb=3072))
    yarn.start()
    try:
        print(f"yarn: started in {yarn.described['started_in_ms'] / 1000:.1f} s "
              f"(load {load()})", flush=True)
        os.environ["HADOOP_CONF_DIR"] = str(yarn.conf_dir)
        os.environ[CACHE_ENV] = str(folder / "cache")
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        shipped = subprocess.run([sys.executable, "-c", SHIP], capture_output=True,
                                 text=True, check=True)
        build, stage = shipped.stdout.split()[-2:]
        print(f"yarn: the executors' archive built in {build} s, Spark's jars staged on its "
              f"HDFS in {stage} s (once; the steps below reuse both) (load {load()})",
              flush=True)
        yield
    finally:
        yarn.stop()


def py_spy() -> str:
    """py-spy's command (in the ``bench`` dependency group), or SystemExit saying so."""
    found = shutil.which("py-spy") or Path(sys.executable).with_name("py-spy")
    if not Path(found).exists():
        raise SystemExit("--profile needs py-spy, of the bench dependency group: run "
                         "`make bench` once (or `uv sync --inexact --group bench`), or leave "
                         "--profile out")
    return str(found)


PROFILES = {"wall": "--idle", "gil": "--gil"}  # every thread wherever it is; CPU only
PROFILED: dict[str, Callable[[Peers], Callable[[], Run]]] = {
    "copy": lambda peers: peers.copy_project, "validate": lambda peers: peers.validate_project}


def profiled(peers: Peers, folder: Path, size: int, step: str,
             kind: str) -> dict[str, object]:
    """One more in-process scan copy or validation under py-spy (50 samples a second of
    every thread: ``wall``, idle ones too; ``gil``, only the one holding the GIL): its raw
    stacks in ``folder``; its row says so (py-spy slows it)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = folder.resolve() / f"{step}-{size}-{kind}.txt"
    peers.wrap = [py_spy(), "record", "--threads", PROFILES[kind], "--rate", "50",
                  "--format", "raw", "--output", str(out), "--"]
    try:
        run, peaks, shares = measured(peers, PROFILED[step](peers))
    finally:
        peers.wrap = []
    print(f"  (profile in {out})", flush=True)
    return row(size, step, f"in-process (py-spy, {kind})", run, peaks, shares)


def write(path: Path, version: str, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hbase_version": version, "runs": rows}, indent=2),
                    encoding="utf-8")

if __name__ == "__main__":
    main()
