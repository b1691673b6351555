"""The small window of WAL edits the bulk window tests write (``test_bulkfiles``,
``test_bulkspill``): a table of two families (FAST_DIFF and GZ with a ROW Bloom filter;
ROWCOL with 1 KiB blocks), its three regions listed out of order, and entries of puts,
tags, a key written twice and deletes of every type, one with an empty row."""

from __future__ import annotations

from hbase_migrate.cluster.descriptors import FamilyDescriptor, RegionDescriptor, TableDescriptor
from hbase_migrate.wal.model import Cell, CellType, Tag

T = 1_700_000_000_000
TABLE = TableDescriptor("ns:orders", (
    FamilyDescriptor(b"f", data_block_encoding="FAST_DIFF", compression="gz", bloom_filter="ROW"),
    FamilyDescriptor(b"g", bloom_filter="ROWCOL", block_size=1024),
))
REGIONS = [RegionDescriptor("ns:orders", b"", b"h", 1), RegionDescriptor("ns:orders", b"p", b"", 3),
           RegionDescriptor("ns:orders", b"h", b"p", 2)]  # not in order: the window sorts them


def put(row: bytes, qualifier: bytes, ts: int, value: bytes, family: bytes = b"f",
        tags: tuple[Tag, ...] = ()) -> Cell:
    """A put, of family ``f`` unless named."""
    return Cell(row, family, qualifier, ts, CellType.PUT, value, tags)


def marker(row: bytes, qualifier: bytes, ts: int, kind: CellType, family: bytes = b"f") -> Cell:
    """A delete marker of ``kind``, of family ``f`` unless named."""
    return Cell(row, family, qualifier, ts, kind)


# WAL entries in order: each a list of cells
ENTRIES = [
    [put(b"zebra", b"a", T, b"z1"), put(b"zebra", b"b", T, b"z2", b"g")],
    [put(b"apple", b"a", T + 1, b"first", tags=(Tag(8, b"\x00" * 7 + b"\x10"),))],
    [put(b"mango", b"a", T, b"m1"), put(b"mango", b"a", T - 5, b"m0")],
    [marker(b"apple", b"a", T, CellType.DELETE)],
    [put(b"apple", b"a", T + 1, b"second")],  # the same key again: this one stays
    [marker(b"mango", b"", T + 9, CellType.DELETE_FAMILY)],
    [marker(b"hat", b"x", T + 3, CellType.DELETE_COLUMN, b"g")],
    [marker(b"hat", b"", T + 4, CellType.DELETE_FAMILY_VERSION)],
    [put(b"", b"empty-row", T, b"e")],
]
