"""Exact replay through a Thrift2 gateway, and the WAL-cell -> Thrift2 mutation mapping
(DESIGN 4, 4.1): a Put cell is a ``TPut`` column at its timestamp; each delete type is the
``TDelete`` of the same meaning (Delete: exactly one version, DeleteColumn: the versions up
to it, DeleteFamily, DeleteFamilyVersion), consecutive cells of one row and type sharing a
``TDelete``. Puts and deletes are sent in their order, a run of one kind per call.
(``thrift1_target`` does the same for Thrift1, with its delete-fidelity policy.)"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.cluster.errors import GatewayUnreachableError
from hbase_migrate.cluster.thrift2 import Thrift2Client, Thrift2Error, hbase2
from hbase_migrate.replay.apply import (
    AppliedCounts,
    SchemaCache,
    count_cells,
    unavailable,
    write_error,
    writing,
)
from hbase_migrate.replay.mutations import RowMutation
from hbase_migrate.wal.model import Cell, CellType

_DELETE_TYPES: dict[int, int] = {  # cell type code -> TDeleteType
    CellType.DELETE: 0,  # DELETE_COLUMN: exactly one version
    CellType.DELETE_COLUMN: 1,  # DELETE_COLUMNS: versions <= ts
    CellType.DELETE_FAMILY: 2,
    CellType.DELETE_FAMILY_VERSION: 3,
}


def deletes_from_cells(cells: Sequence[Cell]) -> list[Any]:
    """TDeletes in cell order: consecutive cells of one row and type share a TDelete."""
    out: list[Any] = []
    last: tuple[bytes, int] | None = None
    for c in cells:
        kind = _DELETE_TYPES.get(c.type)
        if kind is None:
            raise ValueError(f"not a delete cell: type {c.type} at row {c.row!r}")
        family_wide = c.type in (CellType.DELETE_FAMILY, CellType.DELETE_FAMILY_VERSION)
        column = hbase2.TColumn(family=c.family, timestamp=c.timestamp,
                                qualifier=None if family_wide else c.qualifier)
        if last == (c.row, kind):
            out[-1].columns.append(column)
        else:
            out.append(hbase2.TDelete(row=c.row, columns=[column], deleteType=kind))
            last = (c.row, kind)
    return out


def write_cells(client: Thrift2Client, table: str, cells: Sequence[Cell]) -> None:
    """Write cells exactly, in their order: runs of puts or of deletes, one call each."""
    start = 0
    for i in range(1, len(cells) + 1):
        if i == len(cells) or (cells[i].type == CellType.PUT) != (
                cells[start].type == CellType.PUT):
            run = cells[start:i]
            if run[0].type == CellType.PUT:
                client.put_cells(table, run)
            else:
                client.delete_multiple(table, deletes_from_cells(run))
            start = i


class Thrift2Target:
    """Exact replay through a Thrift2 gateway (one client, not shared across threads).
    ``cluster`` names the target cluster in messages."""

    def __init__(self, client: Thrift2Client, *, cluster: str | None = None) -> None:
        self.client = client
        self.cluster = f"cluster {cluster!r}" if cluster else client.endpoint
        self._schema = SchemaCache(client.endpoint, client.table_exists,
                                   client.table_descriptor)

    @property
    def name(self) -> str:
        return self.client.endpoint

    def close(self) -> None:
        self.client.close()

    def describe(self, table: str) -> TableDescriptor:
        try:
            return self._schema.describe(table)
        except GatewayUnreachableError as exc:
            raise unavailable(self.cluster, exc, f"describing table {table}") from exc

    def apply(self, table: str, mutations: Sequence[RowMutation]) -> AppliedCounts:
        cells = [c for m in mutations for c in m.cells]
        try:
            write_cells(self.client, table, cells)
        except GatewayUnreachableError as exc:
            raise unavailable(self.cluster, exc, writing(table, mutations[0])) from exc
        except Thrift2Error as exc:
            self._find_failure(table, mutations, exc)
        runs = sum(1 for i, m in enumerate(mutations)
                   if i == 0 or m.kind != mutations[i - 1].kind)
        return AppliedCounts(count_cells(mutations), runs)

    def _find_failure(self, table: str, mutations: Sequence[RowMutation],
                      exc: Thrift2Error) -> None:
        """Re-send mutation by mutation (idempotent: original timestamps) to name the one
        the target refuses; returns normally if every one is then acknowledged."""
        for m in mutations:
            try:
                write_cells(self.client, table, m.cells)
            except GatewayUnreachableError as again:
                raise unavailable(self.cluster, again, writing(table, m)) from exc
            except Thrift2Error as again:
                raise write_error(self.name, table, m, again) from exc
