"""A window of WAL-like edits (``bulk_window.py``'s: puts around the copy's versions,
a key written twice, deletes of the four types) written as HFiles (``replay/bulkfiles.py``)
and bulk-loaded into a real cluster over HBase's RPC from Python (``replay/bulkload.py``: no
JVM tool), then read back by a raw scan. What the scan must return is derived here from the
cells alone: every cell, delete markers included, the last of a key written twice kept.
Shared by the 2.6.1 and 3.0.0-alpha-4 tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.hbase.bulk import BulkLoadCalls, open_bulk_load
from hbase_migrate.hbase.connect import connect
from hbase_migrate.replay.bulkfiles import BulkWindow
from hbase_migrate.replay.bulkload import BulkLoad, BulkLoadReport, WebHdfsStaging
from hbase_migrate.wal.model import Cell, cell_order
from stackprocs.admin_client import call_admin

from .bulk_window import SPLIT

LATER = b"r050"  # where the tables' first region splits after the files are written
# encodings, a Bloom filter each, GZ or none (HBase 3.0.0-alpha-4's release has no other
# codec); every version kept, so that a raw scan shows all that was loaded
FAMILIES = (
    FamilyDescriptor(b"f", max_versions=1000, compression="GZ", bloom_filter="ROW",
                     data_block_encoding="FAST_DIFF", block_size=2048),
    FamilyDescriptor(b"g", max_versions=1000, bloom_filter="ROWCOL",
                     data_block_encoding="ROW_INDEX_V1", block_size=1024),
)
KEY = tuple[bytes, bytes, bytes, int, int]


def expected_raw(before: list[Cell], entries: list[list[Cell]]) -> list[Cell]:
    """Every cell a raw scan must return, in HBase's order: for each key (row, family,
    qualifier, timestamp, type) the last written, the window's after those the table held
    before (a loaded file's cells win over the same keys written earlier)."""
    last: dict[KEY, Cell] = {}
    for cell in [*before, *(c for entry in entries for c in entry)]:
        last[(cell.row, cell.family, cell.qualifier, cell.timestamp, int(cell.type))] = cell
    return sorted(last.values(), key=cell_order)


@contextmanager
def fresh_table(endpoints: ClusterEndpoints, table: str,
                attributes: tuple[tuple[bytes, bytes], ...] = ()) -> Iterator[None]:
    """``table`` of two regions (with the table ``attributes`` given), created again;
    dropped after."""
    with connect(endpoints) as client:
        if client.table_exists(table):
            client.disable_table(table)
            client.delete_table(table)
        client.create_table(TableDescriptor(table, FAMILIES, attributes), [SPLIT])
        try:
            yield
        finally:
            client.disable_table(table)
            client.delete_table(table)


def split_first_region(cluster_json: Path, table: str) -> int:
    """Split the table's first region at :data:`LATER` (waited for); its region count."""
    return int(call_admin(cluster_json, "split", {"table": table, "at": LATER.decode()})
               ["regions"])


def write_window(endpoints: ClusterEndpoints, table: str, entries: list[list[Cell]],
                 folder: Path) -> list[tuple[bytes, Path]]:
    """The window's files, one per region (as the table's regions are now) and family."""
    with connect(endpoints) as client:
        window = BulkWindow(client.table_descriptor(table), client.regions(table))
    for entry in entries:
        window.add_cells(entry)
    return [(f.family, f.path) for f in window.write(folder, "bulk-rpc-test")]


def load(endpoints: ClusterEndpoints, table: str, files: list[tuple[bytes, Path]],
         seen_as: Callable[[BulkLoadCalls], BulkLoadCalls] = lambda calls: calls,
         rounds: int = 10) -> BulkLoadReport:
    """The files loaded over HBase's RPC, staged over the cluster's WebHDFS, through the
    calls ``seen_as`` makes of the cluster's, in at most ``rounds`` rounds."""
    assert endpoints.webhdfs
    with connect(endpoints) as client:
        descriptor = client.table_descriptor(table)
    with open_bulk_load(endpoints) as calls:
        staging = WebHdfsStaging(endpoints.webhdfs, cluster=endpoints.name)
        return BulkLoad(seen_as(calls), descriptor, staging, max_pause=1.0,
                        rounds=rounds).run(files)


def raw_scan(endpoints: ClusterEndpoints, table: str) -> list[Cell]:
    with connect(endpoints) as client:
        return [c for piece in client.scan(table, raw=True) for c in piece]
