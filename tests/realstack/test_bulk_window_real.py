"""A window of WAL edits written as one HFile per region (``replay/bulkfiles.py``) and
bulk-loaded into real HBase 2.6.1 (the session's stack) reads as the same edits replayed
through the write path.

Two tables alike (two regions; a FAST_DIFF/GZ family with a ROW Bloom filter and a
ROW_INDEX_V1/SNAPPY one with ROWCOL, three versions each) get the same "copy" by puts; then
the same window (puts of several versions, a key written twice with different values,
deletes of the four types, many covering cells of the copy) goes into one by the replay's
own write path (``ClientTarget``, entry by entry) and into the other as files loaded by
HBase's ``BulkLoadHFilesTool`` (no file split: one per region). HBase's Java client reads
both tables alike, every version a read sees. Loading over HBase's RPC, from Python:
``test_bulk_load_rpc_real.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import load_cluster_json
from hbase_migrate.hbase.connect import connect
from hbase_migrate.replay.bulkfiles import BulkWindow
from hbase_migrate.replay.client_target import ClientTarget
from hbase_migrate.wal.model import Cell, CellType
from realstack.hbase import RealHBase

from .bulk_window import SPLIT, T, copy_cells, mutations, window_entries
from .fixtures import native_cluster_json
from .hfile_judge import bulk_load
from .java_cells import differences, java_dump

pytestmark = [pytest.mark.integration, pytest.mark.realstack]
BULK, PUTS = "bulk_window_files", "bulk_window_puts"
FAMILIES = (
    FamilyDescriptor(b"f", max_versions=3, compression="GZ", bloom_filter="ROW",
                     data_block_encoding="FAST_DIFF", block_size=2048),
    FamilyDescriptor(b"g", max_versions=3, compression="SNAPPY", bloom_filter="ROWCOL",
                     data_block_encoding="ROW_INDEX_V1", block_size=1024),
)
@pytest.fixture(scope="module")
def described(real_hbase: RealHBase, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("bulk-window")
    endpoints = load_cluster_json(native_cluster_json(real_hbase, folder))
    with connect(endpoints) as client:
        for table in (BULK, PUTS):
            if client.table_exists(table):
                client.disable_table(table)
                client.delete_table(table)
            client.create_table(TableDescriptor(table, FAMILIES), [SPLIT])
            client.write_cells(table, copy_cells())
        try:
            yield {**real_hbase.described, "folder": folder, "endpoints": endpoints}
        finally:
            for table in (BULK, PUTS):
                client.disable_table(table)
                client.delete_table(table)


def test_window_loaded_as_files_reads_as_the_write_path(described: dict[str, Any]) -> None:
    window = mutations(window_entries())
    folder: Path = described["folder"]
    with connect(described["endpoints"]) as client:
        target = ClientTarget(client, owned=False)
        for entry in window:  # as the source wrote them: one call an entry
            target.apply(PUTS, entry)
        files = BulkWindow(client.table_descriptor(BULK), client.regions(BULK))
        for entry in window:
            files.add(entry)
        written = files.write(folder / "files", "bulk-window-test")
    assert {(f.region.start_key, f.family) for f in written} == {
        (start, family) for start in (b"", SPLIT) for family in (b"f", b"g")}
    said = bulk_load(described, BULK, folder / "files", folder / "conf")
    assert "no longer fits" not in said  # each file within its region, loaded as written
    by_puts, by_files = java_dump(described, PUTS), java_dump(described, BULK)
    assert len(by_files.visible) > 1000
    assert Cell(b"r007", b"f", b"q0", T + 500, CellType.PUT, b"later") in by_files.visible
    assert differences(by_puts.visible, by_files.visible) == ""
