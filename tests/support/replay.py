"""Building blocks of the replay tests: WAL entries and files written with the project's
WAL writer, a synthetic HBase root (WALs/<server>/, -splitting/, oldWALs/) and a migration
config over it, and Thrift clients of a source and a target embedded cluster."""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import WalStatus
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.config import load_config
from hbase_migrate.replay.discovery import SOURCE
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.thrift.thrift1 import Thrift1Client
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType, WalKey
from hbase_migrate.wal.names import ServerName, server_dir_name, wal_file_name
from hbase_migrate.wal.reader import WalReader
from hbase_migrate.wal.writer import WalOptions, write_wal
from minihbase.server import MiniHBase
from tests.support.oracle import compare_stored

T = int(time.time() * 1000) - 3_600_000  # an hour ago: timestamps well inside any TTL
FAMILIES = (FamilyDescriptor(b"d", max_versions=3), FamilyDescriptor(b"m", max_versions=1))
REGION = b"0123456789abcdef0123456789abcdef"


class Clusters:
    """Thrift clients of a source and a target cluster (and the clusters)."""

    def __init__(self, src: MiniHBase, dst: MiniHBase) -> None:
        assert src.endpoints.thrift2 and dst.endpoints.thrift2
        self.src = Thrift2Client(src.endpoints.thrift2)
        self.dst = Thrift2Client(dst.endpoints.thrift2)
        self.dst1 = Thrift1Client(dst.endpoints.thrift)
        self.dst_endpoints = dst.endpoints
        self.source, self.target = src, dst  # for the judge, which reads their stores

    def close(self) -> None:
        self.src.close()
        self.dst.close()
        self.dst1.close()

    def create(self, table: str, families: Sequence[FamilyDescriptor] = FAMILIES, *,
               source: bool = True, target: bool = True) -> None:
        for side, client in ((source, self.src), (target, self.dst)):
            if side:
                client.create_table(TableDescriptor(table, tuple(families)))


def entries_for(table: str, calls: Sequence[Sequence[Cell]], *, first_sequence: int = 1,
                write_time: int = T) -> list[tuple[WalKey, Sequence[Cell]]]:
    """One WAL entry per client call, sequence ids and write times increasing."""
    return [(WalKey(REGION, table.encode(), first_sequence + i, write_time + i), cells)
            for i, cells in enumerate(calls)]


def make_wal(path: Path, entries: Sequence[tuple[WalKey, Sequence[Cell]]],
             options: WalOptions | None = None, *, trailer: bool = True) -> Path:
    write_wal(path, entries, options or WalOptions(), trailer=trailer)
    return path


def scan_all(client: Thrift2Client, table: str) -> list[tuple[bytes, bytes, bytes, int, bytes]]:
    """Every visible version, sorted."""
    return sorted((c.row, c.family, c.qualifier, c.timestamp, c.value)
                  for row in client.scan(table) for c in row)


# Servers started after the runs' catch-up start (T - 1 min): every file they wrote is in
# each test's tree, so the WAL coverage check has nothing to miss before their first file.
RS1 = ServerName("rs1.example.com", 16020, T - 30_000)
RS2 = ServerName("rs2.example.com", 16020, T - 30_000)

Calls = Sequence[Sequence[Cell]]


def puts(table_tag: str, first: int, n: int, *, family: bytes = b"d") -> list[list[Cell]]:
    """``n`` one-cell client calls with distinct rows, timestamps T+first.."""
    return [[Cell(f"{table_tag}-{first + i:04d}".encode(), family, b"q", T + first + i,
                  CellType.PUT, b"v%d" % (first + i))] for i in range(n)]


