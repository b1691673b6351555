"""A catch-up over many small WAL files served by WebHDFS: listing and planning time per
file, and the WebHDFS requests per file, of a dry run and of a real run into a target.

Usage: ``python bench/catchup_listing.py [--files 300] [--quick]``

Builds an HBase root of ``--files`` small WAL files (three servers, each with archived files
in ``oldWALs/`` and one live file), serves it with the embedded WebHDFS, starts an embedded
target cluster, and prints for a dry run (list + plan) and for a catch-up run (list, plan,
replay every file, record the ledger): wall-clock seconds, milliseconds per file and the
WebHDFS requests by operation, per file. Asserts nothing.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.config import load_config
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.run import run_replay
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType, WalKey
from hbase_migrate.wal.names import ServerName, server_dir_name, wal_file_name
from hbase_migrate.wal.writer import WalOptions, write_wal
from minihbase.server import MiniHBase
from minihbase.webhdfs import WebHdfsServer

TABLE = "events"
REGION = b"0123456789abcdef0123456789abcdef"


def build_root(root: Path, files: int, now: int) -> None:
    """``files`` WAL files of 20 one-cell entries each, a minute apart per server."""
    servers = [ServerName(f"rs{i}.example.com", 16020, now - 86_400_000 + i) for i in range(3)]
    per_server = -(-files // len(servers))
    made = 0
    for server in servers:
        for k in range(per_server):
            if made == files:
                return
            created = now - (per_server - k) * 60_000
            live = k == per_server - 1
            folder = root / ("WALs/" + server_dir_name(server) if live else "oldWALs")
            folder.mkdir(parents=True, exist_ok=True)
            entries = [(WalKey(REGION, TABLE.encode(), k * 100 + i + 1, created + i),
                        [Cell(b"row-%d-%05d" % (made, i), b"d", b"q", created + i,
                              CellType.PUT, b"value-%d" % i)])
                       for i in range(20)]
            write_wal(folder / wal_file_name(server, created), entries, WalOptions(),
                      trailer=not live)
            made += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="30 files")
    args = parser.parse_args()
    files = 30 if args.quick else args.files
    now = int(time.time() * 1000)
    with tempfile.TemporaryDirectory(prefix="catchup-bench-") as tmp:
        folder = Path(tmp)
        build_root(folder / "hbase", files, now)
        with WebHdfsServer(folder / "hbase", hbase_root="/hbase") as hdfs, \
                MiniHBase(folder / "target", "target") as target:
            with Thrift2Client(target.endpoints.thrift2 or "") as client:
                client.create_table(TableDescriptor(TABLE, (FamilyDescriptor(b"d"),)))
            config = folder / "migration.toml"
            config.write_text(
                f'[migration]\nname = "bench"\nledger = "sqlite:///{folder}/ledger.db"\n'
                f'[source]\nthrift = "localhost:1"\nwebhdfs = "{hdfs.url}"\n'
                f'hbase_root = "/hbase"\n[target]\nthrift = "{target.endpoints.thrift}"\n'
                f'thrift2 = "{target.endpoints.thrift2}"\n[[tables]]\nsource = "{TABLE}"\n'
                '[replay]\nroll_period = "1h"\nmargin = "5m"\n', encoding="utf-8")
            spec = load_config(config)
            start = now - 2 * 86_400_000
            print(f"{files} WAL files of 20 entries, served by the embedded WebHDFS")
            print(f"{'run':<22}{'seconds':>9}{'ms/file':>9}   WebHDFS requests per file")
            for label, dry in (("dry run (list+plan)", True), ("catch-up run", False)):
                job = ReplayJob.from_spec(spec, start=start, dry_run=dry)
                hdfs.requests.clear()
                t0 = time.perf_counter()
                summary = run_replay(job)
                secs = time.perf_counter() - t0
                calls = ", ".join(f"{op} {n / files:.2f}" for op, n in
                                  sorted(hdfs.requests.items()))
                print(f"{label:<22}{secs:>9.2f}{secs * 1000 / files:>9.1f}   {calls}"
                      f"   (exit {summary.exit_code}, {len(summary.outcomes)} files read)")


if __name__ == "__main__":
    main()
