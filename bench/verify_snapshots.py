"""The validation from both snapshots beside HBase's VerifyReplication from both snapshots
(and HashTable + SyncTable ``--dryrun``), on the same two real HBase clusters and table, in
one sitting.

Usage: ``python bench/verify_snapshots.py [--cells 2000000] [--repeat 1] [--quick]
[--copy scan|hbase] [--no-tamper] [--no-hashtable] [--no-check] [--no-webhdfs] [--heap 1g]
[--keep DIR]
[--profile FILE] [--json bench/out/verify_snapshots.json]``

Starts two real Apache HBase 2.6.1 clusters (``realstack``, one region server each), writes
``--cells`` cells into the source table of ``bench/peers.py`` (four regions, two families, a
DeleteColumn every 25th cell), flushes it, copies it to the target once with the project's
``snapshot`` (``--copy``: the scan copy or the file copy, untimed) and (unless
``--no-check``) compares the copy with the source cell for cell. Then ``--repeat`` rounds,
the tools' order turned each round:

* ``hbase-migrate validate --from snapshot``: both clusters' roots are over WebHDFS, so the
  step takes a snapshot of each side and reads both snapshots' store files, no region server
  in the path (its ``source_requests`` and ``target_requests``), from the DataNodes (the
  stacks' ``cluster.json`` name their NameNodes); with ``--webhdfs`` (the default) once
  more with the NameNodes left out, the files streamed over WebHDFS;
* VerifyReplication with ``--sourceSnapshotName``/``--peerSnapshotName`` (local MapReduce,
  class path of ``realstack/mapreduce``, both snapshots restored into temporary folders of
  their own cluster's HDFS, every version): its time is the two snapshots taken through the
  native admin, the tool's JVM, and the two snapshots deleted, as the project's step does all
  three; the tool alone is printed beside it;
* HashTable (every version) of the source, then SyncTable ``--dryrun`` of the target: the
  live scans of both clusters.

With ``--profile FILE``, the project's step runs once more after the rounds under py-spy
(its native frames too, every thread's CPU), its raw stacks in ``FILE``; that run is printed
apart and not in the medians (py-spy slows it).

With ``--tamper`` (the default) one target cell's value is then changed by hand and each tool
runs once more: each should find exactly that one row. Printed per run: wall seconds, the
CPU seconds and peak RSS of the tool's process tree (``wait4``: the largest process, the
CPU of all), each cluster JVM's CPU seconds meanwhile (HDFS and the region server are one
JVM), the read requests the source's regions served, and what the tool said; then each
tool's time as a ratio of the project's (> 1: the project is faster). Asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

try:
    from bench.jvm_share import JvmMeter
    from bench.peers import ARCHIVE_TTL_MS, MEASURED, SOURCE, Peers, zk_address
    from bench.scale import py_spy
except ImportError:  # run as ``python bench/verify_snapshots.py``
    from jvm_share import JvmMeter  # type: ignore[no-redef]
    from peers import ARCHIVE_TTL_MS, MEASURED, SOURCE, Peers, zk_address  # type: ignore
    from scale import py_spy  # type: ignore[no-redef]

from hbase_migrate.rpc.admin import NativeAdmin
from hbase_migrate.wal.model import CellType
from realstack.hbase import DEFAULT_VERSION, RealHBase, RealHBaseOptions
from realstack.maven import module_classpath

VERIFY = "org.apache.hadoop.hbase.mapreduce.replication.VerifyReplication"
ALL_VERSIONS = "2147483647"
COUNTER = re.compile(r"^\s+([A-Z_]+)=(\d+)\s*$")
PROJECT = "validate --from snapshot"
PROJECT_WEBHDFS = "validate --from snapshot, over WebHDFS"
VERIFYREP = "VerifyReplication (both snapshots)"
HASHSYNC = "HashTable + SyncTable --dryrun"
# the tools' log: warnings and errors (VerifyReplication logs each differing row as an
# error), and the job's counters (the tools' verdicts)
LOG4J = """log4j.rootLogger=WARN,err
log4j.appender.err=org.apache.log4j.ConsoleAppender
log4j.appender.err.target=System.err
log4j.appender.err.layout=org.apache.log4j.PatternLayout
log4j.appender.err.layout.ConversionPattern=%d{ISO8601} %p %c{1}: %m%n
log4j.logger.org.apache.hadoop.mapreduce.Job=INFO
"""


@dataclass
class Run:
    tool: str
    seconds: float
    cpu_s: float
    peak_rss_mb: float
    source_jvm_cpu_s: float
    target_jvm_cpu_s: float
    source_reads: int
    verdict: str  # "match", "1 row differs", ... or what failed
    tool_seconds: float | None = None  # VerifyReplication's JVM alone, snapshots left out
    load: float = 0.0  # the machine's 1-minute load average when the run ended
    said: dict[str, Any] = field(default_factory=dict)


def counters(log: Path) -> dict[str, int]:
    """The job counters a Hadoop tool logged (the last value of each name)."""
    found: dict[str, int] = {}
    for line in log.read_text(errors="replace").splitlines():
        m = COUNTER.match(line)
        if m:
            found[m.group(1)] = int(m.group(2))
    return found


Measured = tuple[float, float, float, int, Path, Path]


class ToolPeers(Peers):
    """:class:`Peers` whose HBase tools each write a log of their own (their job counters
    are their verdicts) and whose runs are all kept (:attr:`calls`)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.naming = "tool"  # the next tool run's log name
        self.calls: list[Measured] = []

    def measure(self, command: list[str], name: str, env: dict[str, str] | None = None,
                cwd: Path | None = None) -> Measured:
        """Run ``command``: wall s, CPU s and peak RSS MB of its process tree, exit status,
        its stdout and stderr files."""
        self.serial += 1
        out = self.folder / f"{self.serial:02d}-{name}.out"
        err = out.with_suffix(".log")
        measured = out.with_suffix(".measured")
        with out.open("wb") as o, err.open("wb") as e:
            status = subprocess.run([sys.executable, "-c", MEASURED, str(measured), *command],
                                    env=env, cwd=cwd, stdout=o, stderr=e,
                                    check=False).returncode
        seconds, rss_kb, cpu = measured.read_text().split()
        return float(seconds), float(cpu), int(rss_kb) / 1024, status, out, err

    def metered(self, command: list[str], env: dict[str, str] | None = None,
                cwd: Path | None = None) -> tuple[float, float, int]:
        """An HBase tool's run (:meth:`Peers.hbase_tool`), logging its counters and errors."""
        logging = self.folder / "log4j.properties"
        if not logging.exists():
            logging.write_text(LOG4J, encoding="utf-8")
        env = (env or dict(os.environ)) | {
            "JAVA_TOOL_OPTIONS": f"-Dlog4j.configuration={logging.as_uri()}"}
        self.calls.append(self.measure(command, self.naming, env, cwd))
        seconds, _, rss, status, _, _ = self.calls[-1]
        return seconds, rss, status


