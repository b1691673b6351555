"""The write path's loops (cutting a call's rows into stages, weighing cells, cutting a scan
into copy batches), compiled and pure Python, against rules written out here."""

from __future__ import annotations

import random

import pytest

from hbase_migrate.cluster.sizing import CELL_OVERHEAD, cell_bytes, cells_bytes
from hbase_migrate.cluster.waves import row_calls, rows_of, stages
from hbase_migrate.ranges.copy import _batches
from hbase_migrate.wal.model import Cell, CellType


def cells(seed: int, count: int) -> list[Cell]:
    rng = random.Random(seed)
    return [Cell(b"row%d" % rng.randrange(40), b"f", b"q" * rng.randrange(1, 30),
                 rng.randrange(1 << 40), CellType.PUT, b"v" * rng.randrange(0, 3000))
            for _ in range(count)]


def weight(cell: Cell) -> int:
    return len(cell.row) + len(cell.family) + len(cell.qualifier) + len(cell.value) + \
        CELL_OVERHEAD


@pytest.mark.parametrize("max_bytes", [1, 5_000, 40_000, 10**9])
def test_a_call_is_cut_into_stages_by_bytes_row_by_row(both_hot_loops: str,
                                                       max_bytes: int) -> None:
    (call,) = row_calls(rows_of(cells(max_bytes, 500)))  # all puts: one call, a row once
    expected: list[list[tuple[bytes, list[Cell]]]] = [[]]
    size = 0
    for row, row_cells in call:  # a stage ends before the cell that would take it past
        for cell in row_cells:
            if expected[-1] and size + weight(cell) > max_bytes:
                expected.append([])
                size = 0
            if not expected[-1] or expected[-1][-1][0] != row:
                expected[-1].append((row, []))
            expected[-1][-1][1].append(cell)
            size += weight(cell)
    got = [[(row, list(row_cells)) for row, row_cells in stage]
           for stage in stages(call, max_bytes)]
    assert got == expected
    assert len(got) > 1 or max_bytes == 10**9


def test_cells_not_of_bytes_are_cut_and_weighed_by_the_reference(
        both_hot_loops: str) -> None:
    odd = [Cell(b"r", b"f", b"q", 1, CellType.PUT, b"v"),
           Cell(b"r", b"f", b"q", 2, CellType.PUT, bytearray(b"vv"))]
    assert [[(row, list(c)) for row, c in stage]
            for stage in stages([(b"r", odd)], 10**6)] == [[(b"r", odd)]]
    assert [[(row, list(c)) for row, c in stage] for stage in stages(
        [(b"r", odd)], weight(odd[0]))] == [[(b"r", odd[:1])], [(b"r", odd[1:])]]
    assert cells_bytes(odd) == sum(map(weight, odd))


def test_cells_weigh_what_each_weighs(both_hot_loops: str) -> None:
    batch = cells(7, 300)
    assert cells_bytes(batch) == sum(map(weight, batch)) == sum(map(cell_bytes, batch))
    assert cells_bytes([]) == 0


@pytest.mark.parametrize(("batch_cells", "batch_bytes"), [(1, 10**9), (7, 10**9),
                                                          (2000, 20_000), (50, 1)])
def test_a_scan_is_cut_into_copy_batches_cell_by_cell(both_hot_loops: str, batch_cells: int,
                                                      batch_bytes: int) -> None:
    rng = random.Random(batch_cells)
    pieces = []
    for row in range(300):  # rows of 1 to 12 cells, a few wide rows in several pieces
        row_cells = [Cell(b"r%04d" % row, b"f", b"q%d" % i, i, CellType.PUT,
                          b"v" * rng.randrange(0, 4000)) for i in range(rng.randrange(1, 13))]
        cut = rng.randrange(1, len(row_cells) + 1)
        pieces += [p for p in (row_cells[:cut], row_cells[cut:]) if p]
    expected: list[list[Cell]] = [[]]
    size = 0
    for cell in (c for p in pieces for c in p):  # each cell to the batch it fits in
        if expected[-1] and (len(expected[-1]) >= batch_cells
                             or size + weight(cell) > batch_bytes):
            expected.append([])
            size = 0
        expected[-1].append(cell)
        size += weight(cell)
    counts = [0, 0]
    assert list(_batches(pieces, batch_cells, batch_bytes, counts)) == expected
    assert counts == [300, sum(map(len, pieces))]
