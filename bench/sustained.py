"""Sustained load: does a follow keep up with a source written as fast as its gateway takes it?

Usage: ``python bench/sustained.py [--minutes 10] [--quick] [--writers 2] [--interval 1s]
[--json bench/out/sustained.json]``

Starts a source and a target (embedded clusters, each in its own process), a table of four
regions on the source, and the migration as a user runs it: ``prepare``, ``snapshot`` (of
the empty table: T0 is now), then ``replay --follow --interval I`` in its own process. Then
``--writers`` threads write the source through its Thrift2 gateway as fast as it takes them
(batches of 500 cells of 60-140-byte values) for ``--minutes``. Every 5 s a probe row is
written to the source with the time, and the target is read until it appears there: the
time it took is the end-to-end lag, measured on the clusters and not taken from the ledger.

Printed: the source's write rate, the lag of every probe (its peak; the aim is under 60 s
throughout), how long the target took to catch up once the writes stopped; then the
replay's sustainable rate: a one-shot catch-up (``replay --start 0``) of the same WAL files
into a fresh target table, timed, divided by the write rate (the aim is at least 1.0). All
of it also as JSON. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.timeutil import parse_duration
from hbase_migrate.wal.model import Cell, CellType

TABLE = "load"
SPLITS = (b"r2", b"r5", b"r7")
BATCH = 500
PROBE_EVERY = 5.0


def start_cluster(folder: Path, name: str) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    """An embedded cluster that keeps archived WALs 2 h: the timed catch-up at the end reads
    every file the load wrote (the default 10 min would delete the first ones)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "hbase_migrate", "minicluster", "start", "--name", name,
         "--dir", str(folder / name), "--archive-ttl", "2h"], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, json.loads(proc.stdout.readline())


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "hbase_migrate", *args], capture_output=True,
                          text=True, check=False)
    if done.returncode:
        sys.exit(f"hbase-migrate {' '.join(args)} failed (exit {done.returncode}):\n"
                 f"{done.stdout}{done.stderr}")
    return done


def config(folder: Path, name: str, source: dict[str, Any], target: dict[str, Any],
           target_table: str) -> Path:
    path = folder / f"{name}.toml"
    path.write_text(
        f'[migration]\nname = "{name}"\nledger = "sqlite:///{folder / name}.db"\n'
        f'[source]\ncluster_json = "{source["dir"]}/cluster.json"\n'
        f'[target]\ncluster_json = "{target["dir"]}/cluster.json"\n'
        f'[[tables]]\nsource = "{TABLE}"\ntarget = "{target_table}"\n', encoding="utf-8")
    return path


class Load:
    """Writer threads and the probes, with their counts."""

    def __init__(self, source: str, target: str, writers: int) -> None:
        self.source, self.target, self.writers = source, target, writers
        self.stop = threading.Event()
        self.cells = 0
        self.lock = threading.Lock()
        self.probes: list[tuple[int, float, float | None]] = []  # (n, written, seen)

    def write(self, seed: int) -> None:
        rng = random.Random(seed)
        ts = int(time.time() * 1000)
        with Thrift2Client(self.source) as client:
            while not self.stop.is_set():
                batch = []
                for _ in range(BATCH):
                    ts += 1
                    row = b"r%d-%012d" % (rng.randrange(10), rng.randrange(10**12))
                    batch.append(Cell(row, b"d", b"q%d" % rng.randrange(4), ts, CellType.PUT,
                                      rng.randbytes(rng.randint(60, 140))))
                client.write_cells(TABLE, batch)
                with self.lock:
                    self.cells += len(batch)

    def probe(self) -> None:
        """Write a probe row every PROBE_EVERY seconds; see each one arrive on the target."""
        with Thrift2Client(self.source) as src, Thrift2Client(self.target) as dst:
            n = 0
            next_probe = time.monotonic()
            while True:
                now = time.monotonic()
                if now >= next_probe and not self.stop.is_set():
                    src.write_cells(TABLE, [Cell(b"~probe-%06d" % n, b"d", b"t",
                                                 int(time.time() * 1000), CellType.PUT, b"1")])
                    self.probes.append((n, time.monotonic(), None))
                    n += 1
                    next_probe = now + PROBE_EVERY
                for i, (k, written, seen) in enumerate(self.probes):
                    if seen is None and dst.get(TABLE, b"~probe-%06d" % k):
                        self.probes[i] = (k, written, time.monotonic())
                if self.stop.is_set() and all(s is not None for _, _, s in self.probes):
                    return
                time.sleep(0.2)

    def lags(self) -> list[float]:
        return [seen - written for _, written, seen in self.probes if seen is not None]


