"""hbase-migrate beside HBase's own MapReduce tools: same data, same real HBase, one sitting.

Usage: ``python bench/peers.py [--cells 200000] [--quick] [--repeat 3] [--warmup 1]
[--source C.json --target C.json] [--client thrift|native]
[--pairs replay,replay-bulk,copy,validate,validate-snapshot,snapshot] [--row-cells 1]
[--before CHECKOUT] [--json bench/out/peers.json]``

Starts two real Apache HBase clusters from ``realstack``, a source and a target (or uses the
running ones ``--source`` and ``--target`` name), writes ``--cells`` cells into a source table
of four regions and two families (values of 60-140 bytes, one cell in 25 a column delete of
the version before it; ``--row-cells`` cells a row, one by default), flushes and rolls so
that every WAL file is archived and stays put, and runs the pairs, alternated, ``--repeat``
times each (the median is kept) after ``--warmup`` untimed rounds:

* replay: ``hbase-migrate replay --start 0`` (every WAL, after ``prepare``) against
  WALPlayer over the same ``WALs/`` and ``oldWALs/`` folders with no time window, so it sees
  every file;
* replay-bulk: the same replay with ``[replay] bulk = "always"`` (the run's edits written as
  HFiles per target region and bulk-loaded over HBase's RPC; it needs ``--client native``,
  else the replay says why it wrote through the target's write path) against WALPlayer with
  ``-Dwal.bulk.output`` (HFiles in a local folder, partitioned by the source table's regions,
  which the target's copy of the schema shares) followed by ``BulkLoadHFilesTool`` (2.x's
  ``LoadIncrementalHFiles``) into the target table: the two jobs' seconds added;
* copy: ``hbase-migrate snapshot`` (the scan copy at T0) against CopyTable with every version;
* validation: ``hbase-migrate validate`` of that copy against HashTable of the source with
  every version (hashes in a local folder) then SyncTable ``--dryrun`` of the CopyTable copy;
* validation from a snapshot: ``hbase-migrate validate --from snapshot`` (the source side
  read from an HBase snapshot's files over WebHDFS) against the same HashTable + SyncTable;
* snapshot: ``hbase-migrate snapshot`` with ``method = "hbase"`` (an HBase snapshot of the
  source, its files exported over WebHDFS, cloned on the target) against the same by hand
  with HBase's tool: the snapshot taken and cloned over the native admin, its files copied
  by ExportSnapshot into the target's HBase root (one mapper, over ``webhdfs://``).

HBase's tools run in local mode (Hadoop's local job runner) from the class path of
``realstack/mapreduce`` (HBase 2.6.1 from Maven Central), each in its own JVM; the project's
commands each in their own process, with the in-process range engine, reaching both
clusters through their Thrift2 gateways or, with ``--client native``, over HBase's own RPC.
Every run writes a fresh table of the source's schema on the target, and each copy is
compared with the source cell for cell; each round starts by dropping the tables of the
rounds before (they would fill the target's memstores, and whichever run then met HBase's
"Blocking updates" limit waited for flushes: seconds, at random). Printed per run: wall
seconds, cells/s, the peak RSS of the tool's process (``wait4``) and the read requests the
source table's regions served meanwhile (their region servers' ``readRequestsCount``, by
``GetRegionLoad`` before and after); per pair the ratio of
the medians (project / peer, > 1 means faster) and of the peak RSS; all of it also as JSON.
With ``--before`` the project's steps also run from another checkout (an earlier commit),
alternated with this one's, for a before and after in one sitting. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from hbase_migrate.cluster.client import Client
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import load_cluster_json
from hbase_migrate.hbase.connect import connect
from hbase_migrate.rpc.admin import NativeAdmin
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.validate.compare import compare_tables
from hbase_migrate.wal.model import Cell, CellType
from realstack.hbase import DEFAULT_VERSION, RealHBase, RealHBaseOptions
from realstack.maven import java_command, module_classpath
from stackprocs.admin_client import call_admin

try:
    from bench.jvm_share import JvmMeter, Share
except ImportError:  # run as ``python bench/peers.py``: its own folder is on the path
    from jvm_share import JvmMeter, Share  # type: ignore[no-redef]

# the source's hbase.master.logcleaner.ttl: a sitting on a loaded machine outlasts HBase's
# 10 minutes, after which the cleaner deletes the archived WALs every replay round reads
ARCHIVE_TTL_MS = 24 * 3600 * 1000
SOURCE = "peers_src"
FAMILIES = (b"d", b"e")
SPLITS = (b"r2", b"r5", b"r7")
LOAD_BATCH = 20_000  # cells per write of the load
MR = "org.apache.hadoop.hbase.mapreduce."
BULK_LOAD_TOOL = "org.apache.hadoop.hbase.tool.BulkLoadHFilesTool"
EXPORT_SNAPSHOT = "org.apache.hadoop.hbase.snapshot.ExportSnapshot"


@dataclass
class Run:
    """One timed run of one tool."""

    tool: str
    seconds: float
    cells: int
    peak_rss_mb: float
    equal: bool | None = None
    note: str = ""
    source_reads: int | None = None  # read requests the source's regions served meanwhile

    @property
    def rate(self) -> float:
        return self.cells / self.seconds if self.seconds else 0.0


@dataclass
class Pair:
    name: str
    project: list[Run] = field(default_factory=list)
    peer: list[Run] = field(default_factory=list)
    before: list[Run] = field(default_factory=list)  # the project from ``--before``

    def summary(self) -> dict[str, Any]:
        def median(runs: list[Run], attr: str) -> float:
            return statistics.median(getattr(r, attr) for r in runs) if runs else 0.0

        ours, theirs = median(self.project, "rate"), median(self.peer, "rate")
        rss_ours, rss_theirs = (median(self.project, "peak_rss_mb"),
                                median(self.peer, "peak_rss_mb"))
        return {"pair": self.name,
                "project": [asdict(r) | {"cells_per_s": r.rate} for r in self.project],
                "peer": [asdict(r) | {"cells_per_s": r.rate} for r in self.peer],
                "project_cells_per_s": ours, "peer_cells_per_s": theirs,
                "speed_ratio": ours / theirs if theirs else None,
                "project_peak_rss_mb": rss_ours, "peer_peak_rss_mb": rss_theirs,
                "memory_ratio": rss_ours / rss_theirs if rss_theirs else None,
                "project_source_reads": [r.source_reads for r in self.project],
                "peer_source_reads": [r.source_reads for r in self.peer],
                "before": [asdict(r) | {"cells_per_s": r.rate} for r in self.before],
                "before_cells_per_s": median(self.before, "rate"),
                "before_speed_ratio": (median(self.before, "rate") / theirs
                                       if theirs and self.before else None),
                "all_equal": all(r.equal is not False
                                 for r in self.project + self.peer + self.before)}


# Run by timed() in a small process of its own: runs the command (argv[2:]) and writes its
# wall seconds, peak RSS in kB (wait4) and CPU seconds (its own and its children's) to the
# file argv[1]. A child forked straight from this bench, once it has built millions of
# cells, would start with the bench's pages counted in its peak (Linux keeps the forker's
# high-water mark across exec).
MEASURED = """
import os, subprocess, sys, time
began = time.perf_counter()
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
seconds = time.perf_counter() - began
with open(sys.argv[1], "w") as out:
    out.write(f"{seconds} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}")
sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)
"""


def timed(command: list[str], env: dict[str, str] | None = None,
          log: Path | None = None, cwd: Path | None = None,
          cpu: list[float] | None = None) -> tuple[float, float, int]:
    """Run ``command`` (in ``cwd``): (wall seconds, peak RSS in MB of its process, exit
    status), measured by a small process of its own (:data:`MEASURED`); its CPU seconds
    appended to ``cpu``."""
    out = log.open("ab") if log else subprocess.DEVNULL
    with tempfile.NamedTemporaryFile("r", suffix=".measured") as measured:
        try:
            status = subprocess.run([sys.executable, "-c", MEASURED, measured.name, *command],
                                    env=env, stdout=out, stderr=out, cwd=cwd,
                                    check=False).returncode
        finally:
            if log:
                out.close()  # type: ignore[union-attr]
        found = measured.read().split()
    if len(found) != 3:
        raise RuntimeError(f"{command[0]} could not be started (exit {status}, see {log})")
    if cpu is not None:
        cpu.append(float(found[2]))
    return float(found[0]), int(found[1]) / 1024, status


def iter_cells(count: int, seed: int = 5, row_cells: int = 1) -> Iterator[Cell]:
    """Puts over 10 row prefixes (all four regions), two families, a few qualifiers; every
    25th cell a DeleteColumn of the version just written, so deletes must arrive in order.
    ``row_cells`` > 1: that many cells a row, its columns taken in turn over both families
    (large rows, as a table of wide records writes them)."""
    rng = random.Random(seed)
    ts, made = 1_700_000_000_000, 0
    while made < count:
        row = b"r%d-%08d" % (rng.randrange(10), rng.randrange(10**8))
        for column in range(row_cells):
            if row_cells == 1:
                family, qualifier = rng.choice(FAMILIES), b"q%d" % rng.randrange(4)
            else:
                family = FAMILIES[column % len(FAMILIES)]
                qualifier = b"q%d" % (column // len(FAMILIES))
            ts += 1
            yield Cell(row, family, qualifier, ts, CellType.PUT,
                       rng.randbytes(rng.randint(60, 140)))
            made += 1
            if made % 25 == 0:
                yield Cell(row, family, qualifier, ts, CellType.DELETE_COLUMN, b"")
                made += 1
            if made >= count:
                break


def make_cells(count: int, seed: int = 5) -> list[Cell]:
    return list(iter_cells(count, seed))


def zk_address(cluster: dict[str, Any]) -> str:
    """HBase's cluster key: quorum:port:znode."""
    return f"{cluster['zookeeper']}:{cluster['znode_parent']}"


