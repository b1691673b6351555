"""Kerberos (GSSAPI) against a delegation token (DIGEST-MD5) on HBase's RPC, on a secured real
HBase 2.6.1 (``realstack``, its own KDC, ``hbase.rpc.protection`` as asked): the time to open
and authenticate a connection to the region server holding ``hbase:meta`` (median of
``--connects``), and writes and scans of ``--cells`` cells, each side at the same protection.
The two scans are compared cell for cell.

    .venv/bin/python bench/tokens.py [--cells 100000] [--connects 20] [--protection privacy]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import replace

from hbase_migrate.cluster.auth.tokens import Token, forget_tokens, use_token
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints, load_cluster_json
from hbase_migrate.cluster.sizing import ClientSettings
from hbase_migrate.hbase.connect import connect
from hbase_migrate.rpc.cluster import NativeCluster
from hbase_migrate.rpc.connection import Connection
from hbase_migrate.rpc.tokens import obtain_token, who_am_i
from hbase_migrate.wal.model import Cell, CellType
from realstack.hbase import RealHBase, RealHBaseOptions


def cells(count: int) -> list[Cell]:
    return [Cell(b"r%08d" % i, b"f", b"q", 1, CellType.PUT, b"v" * 100) for i in range(count)]


def connect_time(endpoints: ClusterEndpoints, rounds: int) -> float:
    """Median seconds to open and authenticate one connection to meta's server."""
    with connect(endpoints, ClientSettings()) as native:
        assert isinstance(native, NativeCluster)
        host, port = native.data.locator.meta_server()
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        Connection(host, port, security=endpoints.security, cluster=endpoints.name).close()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def data_path(endpoints: ClusterEndpoints, table: str, data: list[Cell]
              ) -> tuple[float, float, str]:
    """Seconds to write and to scan ``data``, and how the server says it authenticated us."""
    with connect(endpoints, ClientSettings()) as native:
        assert isinstance(native, NativeCluster)
        native.create_table(TableDescriptor(table, (FamilyDescriptor(b"f"),)))
        began = time.perf_counter()
        native.write_cells(table, data)
        wrote = time.perf_counter() - began
        began = time.perf_counter()
        read = [c for piece in native.scan(table) for c in piece]
        scanned = time.perf_counter() - began
        method = who_am_i(native)[1]
    assert read == data, f"{table}: the scan differs from what was written"
    return wrote, scanned, method


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, default=100_000)
    parser.add_argument("--connects", type=int, default=20)
    parser.add_argument("--protection", default="privacy")
    args = parser.parse_args()
    data = cells(args.cells)
    with tempfile.TemporaryDirectory() as folder, RealHBase(folder, RealHBaseOptions(
            region_servers=1, heap="1g", kerberos=True, rpc_protection=args.protection,
            name="bench")) as stack:
        endpoints = replace(load_cluster_json(stack.cluster_json), client="native")
        with connect(endpoints, ClientSettings()) as native:
            assert isinstance(native, NativeCluster)
            token: Token | None = obtain_token(native, endpoints.name)
        assert token is not None
        results = {}
        for side in ("kerberos", "token"):
            if side == "token":
                use_token(token)
            results[side] = (connect_time(endpoints, args.connects) * 1000,
                             *data_path(endpoints, f"bench_{side}", data))
            forget_tokens()
        print(f"{args.cells} cells of 100 B at {args.protection}, one region server")
        for side, (ms, wrote, scanned, method) in results.items():
            print(f"  {side:8} ({method}): connect {ms:.1f} ms (median of {args.connects}), "
                  f"write {args.cells / wrote:,.0f} cells/s, scan {args.cells / scanned:,.0f} "
                  "cells/s")


if __name__ == "__main__":
    main()