class Sitting:
    def __init__(self, peers: ToolPeers, target_table: str, meters: dict[str, JvmMeter]
                 ) -> None:
        self.peers, self.table, self.meters = peers, target_table, meters
        self.config: Path = Path()
        self.serial = 0

    def timed(self, tool: str, body: Any) -> Run:
        """``body()`` -> (seconds, cpu, rss, verdict, extra), with the clusters' share."""
        marks = {side: meter.mark() for side, meter in self.meters.items()}
        reads = self.peers.source_reads()
        seconds, cpu, rss, verdict, extra = body()
        shares = {side: meter.since(marks[side]).cpu_s for side, meter in self.meters.items()}
        run = Run(tool, seconds, cpu, rss, shares.get("source", 0.0),
                  shares.get("target", 0.0), self.peers.source_reads() - reads, verdict,
                  load=os.getloadavg()[0], **extra)
        show(run)
        return run

    # --- the three tools ---------------------------------------------------------------

    def project(self) -> Run:
        return self._project(PROJECT, self.config)

    def project_webhdfs(self) -> Run:
        return self._project(PROJECT_WEBHDFS, webhdfs_only(self.config))

    def _project(self, tool: str, config: Path) -> Run:
        def body() -> tuple[float, float, float, str, dict[str, Any]]:
            command = [*self.peers.wrap, sys.executable, "-m", "hbase_migrate", "validate",
                       "--config", str(config), "--from", "snapshot", "--json"]
            env = os.environ | {"PYTHONPATH": str(self.peers.checkout)}
            seconds, cpu, rss, status, out, err = self.peers.measure(
                command, "project", env, self.peers.checkout)
            try:
                result = json.loads(out.read_text())
            except ValueError:
                return seconds, cpu, rss, f"exit {status} (see {err})", {}
            m = result.get("metrics", result)  # the step's result, its metrics at the top
            said = {"verdict": m.get("verdict"), "exit": status,
                    "source_requests": m.get("source_requests"),
                    "target_requests": m.get("target_requests"),
                    "differing": m.get("differing"),
                    "cells": [(t.get("source_cells"), t.get("target_cells"))
                              for t in m.get("tables", [])],
                    "source_read": str(m.get("source_read", ""))[:60],
                    "target_read": str(m.get("target_read", ""))[:60]}
            differing = m.get("differing") or []
            verdict = (str(m.get("verdict")) if not differing else
                       f"{m.get('verdict')}: {len(differing)} range(s) differ")
            return seconds, cpu, rss, verdict, {"said": said}
        return self.timed(tool, body)

    def verifyrep(self) -> Run:
        src, dst = self.peers.source, self.peers.target
        self.serial += 1
        names = (f"vr_src_{self.serial}", f"vr_dst_{self.serial}")
        tmp = f"/verifyrep-tmp/{self.serial}"

        def body() -> tuple[float, float, float, str, dict[str, Any]]:
            began = time.perf_counter()
            admins = (NativeAdmin(src["zookeeper"], src["znode_parent"]),
                      NativeAdmin(dst["zookeeper"], dst["znode_parent"]))
            try:
                admins[0].snapshot(SOURCE, names[0])
                admins[1].snapshot(self.table, names[1])
                taken = time.perf_counter() - began
                self.peers.naming = "verifyrep"
                self.peers.hbase_tool(
                    VERIFY, f"-Dhbase.rootdir={self.peers.webhdfs(src['hbase_root'])}",
                    f"--versions={ALL_VERSIONS}",
                    f"--sourceSnapshotName={names[0]}",
                    f"--sourceSnapshotTmpDir={self.peers.webhdfs(tmp + '/source')}",
                    f"--peerSnapshotName={names[1]}", f"--peerSnapshotTmpDir={tmp}/peer",
                    f"--peerFSAddress={self.peers.webhdfs('', dst)}",
                    f"--peerHBaseRootAddress={dst['hbase_root']}",
                    f"--peerTableName={self.table}", zk_address(dst), SOURCE, on=src)
                seconds, cpu, rss, status, _, log = self.peers.calls[-1]
                began = time.perf_counter()
                admins[0].delete_snapshot(names[0])
                admins[1].delete_snapshot(names[1])
                deleted = time.perf_counter() - began
            finally:
                for admin in admins:
                    admin.close()
            for side, where in ((src, tmp + "/source"), (dst, tmp + "/peer")):
                remove(side, where)
            found = counters(log)
            said = {k: v for k, v in found.items() if k in {
                "GOODROWS", "BADROWS", "ONLY_IN_SOURCE_TABLE_ROWS", "ONLY_IN_PEER_TABLE_ROWS",
                "CONTENT_DIFFERENT_ROWS", "MAP_INPUT_RECORDS"}} | {"exit": status}
            if status or ("GOODROWS" not in found and "BADROWS" not in found):
                verdict = f"exit {status}, no verdict (see {log})"
            elif found.get("BADROWS", 0):
                verdict = f"{found['BADROWS']} row(s) differ"
            else:
                verdict = "match"
            return (taken + seconds + deleted, cpu, rss, verdict,
                    {"tool_seconds": seconds, "said": said})
        return self.timed(VERIFYREP, body)

    def hashsync(self) -> Run:
        """:meth:`Peers.validate_peer` of the copy: HashTable, then SyncTable ``--dryrun``."""
        def body() -> tuple[float, float, float, str, dict[str, Any]]:
            self.peers.copytable, self.peers.naming = self.table, "hashtable-synctable"
            run = self.peers.validate_peer()
            (_, c1, _, st1, _, _), (_, c2, _, st2, _, log) = self.peers.calls[-2:]
            found = counters(log)
            said = {k: v for k, v in found.items() if k in {
                "HASHES_MATCHED", "HASHES_NOT_MATCHED", "ROWSWITHDIFFS", "SOURCEMISSINGROWS",
                "TARGETMISSINGROWS", "SOURCEMISSINGCELLS", "TARGETMISSINGCELLS",
                "DIFFERENTCELLVALUES"}} | {"exits": [st1, st2]}
            if st1 or st2 or "HASHES_MATCHED" not in found:
                verdict = f"exits {st1}, {st2}, no verdict (see {log})"
            elif found.get("ROWSWITHDIFFS", 0):
                verdict = f"{found['ROWSWITHDIFFS']} row(s) differ"
            else:
                verdict = "match"
            return run.seconds, c1 + c2, run.peak_rss_mb, verdict, {"said": said}
        return self.timed(HASHSYNC, body)


