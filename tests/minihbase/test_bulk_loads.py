"""The embedded target's stand-in bulk load (:mod:`minihbase.bulk_loads`) refuses a staged
HFile holding a row outside the region named, as a region server does (HBase's
``HRegion.bulkLoadHFiles`` through ``HStore.assertBulkLoadHFileOk``: a file whose first or
last row lies outside the region throws ``WrongRegionException``, and the region loads none
of the files): the load answers False, counts the file refused, stores nothing and leaves
the file staged. A file whose rows all lie inside is loaded and leaves the staging.

The files are written with the project's HFile writer; the target is read back through the
product's client of it, and the expected cells are the ones the test wrote."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hbase_migrate.cluster.client import Client
from hbase_migrate.cluster.descriptors import FamilyDescriptor, RegionDescriptor, TableDescriptor
from hbase_migrate.hbase.connect import connect
from hbase_migrate.hfile.metadata import bulk_load_metadata
from hbase_migrate.hfile.writer import HFileWriter
from hbase_migrate.wal.model import Cell, CellType, cell_order
from minihbase.bulk_loads import BulkLoads
from minihbase.server import MiniHBase
from tests.support.local_staging import LocalStaging
from tests.support.minicluster import EmbeddedClusters

pytestmark = pytest.mark.integration

TABLE = "loads"
FAMILY = b"d"
SPLITS = [b"g", b"p"]  # the middle region, the one loaded: [g, p)
T = int(time.time() * 1000) - 60_000


def cells_of(rows: list[bytes]) -> list[Cell]:
    """Two columns a row, in HBase's order, values naming their row and column."""
    cells = [
        Cell(row, FAMILY, q, T, CellType.PUT, b"%s/%s" % (row, q))
        for row in rows
        for q in (b"a", b"b")
    ]
    return sorted(cells, key=cell_order)


def stage(loads: BulkLoads, staging: LocalStaging, cells: list[Cell]) -> tuple[str, str, Path]:
    """One HFile of ``cells`` staged under a new bulk token: the token, the file's staged
    path and where it is on local disk."""
    token = loads.prepare(TABLE)
    path = f"{token}/{FAMILY.decode()}/hfile-1"
    local = staging.at(path)
    local.parent.mkdir(parents=True)
    with HFileWriter(local) as writer:
        for cell in cells:
            writer.append(cell)
        writer.close(bulk_load_metadata("test"))
    return token, path, local


def target_cells(client: Client) -> list[tuple[bytes, bytes, bytes, int, bytes]]:
    return [
        (c.row, c.family, c.qualifier, c.timestamp, c.value)
        for piece in client.scan(TABLE)
        for c in piece
    ]


def middle_region(client: Client) -> RegionDescriptor:
    region = client.region_for(TABLE, SPLITS[0])
    assert (region.start_key, region.end_key) == (SPLITS[0], SPLITS[1])
    return region


@pytest.fixture
def target(make_embedded: EmbeddedClusters) -> MiniHBase:
    cluster = make_embedded("target")
    assert cluster.region_servers is not None
    with connect(cluster.endpoints) as client:
        client.create_table(TableDescriptor(TABLE, (FamilyDescriptor(FAMILY),)), SPLITS)
    return cluster


@pytest.mark.parametrize("outside", [b"f\xff", b"p"], ids=["before-start", "at-end-key"])
def test_a_file_holding_a_row_outside_the_region_is_refused_and_stays_staged(
    tmp_path: Path, target: MiniHBase, outside: bytes
) -> None:
    staging = LocalStaging(tmp_path / "hdfs")
    with connect(target.endpoints) as client:
        loads = BulkLoads(client, staging, target.region_servers)
        region = middle_region(client)
        assert not region.contains(outside)
        token, path, local = stage(loads, staging, cells_of([b"g", b"k", outside]))

        loaded = loads.load(TABLE, region, [(FAMILY, path)], token)

        assert loaded is False
        assert loads.refused == 1
        assert loads.loaded == []
        assert target_cells(client) == []  # neither the row inside nor the one outside
        assert local.is_file()


def test_a_file_whose_rows_all_lie_inside_the_region_is_loaded_and_leaves_the_staging(
    tmp_path: Path, target: MiniHBase
) -> None:
    staging = LocalStaging(tmp_path / "hdfs")
    cells = cells_of([b"g", b"k", b"o\xff"])  # the start key itself and the last row before p
    with connect(target.endpoints) as client:
        loads = BulkLoads(client, staging, target.region_servers)
        region = middle_region(client)
        token, path, local = stage(loads, staging, cells)

        loaded = loads.load(TABLE, region, [(FAMILY, path)], token)

        assert loaded is True
        assert loads.refused == 0
        assert target_cells(client) == [
            (c.row, c.family, c.qualifier, c.timestamp, c.value) for c in cells
        ]
        assert not local.exists()
