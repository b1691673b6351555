"""A table of a real cluster loaded with files of the project's HFile writer, and checked
by HBase: the files written for each family (one per region, or one over both regions, which
HBase's tool splits), loaded by HBase's ``BulkLoadHFilesTool``, read back by HBase's Java
client raw scan (delete markers and tags included); gets of single columns that a ROWCOL
Bloom filter answers first. Shared by the 2.6.1 (session stack) and 3.0.0-alpha-4 (own
stack) tests."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.hbase.connect import connect
from hbase_migrate.hfile.metadata import bulk_load_metadata
from hbase_migrate.hfile.writer import HFileSettings, HFileWriter
from hbase_migrate.wal.model import Cell, CellType, cell_order
from tests.support.hfilecells import writer_cells

from .hfile_judge import bulk_load
from .java_cells import differences, java_dump

SPLIT = b"row-00060"  # the tables' two regions
WITH_TAGS = "org.apache.hadoop.hbase.codec.KeyValueCodecWithTags"
Families = Mapping[bytes, tuple[FamilyDescriptor, HFileSettings]]


@contextmanager
def table_of(endpoints: ClusterEndpoints, table: str, families: Families) -> Iterator[None]:
    """The table, of two regions, created (again); dropped after."""
    with connect(endpoints) as client:
        if client.table_exists(table):
            client.disable_table(table)
            client.delete_table(table)
        client.create_table(TableDescriptor(table, tuple(f for f, _ in families.values())),
                            [SPLIT])
        try:
            yield
        finally:
            client.disable_table(table)
            client.delete_table(table)


def family_cells(family: bytes, *, rowcol: bool) -> list[tuple[Cell, int]]:
    """A family's cells: an inert tag type (a cell TTL tag would expire the 2023 cells);
    the puts only for a ROWCOL family, whose gets must find every column; sequence ids 0,
    as a bulk load's files hold."""
    cells = writer_cells(family=family, ttl_tags=False, mvcc=False, big_values=not rowcol)
    if rowcol:
        cells = [(c, m) for c, m in cells if c.type == CellType.PUT]
    return cells


def load_and_scan(described: Mapping[str, Any], table: str, families: Families,
                  folder: Path, spanning: bytes) -> None:
    """Write each family's files (``spanning``'s one file over both regions, the others one
    a region), load them; the tool splits the spanning file only, and HBase's raw scan
    returns every cell written."""
    expected: list[Cell] = []
    for family, (descriptor, settings) in families.items():
        (folder / family.decode()).mkdir(parents=True)
        cells = family_cells(family, rowcol=descriptor.bloom_filter == "ROWCOL")
        parts = ([cells] if family == spanning else
                 [[c for c in cells if c[0].row < SPLIT], [c for c in cells if c[0].row >= SPLIT]])
        for n, part in enumerate(parts):
            with HFileWriter(folder / family.decode() / f"bulk{n}", settings) as writer:
                for cell, mvcc in part:
                    writer.append(cell, mvcc)
                writer.close(bulk_load_metadata("hfile-writer-test"))
        expected += [c for c, _ in cells]
    said = bulk_load(described, table, folder, folder.parent / "conf")
    split = re.findall(r"HFile at \S*/(\w)/bulk\d+ no longer fits", said)
    assert split == [spanning.decode()]
    dump = java_dump(described, table, codec=WITH_TAGS)
    assert differences(sorted(expected, key=cell_order), dump.raw) == ""
    assert len(dump.regions) == 2


def rowcol_gets_missing(endpoints: ClusterEndpoints, table: str, family: bytes
                        ) -> list[tuple[bytes, bytes]]:
    """The columns of the ROWCOL ``family`` whose get (one column, every version) does not
    return every version written."""
    expected: dict[tuple[bytes, bytes], list[Cell]] = {}
    for cell, _ in family_cells(family, rowcol=True):
        expected.setdefault((cell.row, cell.qualifier), []).append(cell._replace(tags=()))
    with connect(endpoints) as client:
        found = {key: client.get(table, key[0], [(family, key[1])]) for key in expected}
    return [key for key, cells in expected.items()
            if [c._replace(tags=()) for c in found[key]] != cells]