class HBaseRoot:
    """A folder shaped like an HBase root; files are written with :func:`write_wal`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def folder(self, server: ServerName, state: str) -> Path:
        if state == "archived":
            return self.root / "oldWALs"
        return self.root / "WALs" / server_dir_name(server, splitting=state == "splitting")

    def write(self, server: ServerName, created: int, table: str, calls: Calls, *,
              state: str = "archived", write_time: int | None = None, trailer: bool = True,
              options: WalOptions | None = None) -> Path:
        """A WAL of ``server`` created at ``created``: one entry per call, write times
        ``write_time`` (default ``created``) + i."""
        folder = self.folder(server, state)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / wal_file_name(server, created)
        wt = created if write_time is None else write_time
        entries = [(WalKey(REGION, table.encode(), i + 1, wt + i), cells)
                   for i, cells in enumerate(calls)]
        write_wal(path, entries, options or WalOptions(), trailer=trailer)
        return path

    def archive(self, live: Path) -> Path:
        """Move a live file to oldWALs/, as the region server does when it rolls."""
        target = self.root / "oldWALs" / live.name
        target.parent.mkdir(exist_ok=True)
        shutil.move(live, target)
        return target


def entry_offsets(path: Path) -> list[tuple[int, int]]:
    with WalReader(path) as reader:
        return [(e.offset, e.size) for e in reader]


def corrupt_entry(path: Path, index: int) -> int:
    """Overwrite the length prefix of entry ``index``; returns its byte offset."""
    offset, _ = entry_offsets(path)[index]
    data = bytearray(path.read_bytes())
    data[offset:offset + 6] = b"\xff" * 6
    path.write_bytes(bytes(data))
    return offset


def write_config(folder: Path, *, source: ClusterEndpoints, target: ClusterEndpoints,
                 tables: Sequence[str], name: str = "orders", extra: str = "") -> Path:
    """A migration config with explicit endpoints and a SQLite ledger in ``folder``."""
    def section(role: str, ep: ClusterEndpoints) -> str:
        keys = ("thrift", "thrift2", "webhdfs", "zookeeper", "znode_parent", "hbase_root")
        values = {k: getattr(ep, k) for k in keys if getattr(ep, k)}
        return f"[{role}]\n" + "".join(f'{k} = "{v}"\n' for k, v in values.items())

    text = (f'[migration]\nname = "{name}"\nledger = "sqlite:///{folder / "ledger.db"}"\n'
            + section("source", source) + section("target", target)
            + "".join(f'[[tables]]\nsource = "{t}"\n' for t in tables)
            # nothing deletes these hand-written WALs: the archive keeps them for days
            + '[replay]\nroll_period = "1h"\nmargin = "5m"\narchive_ttl = "2d"\n' + extra)
    path = folder / "migration.toml"
    path.write_text(text, encoding="utf-8")
    return path


def source_endpoints(thrift: str, *, root: Path | None = None, webhdfs: str | None = None,
                     zookeeper: str | None = None) -> ClusterEndpoints:
    return ClusterEndpoints(name="source", thrift=thrift, webhdfs=webhdfs,
                            zookeeper=zookeeper,
                            hbase_root="/hbase" if webhdfs else str(root) if root else None)


START = T - 60_000  # the catch-up start (watermark less margin)


class Setup:
    """A table on both clusters, an HBase root, a config and a job over them."""

    def __init__(self, clusters: Clusters, table: str, folder: Path,
                 webhdfs: str | None = None) -> None:
        self.clusters, self.table = clusters, table
        clusters.create(table)
        self.root = HBaseRoot(folder / "hbase")
        source = source_endpoints("localhost:9090", root=self.root.root, webhdfs=webhdfs)
        self.config = write_config(folder, source=source, target=clusters.dst_endpoints,
                                   tables=[table])
        self.spec = load_config(self.config)
        self.job = ReplayJob.from_spec(self.spec, start=START)

    def source_writes(self, calls: Sequence[Sequence[Cell]]) -> None:
        for cells in calls:
            self.clusters.src.write_cells(self.table, cells)

    def equal(self) -> bool:
        """Whether the target holds what the source does, read from their stores."""
        return compare_stored(self.clusters.source, self.clusters.target, self.table).equal

    def rows(self) -> dict[str, tuple[WalStatus, int, int]]:
        """Ledger rows by file name: (status, offset reached, entries)."""
        with Ledger.open(self.spec.ledger_url) as ledger:
            migration = ledger.migration(self.spec.name)
            assert migration is not None
            return {r.path.rsplit("/", 1)[-1]: (r.status, r.offset_reached, r.entries)
                    for r in ledger.wal_files(migration.id, SOURCE)}