class Peers:
    def __init__(self, source_json: Path, target_json: Path, classpath: list[str],
                 folder: Path) -> None:
        self.source_json, self.target_json = source_json, target_json
        self.source = json.loads(source_json.read_text(encoding="utf-8"))
        self.target = json.loads(target_json.read_text(encoding="utf-8"))
        self.classpath = classpath
        self.folder = folder
        self.log = folder / "tools.log"
        self.client: Client = Thrift2Client(self.source["thrift2"])
        self.source_admin = NativeAdmin(self.source["zookeeper"], self.source["znode_parent"])
        self.target_client: Client = Thrift2Client(self.target["thrift2"])
        self.serial = 0
        self.reads_before = 0  # the source's read requests when the current run began
        self.made: list[str] = []  # the target's tables the runs wrote
        self.copied: dict[Path, Path] = {}  # the config of the last copy, by whose code
        self.visible = 0
        self.writers = 1
        self.client_kind = "thrift"  # how the project's steps reach both clusters
        self.master = "in-process"  # where the project's steps run their tasks ([spark] master)
        self.checkout = Path.cwd()  # whose code the project's steps run
        self.archive_ttl = "10m"  # the source's hbase.master.logcleaner.ttl (the replay's
        #                           coverage proof trusts files younger than that)
        self.meters: dict[str, JvmMeter] = {}  # each cluster's JVM, by side
        self.shares: dict[str, Share] = {}  # their CPU and GC during the timed commands
        self.wrap: list[str] = []  # a profiler the project's timed commands run under
        self.row_cells = 1  # cells a row of the load (iter_cells)

    # --- data ------------------------------------------------------------------------------

    def use_client(self, kind: str) -> None:
        """Reach both clusters over ``kind`` ("native" or "thrift"): the project's steps,
        and the bench's own load and comparisons (over HBase's RPC they are quicker at 20
        million cells)."""
        self.client_kind = kind
        if kind == "native":
            self.client = connect(replace(load_cluster_json(self.source_json), client="native"))
            self.target_client = connect(replace(load_cluster_json(self.target_json),
                                                 client="native"))

    def load(self, cells: int) -> None:
        if self.client.table_exists(SOURCE):
            self.client.disable_table(SOURCE)
            self.client.delete_table(SOURCE)
        desc = TableDescriptor(SOURCE, tuple(FamilyDescriptor(f)
                                             for f in FAMILIES))
        self.client.create_table(desc, SPLITS)
        batch: list[Cell] = []
        written = 0
        # streamed: 20 million cells would not fit in memory
        for cell in iter_cells(cells, row_cells=self.row_cells):
            batch.append(cell)
            if len(batch) == LOAD_BATCH:
                self.client.write_cells(SOURCE, batch)
                written += len(batch)
                batch = []
                if written % 2_000_000 < LOAD_BATCH:
                    print(f"  loading: {written:,} cells", flush=True)
        if batch:
            self.client.write_cells(SOURCE, batch)
            written += len(batch)
        # flushed, then rolled: every file but the new one is archived, and nothing moves
        # while the tools read (the source takes no more writes)
        call_admin(self.source_json, "flush", {})
        call_admin(self.source_json, "roll", {})
        time.sleep(5)
        self.visible = sum(len(piece) for piece in self.client.scan(SOURCE))
        print(f"source {SOURCE}: {written} cells written ({self.visible} visible), "
              f"flushed, WALs rolled", flush=True)

    def source_reads(self) -> int:
        """The read requests the source table's regions have served so far."""
        return self.source_admin.read_requests(SOURCE)

    def measured(self, step: Callable[[], Run]) -> Run:
        """``step`` run, with the read requests the source's regions served meanwhile (a
        copy's counted before its comparison with the source: :meth:`checked`)."""
        self.reads_before = self.source_reads()
        run = step()
        if run.source_reads is None:
            run.source_reads = self.source_reads() - self.reads_before
        return run

    def fresh(self, kind: str) -> str:
        self.serial += 1
        return f"peers_{kind}_{self.serial}"

    def flush_target(self) -> None:
        """Flush the target's memstores (the cells of the runs before), then let it settle:
        a run that finds them full waits on HBase's "Blocking updates" limit."""
        call_admin(self.target_json, "flush", {})
        time.sleep(3)

    def drop_made(self) -> None:
        """Drop the target tables the runs so far wrote, then let the target settle."""
        for table in self.made:
            if self.target_client.table_exists(table):
                self.target_client.disable_table(table)
                self.target_client.delete_table(table)
        self.made.clear()
        time.sleep(3)

    def same(self, table: str) -> tuple[bool, str]:
        c = compare_tables(self.client, self.target_client, SOURCE, table)
        return c.equal, "" if c.equal else (
            f"{c.only_in_source} only in source, {c.only_in_target} only in target, "
            f"{c.different_values} differ")

    def create_like_source(self, table: str) -> None:
        from hbase_migrate.snapshot.schema import copy_schema
        copy_schema(self.client, self.target_client, SOURCE, table)

    # --- the project -----------------------------------------------------------------------

    def config(self, target: str, more: str = "", replay: str = "") -> Path:
        """The project's config for a run into ``target``; ``replay``: more lines of its
        ``[replay]`` section, ``more``: more sections."""
        path = self.folder / f"{target}.toml"
        path.write_text(
            f'[migration]\nname = "{target}"\nledger = "sqlite:///{self.folder / target}.db"\n'
            f'[source]\ncluster_json = "{self.source_json}"\nclient = "{self.client_kind}"\n'
            f'[target]\ncluster_json = "{self.target_json}"\nclient = "{self.client_kind}"\n'
            f'[spark]\nmaster = "{self.master}"\n[replay]\nwriters = {self.writers}\n'
            f'archive_ttl = "{self.archive_ttl}"\n{replay}'
            f'[[tables]]\nsource = "{SOURCE}"\ntarget = "{target}"\n{more}', encoding="utf-8")
        return path

    def metered(self, command: list[str], env: dict[str, str] | None = None,
                cwd: Path | None = None) -> tuple[float, float, int]:
        """:func:`timed`, adding each cluster JVM's CPU and GC pauses meanwhile, and the
        command's own CPU, to :attr:`shares`."""
        marks = {side: meter.mark() for side, meter in self.meters.items()}
        cpu: list[float] = []
        result = timed(command, env=env, log=self.log, cwd=cwd, cpu=cpu)
        shares = {side: meter.since(marks[side]) for side, meter in self.meters.items()}
        shares["command"] = Share(cpu[0], 0.0, 0)  # the tool's own process (GC not seen)
        for side, share in shares.items():
            self.shares[side] = self.shares.get(side, Share(0, 0, 0)) + share
        return result

    def project(self, *args: str, timed_run: bool = True) -> tuple[float, float, int]:
        command = [sys.executable, "-m", "hbase_migrate", "-v", *args]
        env = os.environ | {"PYTHONPATH": str(self.checkout)}
        # run in the checkout: ``-m`` puts the working folder before PYTHONPATH
        if not timed_run:
            return timed(command, env=env, log=self.log, cwd=self.checkout)
        return self.metered([*self.wrap, *command], env=env, cwd=self.checkout)

    def prepared(self, kind: str, more: str = "", replay: str = "") -> tuple[str, Path]:
        target = self.fresh(kind)
        config = self.config(target, more, replay)
        _, _, status = self.project("prepare", "--config", str(config), timed_run=False)
        if status:
            raise RuntimeError(f"prepare of {target} failed (see {self.log})")
        return target, config

    # --- HBase's tools ---------------------------------------------------------------------

    def hbase_tool(self, tool: str, *args: str, on: dict[str, Any] | None = None
                   ) -> tuple[float, float, int]:
        """Run ``tool`` (a class of HBase's, under ``org.apache.hadoop.hbase.mapreduce``
        unless named in full) configured for cluster ``on`` (default: the target)."""
        cluster = on or self.target
        zk_host, zk_port = cluster["zookeeper"].rsplit(":", 1)
        conf = [f"-Dhbase.zookeeper.quorum={zk_host}",
                f"-Dhbase.zookeeper.property.clientPort={zk_port}",
                f"-Dzookeeper.znode.parent={cluster['znode_parent']}",
                "-Dmapreduce.framework.name=local",
                f"-Dhadoop.tmp.dir={self.folder / 'hadoop-tmp'}"]
        name = tool if "." in tool else MR + tool
        command = java_command(self.classpath, name, [*conf, *args], heap="1g")
        return self.metered(command)

    def webhdfs(self, path: str, cluster: dict[str, Any] | None = None) -> str:
        """A path of the source's (or ``cluster``'s) HDFS, as Hadoop's WebHDFS client names
        it."""
        on = cluster or self.source
        return f"webhdfs://{on['webhdfs'].removeprefix('http://')}{path}"

    # --- the pairs -------------------------------------------------------------------------

    def replay_project(self) -> Run:
        target, config = self.prepared("replay")
        seconds, rss, status = self.project("replay", "--config", str(config), "--start", "0")
        return self.checked("hbase-migrate replay", target, seconds, rss, status)

    def replay_peer(self) -> Run:
        target = self.fresh("walplayer")
        self.create_like_source(target)
        root = self.source["hbase_root"]
        dirs = f"{self.webhdfs(root + '/WALs')},{self.webhdfs(root + '/oldWALs')}"
        seconds, rss, status = self.hbase_tool("WALPlayer", dirs, SOURCE, target)
        return self.checked("WALPlayer", target, seconds, rss, status)

    def replay_bulk_project(self) -> Run:
        """The replay with ``bulk = "always"``; its note is the run's ``replay path`` line
        (bulk load or, saying why, the write path)."""
        target, config = self.prepared("bulkreplay", replay='bulk = "always"\n')
        logged = self.log.stat().st_size if self.log.exists() else 0
        seconds, rss, status = self.project("replay", "--config", str(config), "--start", "0")
        with self.log.open("rb") as text:
            text.seek(logged)
            said = [line for line in text.read().decode("utf-8", "replace").splitlines()
                    if "replay path:" in line]
        run = self.checked("hbase-migrate replay, bulk", target, seconds, rss, status)
        if said:
            run.note = (run.note + " " + said[-1][said[-1].index("replay path:"):]).strip()
        return run

    def replay_bulk_peer(self) -> Run:
        """WALPlayer's HFiles (``wal.bulk.output``) of the source table, then
        ``BulkLoadHFilesTool`` into a fresh target table. WALPlayer's bulk output takes one
        table and no mapping, and reads that table's descriptor and regions where it runs:
        it runs against the source, whose split points the target table was given."""
        target = self.fresh("walplayerbulk")
        self.create_like_source(target)
        root = self.source["hbase_root"]
        dirs = f"{self.webhdfs(root + '/WALs')},{self.webhdfs(root + '/oldWALs')}"
        output = (self.folder / f"{target}_hfiles").as_uri()
        s1, r1, st1 = self.hbase_tool("WALPlayer", f"-Dwal.bulk.output={output}", dirs,
                                      SOURCE, on=self.source)
        s2, r2, st2 = 0.0, 0.0, 0
        if st1 == 0:
            s2, r2, st2 = self.hbase_tool(BULK_LOAD_TOOL, output, target)
        run = self.checked("WALPlayer bulk + BulkLoadHFilesTool", target, s1 + s2,
                           max(r1, r2), st1 or st2)
        run.note = (f"{run.note} (WALPlayer {s1:.1f} s, load {s2:.1f} s)").strip()
        return run

    def copy_project(self) -> Run:
        target, config = self.prepared("copy")
        seconds, rss, status = self.project("snapshot", "--config", str(config))
        run = self.checked("hbase-migrate snapshot", target, seconds, rss, status)
        self.copied[self.checkout] = config  # validated by the same code
        return run

    def copy_peer(self) -> Run:
        target = self.fresh("copytable")
        self.create_like_source(target)
        seconds, rss, status = self.hbase_tool(
            "CopyTable", "--versions=2147483647", f"--new.name={target}",
            f"--peer.adr={zk_address(self.target)}", SOURCE, on=self.source)
        run = self.checked("CopyTable", target, seconds, rss, status)
        self.copytable = target
        return run

    def validate_project(self) -> Run:
        seconds, rss, status = self.project("validate", "--config",
                                            str(self.copied[self.checkout]))
        return Run("hbase-migrate validate", seconds, self.visible, rss, status == 0,
                   "" if status == 0 else f"exit {status}")

    def validate_snapshot_project(self) -> Run:
        seconds, rss, status = self.project("validate", "--config",
                                            str(self.copied[self.checkout]), "--from",
                                            "snapshot")
        return Run("hbase-migrate validate --from snapshot", seconds, self.visible, rss,
                   status == 0, "" if status == 0 else f"exit {status}")

    def validate_peer(self) -> Run:
        hashes = (self.folder / self.fresh("hashes")).as_uri()
        # every version, as the validation digests them (HashTable's default: the newest)
        s1, r1, st1 = self.hbase_tool("HashTable", "--versions=2147483647", SOURCE, hashes,
                                      on=self.source)
        s2, r2, st2 = self.hbase_tool(
            "SyncTable", "--dryrun=true", f"--sourcezkcluster={zk_address(self.source)}",
            f"--targetzkcluster={zk_address(self.target)}", hashes, SOURCE, self.copytable)
        ok = st1 == 0 and st2 == 0
        return Run("HashTable + SyncTable --dryrun", s1 + s2, self.visible, max(r1, r2), ok,
                   "" if ok else f"exits {st1}, {st2}")

    def snapshot_project(self) -> Run:
        target, config = self.prepared("hbasecopy", '[snapshot]\nmethod = "hbase"\n')
        seconds, rss, status = self.project("snapshot", "--config", str(config))
        return self.checked("hbase-migrate snapshot (hbase)", target, seconds, rss, status)

    def snapshot_peer(self) -> Run:
        """Snapshot, ExportSnapshot, clone: the admin calls' time counted with the tool's."""
        target = self.fresh("exportsnapshot")
        name = f"{target}_snap"
        source = NativeAdmin(self.source["zookeeper"], self.source["znode_parent"])
        dest = NativeAdmin(self.target["zookeeper"], self.target["znode_parent"])
        try:
            began = time.monotonic()
            source.snapshot(SOURCE, name)
            taken = time.monotonic() - began
            seconds, rss, status = self.hbase_tool(
                EXPORT_SNAPSHOT, "-snapshot", name,
                "-copy-from", self.webhdfs(self.source["hbase_root"]),
                "-copy-to", self.webhdfs(self.target["hbase_root"], self.target),
                "-mappers", "1")
            began = time.monotonic()
            if status == 0:
                dest.clone_snapshot(name, target)
            cloned = time.monotonic() - began
            source.delete_snapshot(name)  # the bench's own snapshot (the target keeps its copy)
        finally:
            source.close()
            dest.close()
        return self.checked("snapshot + ExportSnapshot + clone", target,
                            taken + seconds + cloned, rss, status)

    def from_checkout(self, checkout: Path, step: Callable[[], Run]) -> Run:
        """``step`` (one of the project's) run with the code of ``checkout``."""
        self.checkout = checkout.resolve()
        try:
            run = step()
        finally:
            self.checkout = Path.cwd()
        run.tool += " (before)"
        return run

    def checked(self, tool: str, target: str, seconds: float, rss: float,
                status: int) -> Run:
        self.made.append(target)
        reads = self.source_reads() - self.reads_before  # not the comparison's own scan
        if status:
            return Run(tool, seconds, self.visible, rss, False, f"exit {status} (see {self.log})",
                       reads)
        equal, note = self.same(target)
        return Run(tool, seconds, self.visible, rss, equal, note, reads)


