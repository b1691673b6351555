"""Client writes and scans: the project's client over HBase's own RPC, over Thrift2, and
hbase-driver, on one real HBase in one sitting.

Usage: ``python bench/clients.py [--cells 100000] [--repeat 3] [--quick] [--batch 2000]
[--cluster C.json] [--before CHECKOUT] [--json bench/out/clients.json]``

Starts one real Apache HBase from ``realstack`` (two region servers, its Thrift2 gateway) or
uses the running one ``--cluster`` names. Each client gets a fresh table of one family
pre-split into four regions, writes ``--cells`` cells of 100-byte values (four columns a
row, the rows in one shuffled order so that every batch spans every region) in batches of
``--batch`` cells, then scans the whole table back. The clients:

* native: the project's client (``connect`` with ``client = "native"``), ``put_cells``;
* thrift2: the same client protocol through the Thrift2 gateway;
* hbase-driver (PyPI, the ``bench`` dependency group) through its documented API:
  ``Table.put`` of one ``Put`` per row (what its ``batch_put`` does), ``Table.scan(Scan())``;
  skipped, with a line saying so, when it is not installed;
* with ``--before CHECKOUT`` (another checkout of the project, an earlier commit, its
  compiled loops built): native-before, that checkout's native client, in the same rounds,
  for a before and after in one sitting.

Each client runs in its own process: its peak RSS (``wait4``) covers its write and its scan.
The cells read back are compared with those written: their count and a SHA-256 over the
sorted (row, family, qualifier, value); what a client returns is reported as it is, next to
what its table holds (read by the native client), which tells lost writes from lost reads.
``--repeat`` rounds (each started by another client, a fresh table per run); printed per
run and, as medians, per client: cells/s per step, the ratios native/thrift2 and
native/hbase-driver; also as JSON.
Asserts nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints, load_cluster_json
from hbase_migrate.hbase.connect import connect
from hbase_migrate.wal.model import Cell, CellType
from realstack.hbase import DEFAULT_VERSION, RealHBase, RealHBaseOptions

FAMILY = b"f"
COLUMNS = 4
VALUE_BYTES = 100
TIMESTAMP = 1_700_000_000_000
CLIENTS = ("native", "thrift2", "hbase-driver")

Triple = tuple[bytes, bytes, bytes, bytes]  # row, family, qualifier, value


def row_key(i: int) -> bytes:
    return b"row%08d" % i


def split_keys(cells: int) -> list[bytes]:
    """Three keys cutting the rows into four regions of equal size."""
    rows = cells // COLUMNS
    return [row_key(rows * k // 4) for k in (1, 2, 3)]


def make_cells(cells: int, seed: int = 7) -> list[Cell]:
    """``cells`` Put cells (rounded down to whole rows), rows in a shuffled order."""
    rng = random.Random(seed)
    rows = list(range(cells // COLUMNS))
    rng.shuffle(rows)
    return [Cell(row_key(i), FAMILY, b"c%d" % c, TIMESTAMP, CellType.PUT,
                 rng.randbytes(VALUE_BYTES))
            for i in rows for c in range(COLUMNS)]


def digest(triples: Iterable[Triple]) -> tuple[int, str]:
    """(count, SHA-256 of the sorted triples, each field length-prefixed)."""
    h = hashlib.sha256()
    count = 0
    for triple in sorted(triples):
        count += 1
        for part in triple:
            h.update(len(part).to_bytes(4, "big"))
            h.update(part)
    return count, h.hexdigest()


# --- one client, in its own process ------------------------------------------------------


def run_project(endpoints: ClusterEndpoints, table: str, data: list[Cell],
                batch: int) -> dict[str, Any]:
    with connect(endpoints) as client:
        t0 = time.perf_counter()
        for i in range(0, len(data), batch):
            client.put_cells(table, data[i:i + batch])
        write_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        read: list[Cell] = []
        for piece in client.scan(table, max_versions=1):
            read.extend(piece)
        scan_s = time.perf_counter() - t0
    count, sha = digest((c.row, c.family, c.qualifier, c.value) for c in read)
    return {"write_s": write_s, "scan_s": scan_s, "read_cells": count, "read_digest": sha,
            "failed_puts": 0}


def run_driver(endpoints: ClusterEndpoints, table: str, data: list[Cell],
               batch: int) -> dict[str, Any]:
    from hbasedriver.client.client import Client
    from hbasedriver.hbase_constants import HConstants
    from hbasedriver.operations.put import Put
    from hbasedriver.operations.scan import Scan

    config = {HConstants.ZOOKEEPER_QUORUM: endpoints.zookeeper,
              HConstants.ZOOKEEPER_ZNODE_PARENT: endpoints.znode_parent}
    namespace, _, name = table.rpartition(":")
    failed, first_error = 0, ""
    with Client(config) as client, client.get_table(
            (namespace or "default").encode(), name.encode()) as htable:
        t0 = time.perf_counter()
        for i in range(0, len(data), batch):
            puts: dict[bytes, Any] = {}
            for c in data[i:i + batch]:
                put = puts.get(c.row)
                if put is None:
                    put = puts[c.row] = Put(c.row)
                put.add_column(c.family, c.qualifier, c.value, c.timestamp)
            # Table.batch_put is a loop of Table.put that stops at the first error; each
            # put is sent alone here, so that one failed row does not hide the rest
            for put in puts.values():
                try:
                    failed += not htable.put(put)
                except Exception as exc:
                    failed += 1
                    first_error = first_error or " ".join(f"{type(exc).__name__}: {exc}".split())
        write_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        rows = []
        with htable.scan(Scan()) as scanner:
            for row in scanner:
                rows.append(row)
        scan_s = time.perf_counter() - t0
    count, sha = digest((row.rowkey, family, qualifier, value) for row in rows
                        for family, columns in row.kv.items()
                        for qualifier, value in columns.items())
    return {"write_s": write_s, "scan_s": scan_s, "read_cells": count, "read_digest": sha,
            "failed_puts": failed, "first_error": first_error[:400]}


def one(args: argparse.Namespace) -> None:
    """The child: one client writes and scans its table; one JSON line on stdout."""
    endpoints = load_cluster_json(args.cluster)
    data = make_cells(args.cells)
    try:
        if args.one == "hbase-driver":
            result = run_driver(endpoints, args.table, data, args.batch)
        else:
            kind = "native" if args.one == "native" else "thrift"
            result = run_project(replace(endpoints, client=kind), args.table, data,
                                 args.batch)
    except Exception as exc:  # reported by the parent, as it came
        traceback.print_exc()
        result = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    print(json.dumps(result), flush=True)


# --- the parent ---------------------------------------------------------------------------


def driver_installed() -> bool:
    try:
        import hbasedriver  # noqa: F401
    except ImportError:
        return False
    return True


def measure(name: str, cluster: Path, table: str, cells: int, batch: int, log: Path,
            checkout: Path | None = None) -> dict[str, Any]:
    """Run client ``name`` in a child process (native-before: the native client of the
    project in ``checkout``): its figures and peak RSS."""
    home = Path.cwd() if name != "native-before" or checkout is None else checkout.resolve()
    command = [sys.executable, str(home / "bench" / "clients.py"), "--one",
               "native" if name == "native-before" else name, "--cluster", str(cluster),
               "--table", table, "--cells", str(cells), "--batch", str(batch)]
    with log.open("ab") as err:
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, cwd=home,
                                 env=os.environ | {"PYTHONPATH": str(home)})
        assert child.stdout is not None
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
    lines = out.decode().strip().splitlines()
    result: dict[str, Any] = (json.loads(lines[-1]) if lines else
                              {"error": f"exit {os.waitstatus_to_exitcode(status)} (see {log})"})
    result["peak_rss_mb"] = usage.ru_maxrss / 1024
    return result


def fresh_table(endpoints: ClusterEndpoints, table: str, cells: int) -> None:
    with connect(replace(endpoints, client="native")) as client:
        if client.table_exists(table):
            client.disable_table(table)
            client.delete_table(table)
        client.create_table(TableDescriptor(table, (FamilyDescriptor(FAMILY),)),
                            split_keys(cells))


def stored(endpoints: ClusterEndpoints, table: str) -> tuple[int, str]:
    """What ``table`` holds, read by the native client: tells lost writes from lost reads."""
    with connect(replace(endpoints, client="native")) as client:
        return digest((c.row, c.family, c.qualifier, c.value)
                      for piece in client.scan(table, max_versions=1) for c in piece)


def checked(run: dict[str, Any], cells: int, expected: tuple[int, str]) -> dict[str, Any]:
    """One run with its rates and its verdicts against what was written."""
    if "error" in run:
        return run
    run["write_cells_per_s"] = cells / run["write_s"]
    run["scan_cells_per_s"] = run["read_cells"] / run["scan_s"]
    run["equal"] = (run["read_cells"], run["read_digest"]) == expected
    run["stored_equal"] = (run["stored_cells"], run["stored_digest"]) == expected
    return run


def show(name: str, run: dict[str, Any], written: int) -> None:
    if "error" in run:
        print(f"  {name:<14}FAILED: {run['error']}", flush=True)
        return
    verdict = "equal" if run["equal"] else (
        f"DIFFERS ({run['read_cells']:,} cells read of {written:,} written; "
        f"{run['failed_puts']:,} row puts failed; the table holds {run['stored_cells']:,} "
        f"cells, {'all' if run['stored_equal'] else 'not all'} of those written)")
    print(f"  {name:<14}{run['write_cells_per_s']:>12,.0f} w/s{run['scan_cells_per_s']:>12,.0f} "
          f"s/s{run['peak_rss_mb']:>6.0f} MB  {verdict}", flush=True)
    if run.get("first_error"):
        print(f"  {'':<14}first failed put: {run['first_error'][:300]}", flush=True)


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians of a client's rounds (failed rounds left out), its largest peak RSS."""
    good = [r for r in runs if "error" not in r]
    if not good:
        return {"runs": runs}
    return {"runs": runs,
            "write_cells_per_s": statistics.median(r["write_cells_per_s"] for r in good),
            "scan_cells_per_s": statistics.median(r["scan_cells_per_s"] for r in good),
            "peak_rss_mb": max(r["peak_rss_mb"] for r in good),
            "all_equal": len(good) == len(runs) and all(r["equal"] for r in good)}


