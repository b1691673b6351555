"""Cells as Thrift2 mutations: where a replayed (or repaired) Put or Delete becomes a
``TPut`` or a ``TDelete`` (DESIGN 4, 4.1). Every cell keeps its timestamp and exact type:

    Put (4)                   a TColumnValue of its row's TPut, at its timestamp
    Delete (8)                TDelete DELETE_COLUMN: exactly that version
    DeleteColumn (12)         TDelete DELETE_COLUMNS: the column's versions up to it
    DeleteFamily (14)         TDelete DELETE_FAMILY: the family's cells up to it
    DeleteFamilyVersion (10)  TDelete DELETE_FAMILY_VERSION: the family's cells at exactly it

each ``TColumn`` carrying its own timestamp (the server then ignores the TDelete's). Cells are
grouped once, in their order: :func:`runs` cuts them into runs of puts or of deletes (one
gateway call each, so a delete never overtakes the put it follows); within a put run, one
``TPut`` per row; within a delete run, consecutive cells of one row and type share a
``TDelete``. ``Thrift2Client.write_cells`` sends them; replay and repair both write so.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from hbase_migrate.cluster.thrift2_idl import hbase2
from hbase_migrate.wal.model import Cell, CellType

DELETE_TYPES: dict[int, int] = {  # cell type code -> TDeleteType
    CellType.DELETE: hbase2.TDeleteType.DELETE_COLUMN,
    CellType.DELETE_COLUMN: hbase2.TDeleteType.DELETE_COLUMNS,
    CellType.DELETE_FAMILY: hbase2.TDeleteType.DELETE_FAMILY,
    CellType.DELETE_FAMILY_VERSION: hbase2.TDeleteType.DELETE_FAMILY_VERSION,
}
_FAMILY_WIDE = (CellType.DELETE_FAMILY, CellType.DELETE_FAMILY_VERSION)


def runs(cells: Sequence[Cell]) -> Iterator[Sequence[Cell]]:
    """``cells`` cut into maximal runs of Put cells or of delete cells, in order."""
    start = 0
    for i in range(1, len(cells) + 1):
        if i == len(cells) or (cells[i].type == CellType.PUT) != (
                cells[start].type == CellType.PUT):
            yield cells[start:i]
            start = i


def puts_from_cells(cells: Sequence[Cell], durability: int | None = None) -> list[Any]:
    """One TPut per row (rows in order of first appearance), each cell with its timestamp."""
    by_row: dict[bytes, list[Any]] = {}
    for c in cells:
        if c.type != CellType.PUT:
            raise ValueError(f"not a Put cell: type {c.type} at row {c.row!r}")
        by_row.setdefault(c.row, []).append(hbase2.TColumnValue(
            family=c.family, qualifier=c.qualifier, value=c.value, timestamp=c.timestamp))
    return [hbase2.TPut(row=row, columnValues=values, durability=durability)
            for row, values in by_row.items()]


def deletes_from_cells(cells: Sequence[Cell]) -> list[Any]:
    """TDeletes in cell order: consecutive cells of one row and type share a TDelete."""
    out: list[Any] = []
    last: tuple[bytes, int] | None = None
    for c in cells:
        kind = DELETE_TYPES.get(c.type)
        if kind is None:
            raise ValueError(f"not a delete cell: type {c.type} at row {c.row!r}")
        column = hbase2.TColumn(family=c.family, timestamp=c.timestamp,
                                qualifier=None if c.type in _FAMILY_WIDE else c.qualifier)
        if last == (c.row, kind):
            out[-1].columns.append(column)
        else:
            out.append(hbase2.TDelete(row=c.row, columns=[column], deleteType=kind))
            last = (c.row, kind)
    return out