def webhdfs_only(config: Path) -> Path:
    """A copy of ``config`` whose clusters' ``cluster.json`` name no ``namenode``: their
    store files read over WebHDFS, as before the DataNode reader."""
    text = config.read_text(encoding="utf-8")
    for named in sorted(set(re.findall(r'cluster_json = "([^"]+)"', text))):
        data = json.loads(Path(named).read_text(encoding="utf-8"))
        data.pop("namenode", None)
        copy = config.with_name(f"{Path(named).parent.name}-webhdfs.json")
        copy.write_text(json.dumps(data), encoding="utf-8")
        text = text.replace(f'"{named}"', f'"{copy}"')
    out = config.with_name(f"{config.stem}-webhdfs.toml")
    out.write_text(text, encoding="utf-8")
    return out


def remove(cluster: dict[str, Any], path: str) -> None:
    """Delete a folder of ``cluster``'s HDFS over WebHDFS (the tool's restored snapshot)."""
    url = f"{cluster['webhdfs']}/webhdfs/v1{path}?op=DELETE&recursive=true&user.name=" \
          f"{getpass.getuser()}"
    with contextlib.suppress(OSError):
        urllib.request.urlopen(urllib.request.Request(url, method="DELETE"), timeout=60)


def show(run: Run) -> None:
    alone = "" if run.tool_seconds is None else f" (tool {run.tool_seconds:.1f} s)"
    print(f"  {run.tool:<36}{run.seconds:>8.1f} s{alone:<16}{run.cpu_s:>8.1f} cpu s"
          f"{run.peak_rss_mb:>7.0f} MB  JVMs {run.source_jvm_cpu_s:>6.1f}+"
          f"{run.target_jvm_cpu_s:<6.1f} cpu s {run.source_reads:>9,} source reads  "
          f"load {run.load:.1f}  {run.verdict}", flush=True)


