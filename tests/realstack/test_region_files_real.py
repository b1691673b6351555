"""A real HBase 2.6.1 table's regions read from their store files alone (our HFile reader, the
merge and the scan rules of ``hbase_migrate/hfile/``) equal what HBase's own scans return
over its RPC: two regions, two flushed files per store, deletes of each type hiding cells of
the older file, a cell written again at its timestamp, more versions than a family keeps, a
family TTL with MIN_VERSIONS, and KEEP_DELETED_CELLS under a time range. After a split and
a snapshot, the range digests computed from the snapshot's files (``validate --from
snapshot``'s source side), over WebHDFS and from the DataNodes, equal the live scans', and
the table's regions count no read request meanwhile. About a minute on the session's stack."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from hbase_migrate.cluster.client import Client
from hbase_migrate.cluster.descriptors import ALL_VERSIONS, FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints, load_cluster_json
from hbase_migrate.cluster.storage.hdfs_files import HdfsRoot
from hbase_migrate.hbase.connect import connect
from hbase_migrate.hfile.region import region_cells
from hbase_migrate.hfile.visible import ScanSpec
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.stats import range_stats
from hbase_migrate.rpc.admin_channel import NativeAdminChannel
from hbase_migrate.snapshot.export import ExportFile, locate
from hbase_migrate.snapshot.manifest import SnapshotRegion
from hbase_migrate.snapshot.read import snapshot_range_stats, snapshot_regions
from hbase_migrate.wal.model import Cell, CellType
from minihbase.cli.minicluster import call_admin
from realstack.hbase import RealHBase

from .fixtures import native_cluster_json

pytestmark = [pytest.mark.integration, pytest.mark.realstack]
TABLE = "region_files"
T0 = 1_700_000_000_000
TTL_S = 3600
EXPIRING_IN_MS = 15_000  # the expiring cells' life left when written: past their flush
PUT, DEL, DEL_COL = CellType.PUT, CellType.DELETE, CellType.DELETE_COLUMN
DEL_FAM, DEL_FAM_VER = CellType.DELETE_FAMILY, CellType.DELETE_FAMILY_VERSION
FAMILIES = (FamilyDescriptor(b"f", max_versions=3),
            FamilyDescriptor(b"g", max_versions=2, min_versions=1, ttl=TTL_S),
            FamilyDescriptor(b"k", max_versions=3, keep_deleted_cells="TRUE"))
Row = tuple[bytes, bytes, bytes, int, int, bytes]


def first_round(now: int) -> list[Cell]:
    expiring, alive = now - TTL_S * 1000 + EXPIRING_IN_MS, now - 10_000
    cells = []
    for row in (b"a1", b"a2", b"p1", b"p2"):
        cells += [Cell(row, b"f", b"q1", T0 + v, PUT, b"%s-q1-%d" % (row, v)) for v in (1, 2, 3)]
        cells += [Cell(row, b"f", b"q2", T0 + v, PUT, b"q2-%d" % v) for v in (1, 2)]
        cells += [Cell(row, b"f", b"q3", T0 + 5, PUT, b"q3"),
                  Cell(row, b"k", b"q1", T0 + 1, PUT, b"k1"),
                  Cell(row, b"k", b"q1", T0 + 2, PUT, b"k2"),
                  Cell(row, b"g", b"q1", expiring, PUT, b"g-old"),
                  Cell(row, b"g", b"q1", alive, PUT, b"g-alive"),
                  Cell(row, b"g", b"q2", expiring, PUT, b"g-only")]
    return cells


def second_round(now: int) -> list[Cell]:
    return [
        Cell(b"a1", b"f", b"q1", T0 + 2, DEL), Cell(b"a1", b"f", b"q1", T0 + 3, PUT, b"again"),
        Cell(b"a1", b"f", b"q2", T0 + 1, DEL_COL),
        Cell(b"a2", b"f", b"", T0 + 2, DEL_FAM), Cell(b"a2", b"f", b"q4", T0 + 1, PUT, b"late"),
        Cell(b"p1", b"f", b"", T0 + 2, DEL_FAM_VER), Cell(b"p1", b"f", b"q1", T0 + 4, PUT, b"4th"),
        Cell(b"p2", b"k", b"q1", T0 + 5, DEL_COL), Cell(b"p2", b"f", b"q3", T0 + 5, DEL),
        Cell(b"p2", b"g", b"q1", now, PUT, b"g-new"),
    ]


def rows(cells: Iterable[Cell]) -> list[Row]:
    return [(c.row, c.family, c.qualifier, c.timestamp, c.type, c.value) for c in cells]


def download(root: HdfsRoot, folder: Path) -> list[dict[bytes, list[Path]]]:
    """Each region's store files copied from HDFS: {family: [paths]} per region."""
    regions = []
    table = f"data/default/{TABLE}"
    for region in sorted(root.listing(table)):
        if region.startswith("."):
            continue
        stores: dict[bytes, list[Path]] = {}
        for family in (f.name.decode() for f in FAMILIES):
            for name in root.listing(f"{table}/{region}/{family}"):
                local = folder / region / family / name
                local.parent.mkdir(parents=True, exist_ok=True)
                with root.read(f"{table}/{region}/{family}/{name}") as chunks, \
                        local.open("wb") as out:
                    for chunk in chunks:
                        out.write(chunk)
                stores.setdefault(family.encode(), []).append(local)
        regions.append(stores)
    return regions


