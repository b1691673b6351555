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

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import load_cluster_json
from hbase_migrate.hbase.connect import connect
from hbase_migrate.replay.bulkfiles import BulkWindow
from hbase_migrate.replay.client_target import ClientTarget
from hbase_migrate.replay.mutations import RowMutation, WalPosition, to_mutations
from hbase_migrate.wal.model import Cell, CellType
from realstack.hbase import RealHBase

from .fixtures import native_cluster_json
from .hfile_judge import bulk_load
from .java_cells import differences, java_dump

pytestmark = [pytest.mark.integration, pytest.mark.realstack]
BULK, PUTS = "bulk_window_files", "bulk_window_puts"
T = 1_700_000_000_000
FAMILIES = (
    FamilyDescriptor(b"f", max_versions=3, compression="GZ", bloom_filter="ROW",
                     data_block_encoding="FAST_DIFF", block_size=2048),
    FamilyDescriptor(b"g", max_versions=3, compression="SNAPPY", bloom_filter="ROWCOL",
                     data_block_encoding="ROW_INDEX_V1", block_size=1024),
)
SPLIT = b"r100"


def copy_cells() -> list[Cell]:
    """What the snapshot copy left in the target: two versions of every column."""
    return [Cell(b"r%03d" % r, family, b"q%d" % q, T - 100 - v, CellType.PUT, b"copy-%d" % v)
            for r in range(200) for family in (b"f", b"g") for q in range(3) for v in range(2)]


def window_entries() -> list[list[Cell]]:
    """WAL entries of the window, in order: puts at times around the copy's and after it, a
    key rewritten, and deletes of each type, many at the copy's cells."""
    rng = random.Random(78)
    entries: list[list[Cell]] = []
    for n in range(600):
        row = b"r%03d" % rng.randrange(200)
        family = rng.choice((b"f", b"g"))
        qualifier = b"q%d" % rng.randrange(3)
        roll = rng.random()
        if roll < 0.6:
            ts = T + rng.randrange(-150, 50)  # among the copy's versions, or newer
            entries.append([Cell(row, family, qualifier, ts, CellType.PUT, b"w%d" % n),
                            Cell(row, family, b"extra", ts, CellType.PUT, b"x%d" % n)])
        elif roll < 0.7:
            entries.append([Cell(row, family, qualifier, T - 100, CellType.DELETE)])
        elif roll < 0.8:
            entries.append([Cell(row, family, qualifier, T - 50, CellType.DELETE_COLUMN)])
        elif roll < 0.9:
            entries.append([Cell(row, family, b"", T - 101, CellType.DELETE_FAMILY_VERSION)])
        else:
            entries.append([Cell(row, family, b"", T - 100 + rng.randrange(-2, 2),
                                 CellType.DELETE_FAMILY)])
    # a key written twice in the window: the later value is what reads see
    entries.append([Cell(b"r007", b"f", b"q0", T + 500, CellType.PUT, b"earlier")])
    entries.append([Cell(b"r007", b"f", b"q0", T + 500, CellType.PUT, b"later")])
    return entries


def mutations(entries: list[list[Cell]]) -> list[list[RowMutation]]:
    return [to_mutations(cells, WalPosition("wal", n, n)) for n, cells in enumerate(entries)]


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