def tamper(peers: Peers, table: str) -> bytes:
    """Change the value of one target cell (same coordinates): its row."""
    client = peers.target_client
    for piece in client.scan(table):
        for cell in piece:
            if cell.type == CellType.PUT:
                client.put_cells(table, [cell._replace(value=b"changed by hand")])
                return bytes(cell.row)
    raise RuntimeError(f"{table} holds no put")


def copy_once(peers: ToolPeers, args: argparse.Namespace) -> tuple[str, Path]:
    """The target table, copied once by the project's ``snapshot`` (untimed), and the
    migration's config the validations use."""
    target, config = peers.prepared("copy", f'[snapshot]\nmethod = "{args.copy}"\n')
    began = time.perf_counter()
    _, _, status = peers.project("snapshot", "--config", str(config), timed_run=False)
    if status:
        raise RuntimeError(f"the copy failed (see {peers.log})")
    peers.flush_target()
    said = "not compared"
    if args.check:
        equal, note = peers.same(target)
        said = "compare included: " + ("equal to the source" if equal
                                       else "DIFFERS: " + note)
    print(f"copied to {target} by the {args.copy} copy in "
          f"{time.perf_counter() - began:.0f} s ({said})", flush=True)
    return target, config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="200,000 cells, one round")
    parser.add_argument("--copy", choices=("scan", "hbase"), default="scan",
                        help="how the target table is made (untimed): the scan copy or the "
                        "file copy")
    parser.add_argument("--tamper", action=argparse.BooleanOptionalAction, default=True,
                        help="then change one target cell and run each tool once more")
    parser.add_argument("--hashtable", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--check", action=argparse.BooleanOptionalAction, default=True,
                        help="compare the copy with the source cell for cell first")
    parser.add_argument("--heap", default="1g", help="each cluster's JVM heap")
    parser.add_argument("--webhdfs", action=argparse.BooleanOptionalAction, default=True,
                        help="the project's validation a second time, its store files read "
                             "over WebHDFS instead of from the DataNodes")
    parser.add_argument("--hbase-version", default=DEFAULT_VERSION)
    parser.add_argument("--json", type=Path, default=Path("bench/out/verify_snapshots.json"))
    parser.add_argument("--profile", type=Path, help="the project's step once more under "
                        "py-spy, its raw stacks in this file")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args()
    if args.quick:
        args.cells, args.repeat = 200_000, 1
    classpath = module_classpath("mapreduce", {"hbase.version": args.hbase_version})
    rounds: list[list[Run]] = []
    with tempfile.TemporaryDirectory(prefix="verifysnap-") as tmp:
        folder = Path(tmp) if args.keep is None else args.keep.resolve()
        folder.mkdir(parents=True, exist_ok=True)
        stacks: list[RealHBase] = []
        try:
            meters = {}
            for side in ("source", "target"):
                stack = RealHBase(folder / side, RealHBaseOptions(
                    hbase_version=args.hbase_version, region_servers=1, heap=args.heap,
                    name=side, archive_ttl_ms=ARCHIVE_TTL_MS))
                stacks.append(stack)
                stack.start()
                assert stack.pid is not None
                meters[side] = JvmMeter(stack.pid, folder / side / "gc.log", stack.log_path)
            peers = ToolPeers(stacks[0].cluster_json, stacks[1].cluster_json, classpath, folder)
            peers.archive_ttl = "1d"
            peers.use_client("native")
            began = time.perf_counter()
            peers.load(args.cells)
            print(f"loaded in {time.perf_counter() - began:.0f} s", flush=True)
            target, config = copy_once(peers, args)
            sitting = Sitting(peers, target, meters)
            sitting.config = config
            tools = [sitting.project, sitting.verifyrep]
            if args.webhdfs:
                tools.insert(1, sitting.project_webhdfs)
            if args.hashtable:
                tools.append(sitting.hashsync)
            for n in range(args.repeat):
                print(f"round {n + 1} of {args.repeat} (correct target)", flush=True)
                order = tools if n % 2 == 0 else tools[::-1]
                rounds.append([fn() for fn in order])
            if args.profile:
                profiled(sitting, args.profile)
            tampered_runs: list[Run] = []
            if args.tamper:
                row = tamper(peers, target)
                print(f"one cell of row {row!r} changed on the target", flush=True)
                tampered_runs = [fn() for fn in tools]
        finally:
            for stack in stacks:
                stack.stop()
    report(args, peers.visible, rounds, tampered_runs)