def show(run: Run) -> None:
    verdict = {True: "equal", False: "DIFFERS", None: "-"}[run.equal]
    reads = "" if run.source_reads is None else f"{run.source_reads:>10,} source reads"
    print(f"  {run.tool:<40}{run.seconds:>8.1f} s{run.rate:>11,.0f} cells/s"
          f"{run.peak_rss_mb:>8.0f} MB{reads}  {verdict} {run.note}", flush=True)


def show_replays(summaries: list[dict[str, Any]]) -> None:
    """With both replay pairs run: the four replays beside the project's write path."""
    replays = {s["pair"]: s for s in summaries if s["pair"].startswith("replay")}
    if len(replays) < 2:
        return
    base = replays["replay"]["project_cells_per_s"]
    print(f"\n{'replay':<38}{'cells/s':>11}{'x write path':>14}{'peak MB':>9}")
    for pair, side, tool in (("replay", "project", 'hbase-migrate, bulk = "never"'),
                             ("replay-bulk", "project", 'hbase-migrate, bulk = "always"'),
                             ("replay", "peer", "WALPlayer"),
                             ("replay-bulk", "peer", "WALPlayer bulk + BulkLoadHFilesTool")):
        rate = replays[pair][f"{side}_cells_per_s"]
        print(f"{tool:<38}{rate:>11,.0f}{rate / base if base else 0:>14.2f}"
              f"{replays[pair][f'{side}_peak_rss_mb']:>9.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=200_000)
    parser.add_argument("--quick", action="store_true", help="20,000 cells, one round")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1,
                        help="untimed rounds first: the first step after the load finds the "
                        "source cold (its first WebHDFS calls, the first scans of new files)")
    parser.add_argument("--source", type=Path, help="a running realstack's cluster.json")
    parser.add_argument("--target", type=Path, help="another running realstack's cluster.json")
    parser.add_argument("--hbase-version", default=DEFAULT_VERSION)
    parser.add_argument("--writers", type=int, default=1,
                        help="the project's [replay] writers (gateway connections)")
    parser.add_argument("--client", choices=("thrift", "native"), default="thrift",
                        help="how the project's steps reach both clusters: the Thrift2 "
                        "gateways or HBase's own RPC")
    parser.add_argument("--before", type=Path, help="another checkout of the project (an "
                        "earlier commit): its steps run too, alternated, for a before and "
                        "after in one sitting")
    parser.add_argument("--pairs", default="replay,copy,validate,snapshot",
                        help="the pairs to run, comma-separated (validate and "
                        "validate-snapshot need copy; replay-bulk needs --client native)")
    parser.add_argument("--row-cells", type=int, default=1,
                        help="cells a row of the source table (large rows: few WAL entries "
                        "of many cells)")
    parser.add_argument("--json", type=Path, default=Path("bench/out/peers.json"))
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (logs, "
                        "ledgers, the stacks' data); default: a temporary one")
    args = parser.parse_args()
    cells, repeat = (20_000, 1) if args.quick else (args.cells, args.repeat)
    classpath = module_classpath("mapreduce", {"hbase.version": args.hbase_version})
    with tempfile.TemporaryDirectory(prefix="peers-") as tmp:
        folder = Path(tmp) if args.keep is None else args.keep.resolve()
        folder.mkdir(parents=True, exist_ok=True)
        stacks: list[RealHBase] = []
        clusters = {"source": args.source, "target": args.target}
        try:
            for side, given in clusters.items():
                if given is None:
                    stacks.append(RealHBase(folder / side, RealHBaseOptions(
                        hbase_version=args.hbase_version, region_servers=1, heap="1g",
                        name=side, archive_ttl_ms=ARCHIVE_TTL_MS)))
                    stacks[-1].start()
                    clusters[side] = stacks[-1].cluster_json
            peers = Peers(clusters["source"], clusters["target"], classpath, folder)
            peers.writers = args.writers
            peers.row_cells = args.row_cells
            if args.source is None:  # the stacks started here keep archived WALs a day
                peers.archive_ttl = "1d"
            peers.use_client(args.client)
            peers.load(cells)
            pairs: list[tuple[Pair, Callable[[], Run], Callable[[], Run]]] = [
                (Pair("replay"), peers.replay_project, peers.replay_peer),
                (Pair("replay-bulk"), peers.replay_bulk_project, peers.replay_bulk_peer),
                (Pair("copy"), peers.copy_project, peers.copy_peer),
                (Pair("validate"), peers.validate_project, peers.validate_peer),
                (Pair("validate-snapshot"), peers.validate_snapshot_project,
                 peers.validate_peer),
                (Pair("snapshot"), peers.snapshot_project, peers.snapshot_peer),
            ]
            chosen = args.pairs.split(",")
            pairs = [p for p in pairs if p[0].name in chosen]
            warmup = 0 if args.quick else args.warmup
            for round_ in range(warmup + repeat):
                timed_round = round_ >= warmup
                peers.drop_made()
                print(f"round {round_ - warmup + 1} of {repeat}" if timed_round else
                      f"warm-up round {round_ + 1} of {warmup} (not kept)", flush=True)
                for pair, ours, theirs in pairs:
                    # alternate who goes first, so a slow spell does not always hit one side
                    order = [(pair.project, ours), (pair.peer, theirs)]
                    if args.before is not None:
                        order.insert(1, (pair.before, partial(peers.from_checkout,
                                                              args.before, ours)))
                    for runs, fn in order if round_ % 2 == 0 else order[::-1]:
                        run = peers.measured(fn)
                        show(run)
                        if timed_round:
                            runs.append(run)
            summaries = [pair.summary() for pair, _, _ in pairs]
        finally:
            for stack in stacks:
                stack.stop()
    print(f"\n{'pair':<19}{'project cells/s':>17}{'peer cells/s':>14}{'speed':>8}"
          f"{'project MB':>12}{'peer MB':>9}{'memory':>8}  all equal  before")
    for s in summaries:
        print(f"{s['pair']:<19}{s['project_cells_per_s']:>17,.0f}{s['peer_cells_per_s']:>14,.0f}"
              f"{s['speed_ratio'] or 0:>8.2f}{s['project_peak_rss_mb']:>12.0f}"
              f"{s['peer_peak_rss_mb']:>9.0f}{s['memory_ratio'] or 0:>8.2f}  {s['all_equal']!s:<9}"
              + (f"  {s['before_cells_per_s']:,.0f} ({s['before_speed_ratio']:.2f}x)"
                 if s["before"] else ""))
    show_replays(summaries)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"cells": cells, "repeat": repeat, "client": args.client,
                                     "row_cells": args.row_cells,
                                     "hbase_version": args.hbase_version,
                                     "pairs": summaries}, indent=2), encoding="utf-8")
    print(f"written {args.json}")


if __name__ == "__main__":
    main()
