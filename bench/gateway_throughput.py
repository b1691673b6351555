"""Put and scan throughput of the embedded cluster's two gateways, side by side.

Starts ``hbase-migrate minicluster start`` in a subprocess on a temporary directory, then
for a few batch sizes writes the same number of cells through Thrift1 (happybase batches,
``mutateRows``) and Thrift2 (``putMultiple``), and scans them back (happybase scanner with
``batch_size``; Thrift2 scanner with ``getScannerRows``). Prints cells per second and the
Thrift2/Thrift1 ratio. Asserts nothing.

    python bench/gateway_throughput.py [--cells N] [--transport framed] [--protocol compact]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import happybase

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType

COLUMNS_PER_ROW = 4


def timed(func: Callable[[], int]) -> float:
    """Cells per second of ``func`` (which returns the number of cells it handled)."""
    start = time.perf_counter()
    count = func()
    return count / (time.perf_counter() - start)


def thrift1_put(conn: happybase.Connection, table: str, cells: int, batch: int) -> int:
    rows = cells // COLUMNS_PER_ROW
    with conn.table(table).batch(batch_size=max(batch // COLUMNS_PER_ROW, 1)) as b:
        for i in range(rows):
            b.put(b"row%08d" % i, {b"f:c%d" % c: b"value-%d" % i
                                   for c in range(COLUMNS_PER_ROW)})
    return rows * COLUMNS_PER_ROW


def thrift2_put(client: Thrift2Client, table: str, cells: int, batch: int) -> int:
    out: list[Cell] = []
    for i in range(cells // COLUMNS_PER_ROW):
        for c in range(COLUMNS_PER_ROW):
            out.append(Cell(b"row%08d" % i, b"f", b"c%d" % c, 1, CellType.PUT, b"value-%d" % i))
        if len(out) >= batch:
            client.put_cells(table, out)
            out = []
    client.put_cells(table, out)
    return cells // COLUMNS_PER_ROW * COLUMNS_PER_ROW


def thrift1_scan(conn: happybase.Connection, table: str, batch: int) -> int:
    rows = max(batch // COLUMNS_PER_ROW, 1)
    return sum(len(data) for _, data in conn.table(table).scan(batch_size=rows))


def thrift2_scan(client: Thrift2Client, table: str, batch: int) -> int:
    rows = max(batch // COLUMNS_PER_ROW, 1)
    return sum(len(r) for r in client.scan(table, max_versions=1, rows_per_call=rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=20_000)
    parser.add_argument("--batches", default="100,1000,5000")
    parser.add_argument("--transport", default="buffered")
    parser.add_argument("--protocol", default="binary")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data_dir:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hbase_migrate", "minicluster", "start", "--dir", data_dir,
             "--transport", args.transport, "--protocol", args.protocol],
            stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            info = json.loads(proc.stdout.readline())
            run(info, args)
        finally:
            proc.terminate()
            proc.wait(30)


def run(info: dict[str, str], args: argparse.Namespace) -> None:
    host, port = info["thrift"].split(":")
    conn = happybase.Connection(host, int(port), transport=args.transport,
                                protocol=args.protocol)
    client = Thrift2Client(info["thrift2"], args.transport, args.protocol)
    print(f"minicluster {info['thrift']} / {info['thrift2']} ({args.transport}/{args.protocol}),"
          f" {args.cells} cells per run, {COLUMNS_PER_ROW} columns per row")
    print(f"{'batch (cells)':>13} | {'T1 put c/s':>11} {'T2 put c/s':>11} {'T2/T1':>6} | "
          f"{'T1 scan c/s':>11} {'T2 scan c/s':>11} {'T2/T1':>6}")
    for batch in (int(b) for b in args.batches.split(",")):
        t1_table, t2_table = f"bench_t1_{batch}", f"bench_t2_{batch}"
        for table in (t1_table, t2_table):
            client.create_table(TableDescriptor(table, (FamilyDescriptor(b"f"),)))
        put1 = timed(lambda t=t1_table, b=batch: thrift1_put(conn, t, args.cells, b))
        put2 = timed(lambda t=t2_table, b=batch: thrift2_put(client, t, args.cells, b))
        scan1 = timed(lambda t=t1_table, b=batch: thrift1_scan(conn, t, b))
        scan2 = timed(lambda t=t2_table, b=batch: thrift2_scan(client, t, b))
        print(f"{batch:>13} | {put1:>11,.0f} {put2:>11,.0f} {put2 / put1:>6.2f} | "
              f"{scan1:>11,.0f} {scan2:>11,.0f} {scan2 / scan1:>6.2f}")
    conn.close()
    client.close()


if __name__ == "__main__":
    main()