def profiled(sitting: Sitting, out: Path) -> None:
    """The project's step once more under py-spy: every thread's CPU, native frames too."""
    sitting.peers.wrap = [py_spy(), "record", "--threads", "--native", "--rate", "100",
                          "--format", "raw", "--output", str(out.resolve()), "--"]
    print(f"under py-spy (stacks in {out}):", flush=True)
    try:
        sitting.project()
    finally:
        sitting.peers.wrap = []


def report(args: argparse.Namespace, visible: int, rounds: list[list[Run]],
           tampered: list[Run]) -> None:
    by_tool: dict[str, list[Run]] = {}
    for runs in rounds:
        for run in runs:
            by_tool.setdefault(run.tool, []).append(run)

    def med(tool: str, attr: str) -> float:
        return statistics.median(getattr(r, attr) for r in by_tool[tool])

    ours = med(PROJECT, "seconds")
    print(f"\n{args.cells:,} cells written ({visible:,} visible), medians of {len(rounds)} "
          "round(s) on the correct target:")
    print(f"{'tool':<36}{'seconds':>9}{'cpu s':>8}{'peak MB':>9}{'time / project':>16}")
    summary = []
    for tool, runs in by_tool.items():
        seconds = med(tool, "seconds")
        row = {"tool": tool, "seconds": seconds, "cpu_s": med(tool, "cpu_s"),
               "peak_rss_mb": med(tool, "peak_rss_mb"), "ratio": seconds / ours,
               "verdicts": [r.verdict for r in runs]}
        summary.append(row)
        print(f"{tool:<36}{seconds:>9.1f}{row['cpu_s']:>8.1f}{row['peak_rss_mb']:>9.0f}"
              f"{row['ratio']:>15.2f}x  {', '.join(row['verdicts'])}")
    if tampered:
        print("one target cell changed: " + "; ".join(f"{r.tool}: {r.verdict}"
                                                       for r in tampered))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({
        "cells": args.cells, "visible": visible, "copy": args.copy,
        "summary": summary, "rounds": [[asdict(r) for r in runs] for runs in rounds],
        "tampered": [asdict(r) for r in tampered]}, indent=2), encoding="utf-8")
    print(f"written {args.json}")


if __name__ == "__main__":
    main()
