"""Cells as Thrift2 mutations: where a replayed (or repaired) Put or Delete becomes a
``TPut`` or a ``TDelete`` (DESIGN 4, 4.1). Every cell keeps its timestamp and exact type:

    Put (4)                   a TColumnValue of its row's TPut, at its timestamp
    Delete (8)                TDelete DELETE_COLUMN: exactly that version
    DeleteColumn (12)         TDelete DELETE_COLUMNS: the column's versions up to it
    DeleteFamily (14)         TDelete DELETE_FAMILY: the family's cells up to it
    DeleteFamilyVersion (10)  TDelete DELETE_FAMILY_VERSION: the family's cells at exactly it

each ``TColumn`` carrying its own timestamp (the server then ignores the TDelete's). A batch
is grouped once, keeping each row's order (:func:`hbase_migrate.cluster.waves.row_calls`):
in a put call, one ``TPut`` per row; in a delete call, consecutive cells of one row and type
share a ``TDelete``. ``Thrift2Client.write_rows`` sends them; replay and repair both write so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hbase_migrate.cluster.waves import Row, row_calls, rows_of
from hbase_migrate.thrift.thrift2_idl import hbase2
from hbase_migrate.wal.model import Cell, CellType

DELETE_TYPES: dict[int, int] = {  # cell type code -> TDeleteType
    CellType.DELETE: hbase2.TDeleteType.DELETE_COLUMN,
    CellType.DELETE_COLUMN: hbase2.TDeleteType.DELETE_COLUMNS,
    CellType.DELETE_FAMILY: hbase2.TDeleteType.DELETE_FAMILY,
    CellType.DELETE_FAMILY_VERSION: hbase2.TDeleteType.DELETE_FAMILY_VERSION,
}
_FAMILY_WIDE = (CellType.DELETE_FAMILY, CellType.DELETE_FAMILY_VERSION)


def puts_from_rows(rows: Sequence[Row], durability: int | None = None) -> list[Any]:
    """One TPut per row of a call, each cell with its timestamp. (A hot loop of the copy
    and the replay: the structs are built with positional arguments, in IDL order, which
    costs half what keywords do.)"""
    column_value, put = hbase2.TColumnValue, CellType.PUT
    out: list[Any] = []
    for row, cells in rows:
        values: list[Any] = []
        for c in cells:
            if c.type != put:
                raise ValueError(f"not a Put cell: type {c.type} at row {c.row!r}")
            values.append(column_value(c.family, c.qualifier, c.value, c.timestamp))
        # TPut(row, columnValues, timestamp, attributes, durability)
        out.append(hbase2.TPut(row, values, None, None, durability))
    return out


def puts_from_cells(cells: Sequence[Cell], durability: int | None = None) -> list[Any]:
    """One TPut per row (rows in order of first appearance), each cell with its timestamp."""
    return [put for call in row_calls(rows_of(cells))
            for put in puts_from_rows(call, durability)]


def deletes_from_rows(rows: Sequence[Row]) -> list[Any]:
    """TDeletes of a call's rows in order: consecutive cells of one row and type share a
    TDelete."""
    out: list[Any] = []
    for row, cells in rows:
        last = None
        for c in cells:
            kind = DELETE_TYPES.get(c.type)
            if kind is None:
                raise ValueError(f"not a delete cell: type {c.type} at row {c.row!r}")
            column = hbase2.TColumn(family=c.family, timestamp=c.timestamp,
                                    qualifier=None if c.type in _FAMILY_WIDE else c.qualifier)
            if kind == last:
                out[-1].columns.append(column)
            else:
                out.append(hbase2.TDelete(row=row, columns=[column], deleteType=kind))
                last = kind
    return out


def deletes_from_cells(cells: Sequence[Cell]) -> list[Any]:
    """TDeletes in cell order: consecutive cells of one row and type share a TDelete."""
    return deletes_from_rows(rows_of(cells))
