"""What a full scan of one table costs its region server: the validation's scan (the
project's client over HBase's RPC) beside HashTable's (the source side of HashTable +
SyncTable) on the same data, in the same sitting.

Usage: ``python bench/scan_cost.py [--cells 20000000] [--rounds 2] [--heap 4g]``

One real HBase (``realstack``, one region server, the ``--heap`` given) holds the table of
``bench/peers.py`` (four regions, two families, a DeleteColumn every 25th cell), flushed.
Each round runs, one after the other with the cluster otherwise idle:

* ``HashTable`` (local MapReduce, its defaults: newest versions, 2 MB replies, blocks kept
  out of the block cache);
* the project's scan as ``validate`` runs it (``Client.scan_batches``: every version, 4 MiB
  replies, the next region opened ahead);
* the same with only the newest versions, and with 2 MiB replies.

Prints, per run, the wall seconds, the region server JVM's CPU seconds (``/proc``) less its
idle rate (measured before the rounds) over the run, that per visible cell, its collections'
pauses, and the scanning process's own CPU (HashTable's: its JVM's); then the medians and
each scan's server CPU as a ratio of HashTable's. Checks that every scan of every version
counted the cells of an untimed first scan (which warms the server's scan path for all runs
alike); asserts nothing else.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from bench.jvm_share import JvmMeter
from bench.peers import FAMILIES, LOAD_BATCH, SOURCE, SPLITS, Peers, iter_cells
from bench.scale import ARCHIVE_TTL_MS
from hbase_migrate.cluster.descriptors import ALL_VERSIONS, FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints, load_cluster_json
from hbase_migrate.hbase.connect import connect
from realstack.hbase import DEFAULT_VERSION, RealHBase, RealHBaseOptions
from realstack.maven import module_classpath
from stackprocs.admin_client import call_admin

IDLE_S = 20.0
SETTLE_S = 5.0  # between runs


def load(endpoints: ClusterEndpoints, cluster_json: Path, cells: int) -> None:
    client = connect(endpoints)
    client.create_table(TableDescriptor(SOURCE, tuple(FamilyDescriptor(f) for f in FAMILIES)),
                        SPLITS)
    batch = []
    for cell in iter_cells(cells):
        batch.append(cell)
        if len(batch) == LOAD_BATCH:
            client.write_cells(SOURCE, batch)
            batch = []
    if batch:
        client.write_cells(SOURCE, batch)
    call_admin(cluster_json, "flush", {})


def project_scan(endpoints: ClusterEndpoints, versions: int = ALL_VERSIONS,
                 reply_bytes: int | None = None) -> Callable[[], tuple[int, float]]:
    def run() -> tuple[int, float]:
        client = connect(endpoints)
        if reply_bytes is not None:
            client.max_result_bytes = reply_bytes  # type: ignore[attr-defined]
        began, cells = time.process_time(), 0
        for batch in client.scan_batches(SOURCE, max_versions=versions):
            cells += sum(len(piece) for piece in batch)
        return cells, time.process_time() - began
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=20_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--heap", default="4g")
    args = parser.parse_args()
    classpath = module_classpath("mapreduce", {"hbase.version": DEFAULT_VERSION})
    with tempfile.TemporaryDirectory(prefix="scan-cost-") as tmp:
        folder = Path(tmp)
        hbase = RealHBase(folder / "source", RealHBaseOptions(
            hbase_version=DEFAULT_VERSION, region_servers=1, heap=args.heap, name="source",
            archive_ttl_ms=ARCHIVE_TTL_MS))
        hbase.start()
        try:
            assert hbase.pid is not None
            meter = JvmMeter(hbase.pid, folder / "source" / "gc.log", hbase.log_path)
            endpoints = replace(load_cluster_json(hbase.cluster_json), client="native")
            print(f"loading {args.cells:,} cells", flush=True)
            load(endpoints, hbase.cluster_json, args.cells)
            time.sleep(30)  # the flush's compactions
            before = meter.cpu_s()
            time.sleep(IDLE_S)
            idle = (meter.cpu_s() - before) / IDLE_S
            print(f"region server idle: {idle:.3f} CPU s a second", flush=True)
            peers = Peers(hbase.cluster_json, hbase.cluster_json, classpath, folder)
            visible, _ = project_scan(endpoints)()  # untimed: warms both alike
            print(f"{visible:,} visible cells", flush=True)

            def hashtable() -> tuple[int, float]:
                peers.shares = {}
                hashes = (folder / peers.fresh("hashes")).as_uri()
                _, _, status = peers.hbase_tool("HashTable", SOURCE, hashes, on=peers.source)
                if status:
                    raise SystemExit(f"HashTable failed (exit {status}, {peers.log})")
                return visible, peers.shares["command"].cpu_s  # the tool's JVM

            runs: dict[str, Callable[[], tuple[int, float]]] = {
                "HashTable": hashtable,
                "project scan": project_scan(endpoints),
                "project scan, newest versions": project_scan(endpoints, versions=1),
                "project scan, 2 MiB replies": project_scan(endpoints, reply_bytes=2 << 20)}
            server: dict[str, list[float]] = {name: [] for name in runs}
            print(f"{'round':>5} {'run':31} {'wall s':>7} {'server CPU s':>12} "
                  f"{'us/cell':>7} {'GC s':>5} {'scanner CPU s':>13}")
            for round_ in range(1, args.rounds + 1):
                for name, run in runs.items():
                    time.sleep(SETTLE_S)
                    mark, began = meter.mark(), time.monotonic()
                    cells, own_cpu = run()
                    seconds = time.monotonic() - began
                    share = meter.since(mark)
                    net = share.cpu_s - idle * seconds
                    server[name].append(net)
                    if cells != visible and not name.endswith("newest versions"):
                        raise SystemExit(f"{name} counted {cells:,} cells, not {visible:,}")
                    per_cell = net / visible * 1e6
                    print(f"{round_:>5} {name:31} {seconds:7.1f} {net:12.1f} {per_cell:7.2f} "
                          f"{share.gc_pause_s:5.2f} {own_cpu:13.1f}", flush=True)
            theirs = statistics.median(server["HashTable"])
            print(f"\nmedians of {args.rounds} rounds, {visible:,} visible cells:")
            for name, values in server.items():
                ours = statistics.median(values)
                print(f"  {name:31} server {ours:6.1f} CPU s  {ours / theirs:5.2f}x HashTable's")
        finally:
            hbase.stop()


if __name__ == "__main__":
    main()