@dataclass
class Loaded:
    """The module's table, written, flushed twice and past its cells' TTL."""

    real: RealHBase
    endpoints: ClusterEndpoints
    client: Client
    regions: list[dict[bytes, list[Path]]]  # each region's store files, copied after the flushes
    now: int  # after the expiring cells expired


@pytest.fixture(scope="module")
def loaded(real_hbase: RealHBase, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Loaded]:
    folder = tmp_path_factory.mktemp("region-files")
    endpoints = load_cluster_json(native_cluster_json(real_hbase, folder))
    assert endpoints.webhdfs and endpoints.hbase_root
    with connect(endpoints) as client:
        if client.table_exists(TABLE):
            client.disable_table(TABLE)
            client.delete_table(TABLE)
        # no compaction: the flushed files stay, and so do a split's references
        client.create_table(TableDescriptor(TABLE, FAMILIES, ((b"COMPACTION_ENABLED", b"false"),)),
                            [b"m"])
        written = int(time.time() * 1000)
        client.write_cells(TABLE, first_round(written))
        call_admin(real_hbase.cluster_json, "flush", {"table": TABLE})
        client.write_cells(TABLE, second_round(written))
        call_admin(real_hbase.cluster_json, "flush", {"table": TABLE})
        regions = download(HdfsRoot(endpoints.webhdfs, endpoints.hbase_root, "source"),
                           folder / "files")
        time.sleep(max(0.0, (written + EXPIRING_IN_MS + 1000) / 1000 - time.time()))
        try:
            yield Loaded(real_hbase, endpoints, client, regions, int(time.time() * 1000))
        finally:
            client.disable_table(TABLE)
            client.delete_table(TABLE)


def reads(real: RealHBase, regions: list[SnapshotRegion]) -> int:
    """The read requests the table's regions have served (the region servers' counters)."""
    names = {r.encoded for r in regions}
    return sum(count for server in call_admin(real.cluster_json, "info")["servers"]
               for region, count in server["read_requests"].items() if region in names)


def test_store_files_read_as_hbase_scans_them(loaded: Loaded) -> None:
    assert len(loaded.regions) == 2
    assert all(len(stores[b"f"]) == 2 for stores in loaded.regions)  # both flushes, no compaction

    def ours(**scan: int) -> list[Row]:
        spec = ScanSpec(now_ms=loaded.now, **scan)
        each = [rows(region_cells(stores, FAMILIES, spec)) for stores in loaded.regions]
        # the folders come by encoded name: the regions in row order
        return [r for region in sorted(filter(None, each)) for r in region]

    def hbase(**scan: int) -> list[Row]:
        time_range = (scan["min_ts"], scan["max_ts"]) if "max_ts" in scan else None
        return rows(c for piece in loaded.client.scan(
            TABLE, max_versions=scan["max_versions"], time_range=time_range) for c in piece)

    for scan in ({"max_versions": ALL_VERSIONS}, {"max_versions": 1},
                 {"max_versions": ALL_VERSIONS, "min_ts": 0, "max_ts": T0 + 4}):
        assert ours(**scan) == hbase(**scan), scan
    every = ours(max_versions=ALL_VERSIONS)
    before = ours(max_versions=ALL_VERSIONS, min_ts=0, max_ts=T0 + 4)
    # what the cases must show, worked out by hand
    assert (b"a1", b"f", b"q1", T0 + 3, PUT, b"again") in every  # the newer file's cell
    assert not any(r[:3] == (b"a1", b"f", b"q2") and r[3] == T0 + 1 for r in every)
    assert [r[2] for r in every if r[:2] == (b"a2", b"f")] == [b"q1", b"q3"]
    assert [r[3] for r in every if r[:3] == (b"p1", b"f", b"q1")] == [T0 + 4, T0 + 3, T0 + 1]
    assert not any(r[:3] == (b"p2", b"k", b"q1") for r in every)
    assert [r[3] for r in before if r[:3] == (b"p2", b"k", b"q1")] == [T0 + 2, T0 + 1]
    assert [r[5] for r in every if r[:3] == (b"a1", b"g", b"q1")] == [b"g-alive"]
    assert [r[5] for r in every if r[:3] == (b"a1", b"g", b"q2")] == [b"g-only"]


