"""Building blocks of the run tests: a synthetic HBase root (WALs/<server>/, -splitting/,
oldWALs/) written with the project's WAL writer, a migration config over it, and the
source/target clusters given the same cells. Its one test checks the tree is what the WAL
stores list."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.storage.walstore import LocalWalStore
from hbase_migrate.wal.model import Cell, CellType, WalKey
from hbase_migrate.wal.names import ServerName, server_dir_name, wal_file_name
from hbase_migrate.wal.reader import WalReader
from hbase_migrate.wal.writer import WalOptions, write_wal
from tests.replay.conftest import REGION, T

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


def test_the_tree_is_what_the_store_lists(tmp_path: Path) -> None:
    root = HBaseRoot(tmp_path / "hbase")
    a = root.write(RS1, T, "t", puts("a", 0, 2))
    b = root.write(RS1, T + 10, "t", puts("b", 0, 2), state="live", trailer=False)
    c = root.write(RS2, T + 20, "t", puts("c", 0, 2), state="splitting")
    listed = {f.path: (f.state, f.server, f.timestamp)
              for f in LocalWalStore(root.root).list_wal_files()}
    assert listed == {str(a): ("archived", str(RS1), T), str(b): ("live", str(RS1), T + 10),
                      str(c): ("splitting", str(RS2), T + 20)}
