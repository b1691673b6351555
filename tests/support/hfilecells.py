"""Cells for the HFile writer's tests, made without the writer or the reader: every cell
type (the four deletes among puts), binary rows, qualifiers and values, empty qualifiers and
values, several versions of a column, values of 300 KiB (more than one codec chunk), and
tags on some cells, in HBase's order with a sequence id each."""

from __future__ import annotations

from hbase_migrate.wal.model import Cell, CellType, Tag, cell_order

T0 = 1_700_000_000_000
FAMILY = b"f"


def writer_cells(rows: int = 120, *, tags: bool = True, family: bytes = FAMILY,
                 big_values: bool = True, ttl_tags: bool = True,
                 mvcc: bool = True) -> list[tuple[Cell, int]]:
    """(cell, mvcc) pairs sorted as HBase sorts them. ``ttl_tags``: the tag most cells carry
    is a cell TTL (type 8, which a region server applies: the cells expire a minute after
    their 2023 timestamps), else a tag of type 64 no server part reads; ``mvcc`` False: 0
    for every cell, as in a bulk load's files."""
    cells: list[Cell] = []
    for i in range(rows):
        row = b"row-%05d" % i if i % 11 else bytes([0, 0x80 | i % 128, 0xFF, i % 256])
        for q in range(i % 4 + 1):
            qualifier = b"" if q == 3 else b"q%d" % q
            for version in range(1 + (i % 3 == 0)):
                value = (b"v%d-%d-%d" % (i, q, version)) * (i % 5)
                cell_tags: tuple[Tag, ...] = (
                    (Tag(8 if ttl_tags else 64, (60_000 + i).to_bytes(8, "big")),)
                    if tags and i % 3 else ())
                if tags and i % 7 == 0:
                    cell_tags += ((Tag(1, b"acl-%d" % (i % 4)), Tag(2, b"\x01\x03")) if ttl_tags
                                  else (Tag(65, b"t-%d" % (i % 4)), Tag(66, b"\x01\x03")))
                cells.append(Cell(row, family, qualifier, T0 + i * 10 - version,
                                  CellType.PUT, value, cell_tags))
        if i % 9 == 4:
            cells.append(Cell(row, family, b"", T0 + i * 10 + 5, CellType.DELETE_FAMILY))
        if i % 9 == 5:
            cells.append(Cell(row, family, b"q0", T0 + i * 10, CellType.DELETE_FAMILY_VERSION))
        if i % 9 == 6:
            cells.append(Cell(row, family, b"q1", T0 + i * 10 + 1, CellType.DELETE_COLUMN))
        if i % 9 == 7:
            cells.append(Cell(row, family, b"q0", T0 + i * 10 - 1, CellType.DELETE))
        if big_values and i % 40 == 39:
            cells.append(Cell(row, family, b"big", T0, CellType.PUT,
                              bytes(range(256)) * 1200))
    cells.sort(key=cell_order)
    return [(cell, 100 + n if mvcc else 0) for n, cell in enumerate(cells)]
