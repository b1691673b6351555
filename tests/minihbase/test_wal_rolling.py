"""Rolling by size and by period, archiving to oldWALs, the log cleaner and pinning by a
replication queue, restarts."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor
from hbase_migrate.wal import markers as mk
from hbase_migrate.wal.model import CellType
from hbase_migrate.wal.names import name_timestamp, parse_wal_path
from minihbase.model import ClientCell, Mutation
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from tests.support.minicluster import EmbeddedClusters

from .walutil import all_entries, entries_of, markers_of

pytestmark = pytest.mark.integration

TRAILER = bytes(4) + b"LAWP"


def put(mini: MiniHBase, table: str, row: bytes, size: int = 100) -> None:
    assert mini.cluster is not None
    mini.cluster.mutate(table, [Mutation(row, (ClientCell(b"f", b"q", 1, CellType.PUT,
                                                          b"x" * size),))])


def server_files(root: Path, server: str) -> list[Path]:
    """Every file of one server, live and archived, in name order."""
    files = [*root.glob("WALs/*/*"), *root.glob("oldWALs/*")]
    return sorted((p for p in files if str(parse_wal_path(p.name).server) == server),
                  key=lambda p: name_timestamp(p.name) or 0)


def test_roll_by_size_names_trailers_and_flush_markers(
        make_embedded: EmbeddedClusters) -> None:
    settings = WalSettings(region_servers=1, roll_size=2048, roll_period=3600)
    mini = make_embedded(wal=settings)
    assert mini.cluster is not None and mini.region_servers is not None
    mini.cluster.create_table("t", [FamilyDescriptor(b"f")])
    for i in range(60):
        put(mini, "t", b"r%03d" % i)
    root = mini.hbase_root_dir
    server = str(mini.region_servers.servers[0].name)
    files = server_files(root, server)
    stamps = [name_timestamp(p.name) for p in files]
    assert len(files) >= 3 and stamps == sorted(set(stamps))  # strictly increasing
    live = root / "WALs" / server
    assert [p.parent for p in files[-1:]] == [live]
    for p in files[:-1]:
        assert p.parent == root / "oldWALs"
        data = p.read_bytes()
        assert data.endswith(TRAILER) and len(data) >= 2048
        assert p.name.startswith(server.replace(",", "%2C") + ".")
    # each rolled file's region is flushed (START, COMMIT) at the start of the next one
    region = mini.cluster.regions("t")[0].encoded_name.encode()
    for p in files[1:]:
        flushes = [m for _, _, m in markers_of((p, e) for e in entries_of(p)[:2])]
        assert [(m.action, m.encoded_region_name) for m in flushes] == [
            (mk.START_FLUSH, region), (mk.COMMIT_FLUSH, region)]


def test_roll_by_period_and_fresh_mtime(make_embedded: EmbeddedClusters) -> None:
    settings = WalSettings(region_servers=2, roll_period=0.3, cleaner_interval=3600)
    started = time.time()
    mini = make_embedded(wal=settings)
    assert mini.region_servers is not None
    first = {str(s.name): s.wal.name for s in mini.region_servers.servers if s.wal}
    time.sleep(1.0)
    root = mini.hbase_root_dir
    for server, name in first.items():
        files = server_files(root, server)
        assert len(files) >= 3
        stamps = [name_timestamp(p.name) or 0 for p in files]
        assert stamps == sorted(set(stamps))
        archived = root / "oldWALs" / name
        assert archived.exists()
        # archived by rename, mtime set at archive time (after the creation time)
        assert os.stat(archived).st_mtime * 1000 >= (name_timestamp(name) or 0) + 300
        assert os.stat(archived).st_mtime >= started


def test_cleaner_deletes_only_expired_unpinned(make_embedded: EmbeddedClusters) -> None:
    settings = WalSettings(region_servers=1, roll_period=3600, archive_ttl=60,
                           cleaner_interval=3600)
    mini = make_embedded(wal=settings, replication_peer="1")
    rs = mini.region_servers
    assert rs is not None and rs.replication is not None and mini.cluster is not None
    mini.cluster.create_table("t", [FamilyDescriptor(b"f")])
    put(mini, "t", b"a")
    expired, = rs.roll()  # peer enabled: shipped and dropped from the queue
    rs.replication.set_enabled(False)
    put(mini, "t", b"b")
    pinned, = rs.roll()  # peer disabled: stays queued
    put(mini, "t", b"c")
    fresh, = rs.roll()
    old_wals = mini.hbase_root_dir / "oldWALs"
    past = time.time() - 120
    for name in (expired, pinned):
        os.utime(old_wals / name, (past, past))
    assert pinned in rs.replication.pinned() and expired not in rs.replication.pinned()
    assert rs.clean() == [expired]
    assert sorted(p.name for p in old_wals.iterdir()) == sorted([pinned, fresh])
    rs.replication.set_enabled(True)  # ships what waited: nothing pins any more
    assert rs.clean() == [pinned]
    assert [p.name for p in old_wals.iterdir()] == [fresh]


def test_cleaner_thread_honours_ttl(make_embedded: EmbeddedClusters) -> None:
    settings = WalSettings(region_servers=1, roll_period=3600, archive_ttl=0.4,
                           cleaner_interval=0.1)
    mini = make_embedded(wal=settings)
    assert mini.region_servers is not None
    name, = mini.region_servers.roll()
    archived = mini.hbase_root_dir / "oldWALs" / name
    assert archived.exists()
    deadline = time.monotonic() + 5
    while archived.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not archived.exists()


def test_a_switched_off_cleaner_keeps_expired_files_until_switched_on(
        make_embedded: EmbeddedClusters) -> None:
    settings = WalSettings(region_servers=1, roll_period=3600, archive_ttl=0.2,
                           cleaner_interval=0.05)
    mini = make_embedded(wal=settings)
    rs = mini.region_servers
    assert rs is not None
    assert rs.cleaner_switch(False) is True
    name, = rs.roll()
    archived = mini.hbase_root_dir / "oldWALs" / name
    past = time.time() - 60
    os.utime(archived, (past, past))
    time.sleep(1.0)  # twenty cleaner intervals
    assert archived.exists()
    assert rs.cleaner_switch(True) is False
    deadline = time.monotonic() + 10
    while archived.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not archived.exists()


def slots(mini: MiniHBase) -> dict[str, int]:
    """Each region of table t and the slot of the server holding it."""
    assert mini.cluster is not None and mini.region_servers is not None
    by_port = {s.name.port: s.slot for s in mini.region_servers.servers}
    return {r.encoded_name: by_port[r.server_port] for r in mini.cluster.regions("t")}


def test_restart_keeps_sequence_ids_and_old_files(make_embedded: EmbeddedClusters) -> None:
    settings = WalSettings(region_servers=2, roll_period=3600)
    mini = make_embedded(wal=settings)
    assert mini.cluster is not None and mini.region_servers is not None
    mini.cluster.create_table("t", [FamilyDescriptor(b"f")], [b"m"])
    for row in (b"a", b"n", b"b", b"z"):
        put(mini, "t", row)
    before = mini.region_servers.sequence_ids()
    names_before = [str(s.name) for s in mini.region_servers.servers]
    assignment = slots(mini)
    mini.stop()
    root = mini.hbase_root_dir
    old_files = sorted(p.name for p in root.glob("oldWALs/*"))
    assert old_files and not list(root.glob("WALs/*"))  # a clean stop archives everything
    time.sleep(0.01)
    again = mini.start()  # the same cluster, restarted
    assert again.cluster is not None and again.region_servers is not None
    assert [str(s.name) for s in again.region_servers.servers] != names_before
    assert slots(again) == assignment  # each region on its slot again (new ports)
    for row in (b"c", b"o"):
        put(again, "t", row)
    assert sorted(p.name for p in root.glob("oldWALs/*")) == old_files
    seqs: dict[bytes, list[int]] = {}
    for _, e in sorted(all_entries(root), key=lambda pe: name_timestamp(pe[0].name) or 0):
        seqs.setdefault(e.key.encoded_region_name, []).append(e.key.sequence)
    for region, last in before.items():
        ids = seqs[region.encode()]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
        assert max(ids) > last