def run(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    source_proc, source = start_cluster(folder, "source")
    target_proc, target = start_cluster(folder, "target")
    follow: subprocess.Popen[str] | None = None
    try:
        with Thrift2Client(source["thrift2"]) as client:
            client.create_table(TableDescriptor(TABLE, (FamilyDescriptor(b"d"),)), SPLITS)
        migration = config(folder, "sustained", source, target, TABLE)
        cli("prepare", "--config", str(migration))
        cli("snapshot", "--config", str(migration))
        with (folder / "follow.log").open("w") as log:
            follow = subprocess.Popen(
                [sys.executable, "-m", "hbase_migrate", "replay", "--config", str(migration),
                 "--follow", "--interval", args.interval], stdout=log, stderr=log, text=True)
        load = Load(source["thrift2"], target["thrift2"], args.writers)
        threads = [threading.Thread(target=load.write, args=(i,), daemon=True)
                   for i in range(args.writers)]
        prober = threading.Thread(target=load.probe, daemon=True)
        started = time.monotonic()
        for t in [*threads, prober]:
            t.start()
        seconds = args.minutes * 60
        while time.monotonic() - started < seconds:
            time.sleep(min(30.0, seconds))
            done = load.lags()
            print(f"  {time.monotonic() - started:6.0f} s: {load.cells:,} cells written, "
                  f"probe lag last {done[-1] if done else float('nan'):.1f} s, "
                  f"peak {max(done, default=float('nan')):.1f} s", flush=True)
        load.stop.set()
        writing = time.monotonic() - started
        for t in threads:
            t.join()
        stopped = time.monotonic()
        prober.join(timeout=600)
        drained = time.monotonic() - stopped
        follow.send_signal(signal.SIGINT)
        follow.wait(120)
        follow = None
        write_rate = load.cells / writing
        # the replay's own pace over the same WALs: a one-shot catch-up into a fresh table
        again = config(folder, "catchup", source, target, "load_catchup")
        cli("prepare", "--config", str(again))
        t0 = time.perf_counter()
        cli("replay", "--config", str(again), "--start", "0")
        catchup = time.perf_counter() - t0
        replay_rate = (load.cells + len(load.probes)) / catchup
        lags = load.lags()
        return {"minutes": args.minutes, "writers": args.writers, "interval": args.interval,
                "cells_written": load.cells, "write_rate": write_rate,
                "probes": len(load.probes), "probe_lags_s": lags,
                "peak_lag_s": max(lags, default=None), "drain_s": drained,
                "catchup_s": catchup, "replay_rate": replay_rate,
                "ratio": replay_rate / write_rate if write_rate else None}
    finally:
        if follow is not None:
            follow.kill()
        for proc in (source_proc, target_proc):
            proc.terminate()
            proc.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--quick", action="store_true", help="one minute")
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--interval", default="1s", help="the follow's --interval")
    parser.add_argument("--json", type=Path, default=Path("bench/out/sustained.json"))
    args = parser.parse_args()
    if args.quick:
        args.minutes = 1.0
    parse_duration(args.interval)  # refused here, not in the follow
    with tempfile.TemporaryDirectory(prefix="sustained-") as tmp:
        result = run(Path(tmp), args)
    print(f"source written {result['minutes']:g} min by {result['writers']} writer(s): "
          f"{result['cells_written']:,} cells, {result['write_rate']:,.0f} cells/s")
    print(f"end-to-end lag of {result['probes']} probes: peak {result['peak_lag_s']:.1f} s "
          f"(aim < 60 s); caught up {result['drain_s']:.1f} s after the writes stopped")
    print(f"replay's own pace over the same WALs: {result['replay_rate']:,.0f} cells/s in "
          f"{result['catchup_s']:.1f} s; sustainable / write rate = {result['ratio']:.2f} "
          f"(aim >= 1.0)")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(f"written {args.json}")
    os.sync()


if __name__ == "__main__":
    main()