class Taken:
    """A throttle that only counts the bytes it is told of."""

    def __init__(self) -> None:
        self.bytes = 0

    def take(self, cells: int, nbytes: int = 0) -> None:
        self.bytes += nbytes


def test_snapshot_digests_equal_the_live_scans(loaded: Loaded, tmp_path: Path) -> None:
    """Split (the daughters read the parent's files through references: no compaction),
    snapshot, and every range's digest from the snapshot's files equals the live scan's; a
    cell written after the snapshot changes the ranges holding it only."""
    endpoints, client = loaded.endpoints, loaded.client
    assert endpoints.webhdfs and endpoints.hbase_root and endpoints.zookeeper
    call_admin(loaded.real.cluster_json, "split", {"table": TABLE, "at": "a2"})
    admin = NativeAdminChannel("source", endpoints.zookeeper, endpoints.znode_parent)
    name = f"{TABLE}_snapshot"
    admin.snapshot(TABLE, name, 3600)
    try:
        root = HdfsRoot(endpoints.webhdfs, endpoints.hbase_root, "source")
        regions = snapshot_regions(root, name)
        assert [r.start for r in regions] == [b"", b"a2", b"m"]
        halves = [f.half for r in regions[:2] for _, files in r.stores for f in files]
        assert halves and all(h is not None and h.split_row == b"a2" for h in halves)
        assert {h.top for h in halves if h is not None} == {True, False}
        ranges = [KeyRange(TABLE), KeyRange(TABLE, b"a1", b"p2"), KeyRange(TABLE, b"p", b"")]
        now = int(time.time() * 1000)
        before = reads(loaded.real, regions)
        ours = [snapshot_range_stats(root, name, r, now, scratch=tmp_path)
                for r in ranges]
        # the same store files read from the DataNodes (HDFS's own protocols, no WebHDFS)
        assert endpoints.namenode
        direct = HdfsRoot(endpoints.webhdfs, endpoints.hbase_root, "source",
                          namenode=endpoints.namenode)
        assert direct.read_url("x").startswith("hdfs://")
        assert [snapshot_range_stats(direct, name, r, now, scratch=tmp_path)
                for r in ranges] == ours
        assert reads(loaded.real, regions) == before  # no read reached the region servers
        assert ours == [range_stats(client, r) for r in ranges]
        assert reads(loaded.real, regions) > before  # as a live scan's do
        assert ours[0].rows == 4 and ours[0].cells > 20
        # the store files are read where they are: every byte of them through the throttle,
        # nothing copied into the scratch folder
        taken = Taken()
        assert snapshot_range_stats(root, name, ranges[0], now, scratch=tmp_path,
                                    throttle=taken) == ours[0]  # type: ignore[arg-type]
        stored = {locate(root, ExportFile.of(name, f.file))[0]
                  for r in regions for _, files in r.stores for f in files}
        assert taken.bytes >= sum(root.status(p)["length"] for p in stored) > 0
        from_datanodes = Taken()
        assert snapshot_range_stats(direct, name, ranges[0], now, scratch=tmp_path,
                                    throttle=from_datanodes) == ours[0]  # type: ignore[arg-type]
        assert from_datanodes.bytes >= sum(root.status(p)["length"] for p in stored)
        assert not [p for p in tmp_path.rglob("*") if p.is_file()]
        client.write_cells(TABLE, [Cell(b"p2", b"f", b"q9", T0, PUT, b"after")])
        assert [a == range_stats(client, r) for a, r in zip(ours, ranges, strict=True)] == [
            False, True, False]
    finally:
        admin.delete(name)
