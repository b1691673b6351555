"""WAL replay throughput into a Thrift2 target, side by side with raw puts of the same cells.

Usage: ``python bench/replay_throughput.py [--size-mb 20] [--quick] [--repeat 2]
[--batch-cells 5000] [--no-spark]``

Starts ``hbase-migrate minicluster start`` in a subprocess (the target: the replayer and the
server do not share one interpreter), generates WAL files with the project's writer
(rows of 17-37 bytes, two families, a few qualifiers, values of 60-140 bytes, about one
entry in ten a delete) and prints, into fresh tables of one schema on that target:

* cells/s of a read-only pass (``WalReader``) and of ``replay_file`` into a target that
  discards what it gets (read + filter + convert), to show where replay time goes;
* cells/s of ``replay_file`` into the Thrift2 target without pipelining (each batch
  acknowledged before reading on) and with 2 batches in flight (the default), next to the
  same cells sent directly with ``write_cells`` (plain Thrift2 calls) in batches of the same
  size, and their ratios, with the CPU share of this process and of the server;
* cells/s of a Spark job (local[2]) replaying the same cells as two WAL files in one task
  and in two tasks (one per file), and the speed-up; session and Python worker start-up
  are excluded (a warm-up job runs first; only ``collect()`` of the replay job is timed);
* the peak RSS (VmHWM) of a child process replaying a 1x and a 10x larger WAL, with
  pipelining on (2 batches in flight).

Each throughput figure is the best of ``--repeat`` rounds in which the runs take turns.
Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from wal_read import tenfold  # the sibling benchmark script

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.replay.apply import AppliedCounts, count_cells
from hbase_migrate.replay.client_target import ClientTarget
from hbase_migrate.replay.file_replay import ReplaySpec, replay_file
from hbase_migrate.replay.filters import ReplayFilter
from hbase_migrate.replay.mutations import RowMutation
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType, WalKey
from hbase_migrate.wal.reader import WalReader
from hbase_migrate.wal.writer import WalOptions, WalWriter

SOURCE_TABLE = "bench"
FAMILIES = (b"d", b"m")
QUALIFIERS = (b"name", b"email", b"status", b"count", b"payload")
T0 = 1_700_000_000_000


# --- WAL generation -------------------------------------------------------------------------


def make_entries(size: int, seed: int = 11) -> list[tuple[WalKey, list[Cell]]]:
    """Entries of about ``size`` bytes of WAL: one row per entry, mostly puts."""
    rng = random.Random(seed)
    regions = [f"{rng.getrandbits(128):032x}".encode() for _ in range(8)]
    out: list[tuple[WalKey, list[Cell]]] = []
    approx = 0
    seq = 1
    while approx < size:
        row = b"user%012d-" % rng.randrange(10**12) + b"x" * rng.randint(0, 20)
        ts = T0 + seq
        if rng.random() < 0.1:
            kind = rng.choice((CellType.DELETE, CellType.DELETE_COLUMN, CellType.DELETE_FAMILY))
            fam = rng.choice(FAMILIES)
            qual = b"" if kind == CellType.DELETE_FAMILY else rng.choice(QUALIFIERS)
            cells = [Cell(row, fam, qual, ts, kind)]
        else:
            cells = [Cell(row, fam, qual, ts, CellType.PUT, rng.randbytes(rng.randint(60, 140)))
                     for fam in FAMILIES
                     for qual in rng.sample(QUALIFIERS, rng.randint(1, 3))]
        key = WalKey(rng.choice(regions), SOURCE_TABLE.encode(), seq, ts,
                     scopes=tuple((f, 1) for f in FAMILIES))
        out.append((key, cells))
        approx += 80 + sum(30 + len(c.row) + len(c.qualifier) + len(c.value) for c in cells)
        seq += 1
    return out


def write_file(path: Path, entries: Sequence[tuple[WalKey, Sequence[Cell]]]) -> None:
    with path.open("wb") as f:
        writer = WalWriter(f, WalOptions())
        for key, cells in entries:
            writer.append(key, cells)
        writer.close()


# --- the runs -------------------------------------------------------------------------------


class DiscardTarget:
    """A target that acknowledges everything at once: replay cost without the network."""

    name = "discard"

    def __init__(self, desc: TableDescriptor) -> None:
        self.desc = desc

    def describe(self, table: str) -> TableDescriptor:
        return self.desc

    def apply(self, table: str, mutations: Sequence[RowMutation]) -> AppliedCounts:
        return AppliedCounts(count_cells(mutations), 1)


def spec_into(table: str, batch_cells: int, in_flight: int = 2) -> ReplaySpec:
    return ReplaySpec(ReplayFilter.build([f"{SOURCE_TABLE}={table}"]), batch_cells, in_flight)


def replayed_cells(result: Any) -> int:
    return sum(result.progress.cells.values())


def read_only(path: Path) -> int:
    with WalReader(str(path)) as reader:
        return sum(len(e.cells) for e in reader)


def raw_write(client: Thrift2Client, table: str, cells: Sequence[Cell], batch: int) -> int:
    for i in range(0, len(cells), batch):
        client.write_cells(table, cells[i:i + batch])
    return len(cells)


def spark_task(args: tuple[str, str, list[str], int]) -> int:
    """Runs in a Spark task: replay the given files, in order, into ``table``."""
    endpoint, table, paths, batch = args
    from hbase_migrate.replay.client_target import ClientTarget as Target
    from hbase_migrate.replay.file_replay import ReplaySpec as Spec
    from hbase_migrate.replay.file_replay import replay_file as replay
    from hbase_migrate.replay.filters import ReplayFilter as Filter
    from hbase_migrate.thrift.thrift2 import Thrift2Client as Client

    target = Target(Client(endpoint))
    spec = Spec(Filter.build([f"{SOURCE_TABLE}={table}"]), batch)
    try:
        return sum(sum(replay(p, spec, target).progress.cells.values()) for p in paths)
    finally:
        target.close()


RSS_CHILD = """
import sys, time
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.replay.client_target import ClientTarget
from hbase_migrate.replay.file_replay import ReplaySpec, replay_file
from hbase_migrate.replay.filters import ReplayFilter
path, endpoint, source, table, batch = sys.argv[1:5] + [int(sys.argv[5])]
target = ClientTarget(Thrift2Client(endpoint))
t0 = time.perf_counter()
result = replay_file(path, ReplaySpec(ReplayFilter.build([source + "=" + table]), batch), target)
secs = time.perf_counter() - t0
hwm = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')]
print(sum(result.progress.cells.values()), secs, (hwm or ['0'])[0])
"""


def rss_child(path: Path, endpoint: str, table: str, batch: int) -> tuple[int, float, float]:
    """(cells, seconds, VmHWM MB) of a fresh child process replaying ``path``."""
    out = subprocess.run([sys.executable, "-c", RSS_CHILD, str(path), endpoint, SOURCE_TABLE, table,
                          str(batch)], capture_output=True, text=True, check=True)
    cells, secs, hwm = out.stdout.split()
    return int(cells), float(secs), int(hwm) / 1024


# --- main -----------------------------------------------------------------------------------


class Bench:
    def __init__(self, client: Thrift2Client, endpoint: str, batch: int) -> None:
        self.client, self.endpoint, self.batch = client, endpoint, batch
        self.desc_families = tuple(FamilyDescriptor(f, max_versions=3) for f in FAMILIES)
        self.tables = 0

    def fresh_table(self) -> str:
        self.tables += 1
        name = f"bench_{self.tables}"
        self.client.create_table(TableDescriptor(name, self.desc_families))
        return name


Best = dict[str, tuple[int, float, float, float]]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


Run = tuple[str, Callable[[str], int]]


def best_of(bench: Bench, runs: list[Run], repeat: int, server: int) -> Best:
    """(cells, seconds, CPU seconds of this process, CPU seconds of the server) of each
    run's fastest round over ``repeat`` rounds; the runs take turns within a round. Each
    run gets a fresh target table, created before its clock starts."""
    best: Best = {}
    for _ in range(repeat):
        for label, fn in runs:
            table = bench.fresh_table()
            s0, c0, t0 = cpu_seconds(server), time.process_time(), time.perf_counter()
            cells = fn(table)
            secs = time.perf_counter() - t0
            here, there = time.process_time() - c0, cpu_seconds(server) - s0
            if label not in best or secs < best[label][1]:
                best[label] = (cells, secs, here, there)
    return best


HEADER = f"  {'run':<36}{'cells':>10}{'s':>8}{'cells/s':>10}{'CPU here':>10}{'server':>8}"


def row(label: str, cells: int, secs: float, here: float | None, there: float) -> None:
    mine = f"{here / secs:>10.0%}" if here is not None else f"{'-':>10}"
    print(f"  {label:<36}{cells:>10,}{secs:>8.2f}{cells / secs:>10,.0f}{mine}"
          f"{there / secs:>8.0%}")


def warm_worker(_: int) -> int:
    """Import the replay modules in a Spark Python worker (start-up, not replay)."""

    return os.getpid()


def run_spark(bench: Bench, files: list[Path], repeat: int, server: int) -> None:
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        print("spark: pyspark is not installed; skipped")
        return
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    t0 = time.perf_counter()
    spark = (SparkSession.builder.master("local[2]").appName("hbase-migrate bench replay")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    sc = spark.sparkContext
    sc.parallelize(range(2), 2).map(warm_worker).collect()  # start both Python workers
    started = time.perf_counter() - t0
    paths = [str(p) for p in files]

    def job(groups: list[list[str]]) -> Callable[[str], int]:
        def go(table: str) -> int:
            work = [(bench.endpoint, table, g, bench.batch) for g in groups]
            return sum(sc.parallelize(work, len(work)).map(spark_task).collect())
        return go

    try:
        best = best_of(bench, [("1 task (2 files in turn)", job([paths])),
                        ("2 tasks (1 file each)", job([[p] for p in paths]))], repeat, server)
    finally:
        spark.stop()
    print(f"spark local[2], {len(paths)} WAL files; session + worker start-up "
          f"{started:.1f} s, excluded (only the replay job's collect() is timed)")
    print(HEADER.replace("CPU here", "driver"))
    rates = {}
    for label, (cells, secs, here, there) in best.items():
        rates[label] = cells / secs
        row(label, cells, secs, here, there)
    one, two = rates.values()
    print(f"  speed-up 2 tasks / 1 task: {two / one:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=20,
                        help="WAL volume of the throughput runs and of the 1x RSS run")
    parser.add_argument("--quick", action="store_true", help="smoke run (2 MB, 1 round)")
    parser.add_argument("--repeat", type=int, default=2, help="rounds (best run is kept)")
    parser.add_argument("--batch-cells", type=int, default=5000)
    parser.add_argument("--no-spark", action="store_true")
    args = parser.parse_args()
    size = int((2 if args.quick else args.size_mb) * (1 << 20))
    repeat = 1 if args.quick else args.repeat
    with tempfile.TemporaryDirectory(prefix="replay-bench-") as tmp:
        folder = Path(tmp)
        proc = subprocess.Popen(
            [sys.executable, "-m", "hbase_migrate", "minicluster", "start",
             "--dir", str(folder / "cluster")], stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            info = json.loads(proc.stdout.readline())
            run(info["thrift2"], proc.pid, folder, size, repeat, args)
        finally:
            proc.terminate()
            proc.wait(30)


def run(endpoint: str, server: int, folder: Path, size: int, repeat: int,
        args: argparse.Namespace) -> None:
    batch = args.batch_cells
    client = Thrift2Client(endpoint)
    bench = Bench(client, endpoint, batch)
    t0 = time.perf_counter()
    entries = make_entries(size)
    half = len(entries) // 2
    wal = folder / "wal-1x"
    parts = [folder / "wal-part-a", folder / "wal-part-b"]
    write_file(wal, entries)
    write_file(parts[0], entries[:half])
    write_file(parts[1], entries[half:])
    cells = [c for _, cs in entries for c in cs]
    deletes = sum(1 for c in cells if c.type != CellType.PUT)
    mb = wal.stat().st_size / (1 << 20)
    print(f"target minicluster thrift2 {endpoint}; WAL {mb:.1f} MB, {len(entries):,} entries, "
          f"{len(cells):,} cells ({deletes:,} deletes); batches of {batch} cells; "
          f"best of {repeat} (generated in {time.perf_counter() - t0:.1f} s)")

    discard = DiscardTarget(TableDescriptor("discard", bench.desc_families))

    def replay_into_thrift2(in_flight: int) -> Callable[[str], int]:
        def go(table: str) -> int:
            target = ClientTarget(Thrift2Client(endpoint))
            try:
                return replayed_cells(replay_file(wal, spec_into(table, batch, in_flight),
                                                  target))
            finally:
                target.close()
        return go

    sequential = "replay_file -> Thrift2, 0 in flight"
    pipelined = "replay_file -> Thrift2, 2 in flight"
    runs: list[Run] = [
        ("read only (WalReader)", lambda _: read_only(wal)),
        ("replay_file -> discarding target",
         lambda _: replayed_cells(replay_file(wal, spec_into("discard", batch, 0), discard))),
        (sequential, replay_into_thrift2(0)),
        (pipelined, replay_into_thrift2(2)),
        ("raw write_cells, same cells/batches",
         lambda table: raw_write(client, table, cells, batch)),
    ]
    best = best_of(bench, runs, repeat, server)
    print(HEADER)
    for label, (n, secs, here, there) in best.items():
        row(label, n, secs, here, there)
    rate = {label: n / secs for label, (n, secs, _, _) in best.items()}
    raw_rate = rate["raw write_cells, same cells/batches"]
    print(f"  ratio replay / raw: {rate[sequential] / raw_rate:.2f} without pipelining, "
          f"{rate[pipelined] / raw_rate:.2f} with 2 batches in flight")
    replay_rate = rate[sequential]
    t_replay = 1 / replay_rate
    t_local = 1 / rate["replay_file -> discarding target"]
    t_read = 1 / rate["read only (WalReader)"]
    print(f"  time per replayed cell: read {t_read / t_replay:.0%}, filter+convert "
          f"{(t_local - t_read) / t_replay:.0%}, send+acknowledge "
          f"{(t_replay - t_local) / t_replay:.0%} (raw send {1 / raw_rate / t_replay:.0%}) "
          "without pipelining")

    if not args.no_spark:
        run_spark(bench, parts, repeat, server)

    big = folder / "wal-10x"
    tenfold(wal, big)
    table = bench.fresh_table()
    print("peak RSS of a child process replaying into the Thrift2 target, 2 batches in flight")
    hwms = []
    for label, path in (("1x", wal), ("10x", big)):
        n, secs, hwm = rss_child(path, endpoint, table, batch)
        hwms.append(hwm)
        print(f"  {label:>3} {path.stat().st_size / (1 << 20):>7.1f} MB WAL {n:>10,} cells "
              f"{secs:>7.1f} s {n / secs:>10,.0f} cells/s   VmHWM {hwm:.1f} MB")
    print(f"  VmHWM 10x / 1x: {hwms[1] / hwms[0]:.2f}")
    client.close()


if __name__ == "__main__":
    main()
