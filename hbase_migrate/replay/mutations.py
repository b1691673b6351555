"""WAL cells -> row mutations for the target, WALPlayer-style but without its defects.

Within one entry the cells keep their order, their timestamps and their exact types:

* Put (4)                   -> put (row, family, qualifier, ts, value)
* Delete (8)                -> delete exactly the version (row, family, qualifier, ts)
* DeleteColumn (12)         -> delete every version of (row, family, qualifier) <= ts
* DeleteFamily (14)         -> delete every cell of (row, family) <= ts
* DeleteFamilyVersion (10)  -> delete every column of (row, family) at exactly ts

Consecutive cells of one row and one kind (put or delete) form one mutation, as WALPlayer
groups them; a change of row or kind starts the next one and nothing is ever emitted twice
(WALPlayer re-emits an earlier Put at each later boundary). A type code outside the five
above fails with :class:`UnknownCellTypeError` naming the file, offset and entry. Tags are
not written (neither Thrift gateway carries them, and the native client writes in HBase's
default codec, as HBase's Java client does): :func:`count_tags` counts what is left behind,
and a run says it per file.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from operator import attrgetter
from typing import NamedTuple

from hbase_migrate.bytesutil import short_binary, to_string_binary
from hbase_migrate.replay.errors import UnknownCellTypeError
from hbase_migrate.wal.model import Cell, CellType

KNOWN_TYPES = frozenset(int(t) for t in CellType)
_PUT = int(CellType.PUT)
_CELLS = attrgetter("cells")


class Kind(Enum):
    """What a row mutation does on the target."""

    PUT = "put"
    DELETE = "delete"


class WalPosition(NamedTuple):
    """Where a mutation comes from: the WAL file as given, its entry's offset and index (and,
    when read from a file, the entry's sequence id and write time)."""

    file: str
    offset: int
    entry: int  # zero-based entry index in the file
    sequence: int | None = None
    write_time: int | None = None

    def __str__(self) -> str:
        return f"{self.file} at byte offset {self.offset} (entry #{self.entry})"


class RowMutation(NamedTuple):
    """Cells of one row and one kind, in WAL order, each with its own timestamp and type
    (for a target that takes cell blocks, an entry's reader ``CellBlock``: the same)."""

    row: bytes
    kind: Kind
    cells: tuple[Cell, ...]
    position: WalPosition


def cell_kind(cell: Cell, position: WalPosition) -> Kind:
    """PUT or DELETE; an unknown type code raises :class:`UnknownCellTypeError`."""
    if cell.type not in KNOWN_TYPES:
        raise UnknownCellTypeError(
            f"{position}: cell of row {short_binary(cell.row)} column "
            f"{to_string_binary(cell.family)}:{short_binary(cell.qualifier)} has unknown "
            f"type code {cell.type}; expected one of {sorted(KNOWN_TYPES)}"
        )
    return Kind.PUT if cell.type == CellType.PUT else Kind.DELETE


def to_mutations(cells: Sequence[Cell], position: WalPosition) -> list[RowMutation]:
    """The row mutations of one entry's data cells (markers already removed), in order."""
    row = cells[0].row if cells else b""
    if cells and all(c.type == _PUT and c.row == row for c in cells):  # the usual entry: one Put
        return [RowMutation(row, Kind.PUT, tuple(cells), position)]
    out: list[RowMutation] = []
    run: list[Cell] = []
    run_key: tuple[bytes, Kind] | None = None
    for cell in cells:
        key = (cell.row, cell_kind(cell, position))
        if key != run_key and run_key is not None:
            out.append(RowMutation(run_key[0], run_key[1], tuple(run), position))
            run = []
        run.append(cell)
        run_key = key
    if run_key is not None:
        out.append(RowMutation(run_key[0], run_key[1], tuple(run), position))
    return out


def count_tags(cells: Sequence[Cell]) -> int:
    """How many tags these cells carry (none of them reaches the target)."""
    return sum(len(c.tags) for c in cells)


def mutation_cells(mutations: Sequence[RowMutation]) -> int:
    """The number of cells in these mutations."""
    return sum(map(len, map(_CELLS, mutations)))  # C passes: once per batch, per mutation