def report(results: dict[str, dict[str, Any]]) -> None:
    print(f"\n{'client':<14}{'write cells/s':>14}{'scan cells/s':>14}{'peak MB':>9}  all equal")
    for name, r in results.items():
        if "write_cells_per_s" not in r:
            print(f"{name:<14}{r.get('skipped') or 'FAILED in every round'}")
            continue
        print(f"{name:<14}{r['write_cells_per_s']:>14,.0f}{r['scan_cells_per_s']:>14,.0f}"
              f"{r['peak_rss_mb']:>9.0f}  {r['all_equal']}")
    native = results.get("native", {})
    for peer in CLIENTS[1:]:
        other = results.get(peer, {})
        if "write_cells_per_s" in native and "write_cells_per_s" in other:
            writes = native["write_cells_per_s"] / other["write_cells_per_s"]
            scans = native["scan_cells_per_s"] / other["scan_cells_per_s"]
            native.setdefault("ratios", {})[peer] = {"writes": writes, "scans": scans}
            print(f"native / {peer}: writes {writes:.2f}x, scans {scans:.2f}x (medians)")
    before, thrift2 = results.get("native-before", {}), results.get("thrift2", {})
    if "write_cells_per_s" in before and "write_cells_per_s" in thrift2:
        print(f"native-before / thrift2: writes "
              f"{before['write_cells_per_s'] / thrift2['write_cells_per_s']:.2f}x, scans "
              f"{before['scan_cells_per_s'] / thrift2['scan_cells_per_s']:.2f}x (medians)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true", help="20,000 cells, one round")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the medians are kept")
    parser.add_argument("--batch", type=int, default=2000, help="cells per write call")
    parser.add_argument("--cluster", type=Path, help="a running realstack's cluster.json")
    parser.add_argument("--before", type=Path, help="another checkout of the project (an "
                        "earlier commit): its native client runs too, in the same rounds")
    parser.add_argument("--hbase-version", default=DEFAULT_VERSION)
    parser.add_argument("--json", type=Path, default=Path("bench/out/clients.json"))
    parser.add_argument("--one", choices=CLIENTS, help=argparse.SUPPRESS)
    parser.add_argument("--table", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.cells, args.repeat = 20_000, 1
    if args.one:
        one(args)
        return
    cells = args.cells // COLUMNS * COLUMNS
    expected = digest((c.row, c.family, c.qualifier, c.value) for c in make_cells(cells))
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="clients-") as tmp:
        stack = None
        if args.cluster is None:
            stack = RealHBase(Path(tmp) / "hbase", RealHBaseOptions(
                hbase_version=args.hbase_version, region_servers=2, heap="1g"))
            stack.start()
            args.cluster = stack.cluster_json
        try:
            endpoints = load_cluster_json(args.cluster)
            log = Path(tmp) / "clients.log"
            print(f"HBase {args.hbase_version}, {cells:,} cells of {VALUE_BYTES} B, "
                  f"{COLUMNS} a row, 4 regions, batches of {args.batch} cells", flush=True)
            clients = [c for c in CLIENTS if c != "hbase-driver" or driver_installed()]
            if args.before is not None:
                clients.insert(1, "native-before")
            if "hbase-driver" not in clients:
                print("hbase-driver: skipped, not installed (uv sync --group bench)")
            runs: dict[str, list[dict[str, Any]]] = {name: [] for name in clients}
            for round_ in range(args.repeat):
                print(f"round {round_ + 1} of {args.repeat}", flush=True)
                # each round starts with another client, so a slow spell hits each in turn
                for name in clients[round_ % len(clients):] + clients[:round_ % len(clients)]:
                    table = f"bench_clients_{name.replace('-', '_')}"
                    fresh_table(endpoints, table, cells)
                    run = measure(name, args.cluster, table, cells, args.batch, log,
                                  args.before)
                    run["stored_cells"], run["stored_digest"] = stored(endpoints, table)
                    runs[name].append(checked(run, cells, expected))
                    show(name, runs[name][-1], cells)
            results = {name: summary(runs.get(name, [])) if name in runs else
                       {"skipped": "skipped: hbase-driver is not installed"}
                       for name in ("native", "native-before", *CLIENTS[1:])
                       if name != "native-before" or args.before}
            if any("error" in r for rs in runs.values() for r in rs):
                print(log.read_text(errors="replace")[-3000:])
        finally:
            if stack is not None:
                stack.stop()
    report(results)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"cells": cells, "batch": args.batch, "repeat": args.repeat,
                                     "hbase_version": args.hbase_version,
                                     "expected_digest": expected[1], "clients": results},
                                    indent=2), encoding="utf-8")
    print(f"written {args.json}")


if __name__ == "__main__":
    main()
