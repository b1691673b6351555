"""The WALs are the truth: everything acknowledged (except bulk loads and SKIP_WAL writes) is
in the WAL files the region servers wrote, and the tables rebuilt from those entries alone
equal what the cluster serves, cell for cell, every version, delete markers included."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal import markers as mk
from hbase_migrate.wal.messages import TableName
from hbase_migrate.wal.model import Cell, CellType, ScopeType
from hbase_migrate.wal.names import parse_wal_path
from hbase_migrate.wal.writer import WalOptions
from minihbase.model import ClientCell, Durability, Mutation
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from minihbase.workload import Workload, WorkloadSpec
from tests.support.minicluster import EmbeddedClusters

from .walutil import (
    all_entries,
    data_edits,
    markers_of,
    raw_cells,
    rebuild_into,
    scan_all_versions,
)

pytestmark = pytest.mark.integration

OPTIONS = {"plain": WalOptions(),
           "compressed": WalOptions(compression=True, tag_compression=True,
                                    value_compression="GZ")}


def run_workload(endpoints: ClusterEndpoints, table: str, seed: int, ops: int) -> None:
    runner = Workload(endpoints, WorkloadSpec(table=table, seed=seed, ops=ops))
    try:
        runner.ensure_table()
        runner.run()
    finally:
        runner.close()


def drive(mini: MiniHBase) -> dict[str, object]:
    """Every operation: workload phases, appends, a scoped table, SKIP_WAL, moves, rolls,
    flushes, two kills (one split finished), a bulk load."""
    rs, cluster, ep = mini.region_servers, mini.cluster, mini.endpoints
    assert rs is not None and cluster is not None
    run_workload(ep, "orders", 1, 250)
    cluster.create_table("scoped", [FamilyDescriptor(b"r", scope=1), FamilyDescriptor(b"l")])
    cluster.mutate("scoped", [Mutation(b"k1", (_put(b"r", 5),)),
                              Mutation(b"k2", (_put(b"l", 6),))])
    cluster.create_table("skipped", [FamilyDescriptor(b"f")])
    cluster.mutate("skipped", [Mutation(b"s", (_put(b"f", 7),), Durability.SKIP_WAL)])
    cluster.append("orders", b"row-00007", b"d", b"a", b"+tail")
    cluster.increment("orders", b"row-00014", b"m", b"counter", 5)
    first = cluster.regions("orders")[0]
    moved = rs.move(first.encoded_name)
    rs.roll()
    rs.flush("orders")
    run_workload(ep, "orders", 2, 200)
    killed = rs.kill(1)
    rs.finish_split()
    bulk = [Cell(b"bulk-%03d" % i, b"d", b"b", 5_000 + i, CellType.PUT, b"B%d" % i)
            for i in range(0, 40, 3)]
    loaded = rs.bulk_load("orders", bulk)
    run_workload(ep, "orders", 3, 150)
    dead = rs.kill(2)
    return {"moved": moved, "killed": killed, "dead": dead, "bulk": bulk, "loaded": loaded}


def _put(family: bytes, ts: int) -> ClientCell:
    return ClientCell(family, b"q", ts, CellType.PUT, b"v")


@pytest.mark.parametrize("variant", list(OPTIONS))
def test_wals_are_the_truth(make_embedded: EmbeddedClusters, variant: str) -> None:
    settings = WalSettings(region_servers=3, roll_size=8 * 1024, roll_period=0.4,
                           archive_ttl=3600, cleaner_interval=3600, split_delay=3600,
                           options=OPTIONS[variant])
    mini = make_embedded(wal=settings)
    facts = drive(mini)
    rs = mini.region_servers
    assert rs is not None
    root = mini.hbase_root_dir
    entries = list(all_entries(root))
    paths = {p for p, _ in entries}
    # live, archived and -splitting files were all read; rolls happened
    assert any(p.parent.name == "oldWALs" for p in paths)
    assert any(p.parent.name.endswith("-splitting") for p in paths)
    assert any(p.parent.parent.name == "WALs" and not p.parent.name.endswith("-splitting")
               for p in paths)
    assert rs.counters["rolls"] >= 4
    for p in paths:
        info = parse_wal_path(str(p.relative_to(root)))
        assert info.kind == "wal" and info.timestamp and info.server is not None
    check_keys(entries)
    check_markers(entries, facts)
    assert not any(e.key.table_name == b"skipped" for e in data_edits(entries))
    compare_rebuilt(make_embedded, mini, entries, facts)


def check_keys(entries: list) -> None:
    """Unique, per-file increasing sequence ids per region; scopes of non-local families;
    the compression header matches every file."""
    seen: set[tuple[bytes, int]] = set()
    last: dict[tuple[Path, bytes], int] = {}
    for path, e in entries:
        key = (e.key.encoded_region_name, e.key.sequence)
        assert key not in seen
        seen.add(key)
        prev = last.get((path, key[0]), 0)
        assert e.key.sequence > prev
        last[(path, key[0])] = e.key.sequence
        if e.key.table_name == b"scoped" and not mk.is_marker(e.cells[0]):
            assert e.key.scopes == ((b"r", ScopeType.GLOBAL),)
        elif e.key.table_name == b"orders":
            assert e.key.scopes == ()
    per_call = [e for _, e in entries if e.key.table_name == b"scoped"
                and not mk.is_marker(e.cells[0])]
    assert [len(e.cells) for e in per_call] == [2]  # one client call, one region: one entry


def check_markers(entries: list, facts: dict) -> None:
    found = markers_of(entries)
    moved = facts["moved"]
    events = [(m.event_type, m.server) for _, e, m in found
              if isinstance(m, mk.RegionEventDescriptor)
              and m.encoded_region_name.decode() == moved["region"]]
    as_text = [(t, str(s)) for t, s in events]
    assert (mk.REGION_CLOSE, moved["from"]) in as_text
    assert (mk.REGION_OPEN, moved["to"]) in as_text
    for region, server in facts["killed"]["reassigned"].items():
        assert any(m.encoded_region_name.decode() == region and m.event_type == mk.REGION_OPEN
                   and str(m.server) == server
                   for _, _, m in found if isinstance(m, mk.RegionEventDescriptor))
    flushes = [m for _, _, m in found if isinstance(m, mk.FlushDescriptor)]
    starts = {(m.encoded_region_name, m.flush_sequence_number) for m in flushes
              if m.action == mk.START_FLUSH}
    commits = {(m.encoded_region_name, m.flush_sequence_number) for m in flushes
               if m.action == mk.COMMIT_FLUSH}
    assert starts and starts == commits
    bulk = [(e, m) for _, e, m in found if isinstance(m, mk.BulkLoadDescriptor)]
    assert sorted(m.encoded_region_name.decode() for _, m in bulk) == sorted(
        x["region"] for x in facts["loaded"])
    for e, m in bulk:
        assert m.table_name == TableName(b"default", b"orders")
        assert [s.family_name for s in m.stores] == [b"d"]
        assert e.key.sequence == m.bulkload_seq_num


def compare_rebuilt(clusters: EmbeddedClusters, mini: MiniHBase, entries: list,
                    facts: dict) -> None:
    """Rebuild every table from the WAL entries (plus the bulk-loaded cells the markers
    name) in a fresh cluster; compare raw stores and Thrift2 scans of all versions."""
    assert mini.store is not None and mini.cluster is not None
    copy = clusters("rebuilt", wal=WalSettings(region_servers=1))
    assert copy.store is not None and copy.cluster is not None
    for info in mini.store.tables():
        if info.name == "skipped":
            continue
        splits = [r.start_key for r in info.regions[1:]]
        copy.cluster.create_table(info.name, info.descriptor.families, splits)
    rebuild_into(copy.store, data_edits(entries))
    with copy.store.batch() as batch:
        batch.write("orders", facts["bulk"])
    for table in ("orders", "scoped"):
        original = raw_cells(mini.store, table)
        assert raw_cells(copy.store, table) == original
        assert {c.type for c in original} >= ({4, 8, 10, 12, 14} if table == "orders"
                                              else {4})
        assert (scan_all_versions(copy.endpoints.thrift2, table)
                == scan_all_versions(mini.endpoints.thrift2, table))
    by_type: dict[int, int] = defaultdict(int)
    for e in data_edits(entries):
        for c in e.cells:
            by_type[c.type] += 1
    assert set(by_type) == {4, 8, 10, 12, 14}


def test_skip_wal_and_failed_append_store_nothing(make_embedded: EmbeddedClusters) -> None:
    """A WAL append that fails fails the call and stores nothing."""
    mini = make_embedded(wal=WalSettings(region_servers=2))
    assert mini.cluster is not None and mini.region_servers is not None
    mini.cluster.create_table("t", [FamilyDescriptor(b"f")])
    region = mini.cluster.regions("t")[0]
    server = mini.region_servers.server(f"{region.server_host},{region.server_port},"
                                        f"{region.server_start_code}")
    assert server.wal is not None
    server.wal.close(trailer=False)  # the next append fails
    with pytest.raises(OSError):
        mini.cluster.mutate("t", [Mutation(b"r", (_put(b"f", 1),))])
    with Thrift2Client(mini.endpoints.thrift2) as t2:
        assert list(t2.scan("t")) == []
    server.wal = None  # let the clean stop skip the broken server
    server.alive = False
