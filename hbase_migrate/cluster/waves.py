"""A batch of row mutations as write calls that keep each row's order, whatever the transport
(as gohbase's ``SendBatch``: calls on one row run in the order given). A batch is a sequence
of :class:`RowCells`, each one row's cells, all puts or all deletes, in order (a replay's
``RowMutation``, or :func:`rows_of` a list of cells). :func:`row_calls` groups it once: a
row's n-th run of puts or of deletes (consecutive mutations of one kind on a row make one
run) goes in wave n, one call for the wave's puts and one for its deletes, each row once per
call with its cells in order. Rows are independent of one another, so a delete never
overtakes a put of its own row, or the reverse, and a batch whose rows each alternate a few
times takes a few calls, not one per alternation. :func:`stages` cuts a call into pieces of
a byte budget. Replay and repair write so, over Thrift2, HBase's own RPC and Bigtable.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain
from operator import itemgetter
from typing import Protocol

from hbase_migrate.cluster.sizing import cell_bytes, cells_bytes
from hbase_migrate.wal.model import Cell, CellType

Row = tuple[bytes, Sequence[Cell]]  # a row and its cells in a call: one mutation of it
_CELLS = itemgetter(1)


class RowCells(Protocol):
    """One row's cells, all puts or all deletes, in their order."""

    @property
    def row(self) -> bytes: ...

    @property
    def cells(self) -> Sequence[Cell]: ...


class Run(tuple[bytes, Sequence[Cell]]):
    """A :class:`RowCells` of plain cells (:func:`rows_of`)."""

    __slots__ = ()

    @property
    def row(self) -> bytes:
        return self[0]

    @property
    def cells(self) -> Sequence[Cell]:
        return self[1]


def rows_of(cells: Sequence[Cell]) -> list[Run]:
    """``cells`` as a batch: each run of consecutive cells of one row and kind (put or
    delete) one :class:`RowCells`."""
    put = CellType.PUT
    out: list[Run] = []
    start = 0
    for i in range(1, len(cells) + 1):
        if i == len(cells) or cells[i].row != cells[start].row \
                or (cells[i].type == put) != (cells[start].type == put):
            out.append(Run((cells[start].row, cells[start:i])))
            start = i
    return out


def row_calls(batch: Sequence[RowCells]) -> list[list[Row]]:
    """``batch`` as calls to send one after the other, each all puts or all deletes and
    each row once in it (rows in order of first appearance): the puts, then the deletes, of
    every row's first run, then of every row's second run, and so on."""
    put = CellType.PUT
    place: dict[bytes, int] = {}  # row -> the call of its run: wave n's puts 2n, deletes 2n+1
    calls: list[dict[bytes, Sequence[Cell]]] = []
    for mutation in batch:
        cells = mutation.cells
        if not cells:
            continue
        row, is_put = mutation.row, cells[0].type == put
        index = place.get(row)
        if index is None:
            index = 0 if is_put else 1
        elif index & 1 == is_put:  # puts after deletes, or deletes after puts: a new run
            index += 1
        place[row] = index
        while len(calls) <= index:
            calls.append({})
        call = calls[index]
        have = call.get(row)
        if have is None:
            call[row] = cells  # the mutation's own sequence: never changed here
        elif type(have) is _Gathered:
            have.extend(cells)
        else:  # the row's second mutation in the call: a list of its own from now on
            call[row] = _Gathered((*have, *cells))
    return [list(call.items()) for call in calls if call]


class _Gathered(list[Cell]):
    """A row's cells gathered from several mutations of one run (made by :func:`row_calls`)."""

    __slots__ = ()


def stages(rows: Sequence[Row], max_bytes: int) -> Iterator[list[Row]]:
    """A call's rows in pieces of about ``max_bytes`` (:func:`cells_bytes`), in order; a
    row a piece's end cuts goes on in the next piece (a cell larger than that alone in its
    piece)."""
    if cells_bytes(row_cells(rows)) <= max_bytes:  # the usual call: one piece
        yield list(rows)
        return
    stage: list[Row] = []
    size = 0
    for row, cells in rows:
        weight = cells_bytes(cells)
        if size + weight <= max_bytes:
            stage.append((row, cells))
            size += weight
            continue
        start = 0
        for i, cell in enumerate(cells):
            weight = cell_bytes(cell)
            if (stage or i > start) and size + weight > max_bytes:
                if i > start:
                    stage.append((row, cells[start:i]))
                    start = i
                yield stage
                stage, size = [], 0
            size += weight
        stage.append((row, cells[start:]))
    if stage:
        yield stage


def row_cells(rows: Sequence[Row]) -> list[Cell]:
    """The cells of ``rows``, row by row."""
    return list(_flat(rows))


def _flat(rows: Sequence[Row]) -> Iterator[Cell]:
    return chain.from_iterable(map(_CELLS, rows))  # C passes
