"""Cells as write calls that keep each row's order, whatever the transport: :func:`waves`
cuts every row's cells into its runs of puts or of deletes, and the n-th runs of all rows
make wave n, one call for its puts and one for its deletes. Rows are independent of one
another, so a delete never overtakes a put of its own row, or the reverse, and a batch whose
rows each alternate a few times takes a few calls, not one per alternation in the batch.
Replay and repair both write so, over Thrift2 and over HBase's own RPC."""

from __future__ import annotations

from collections.abc import Sequence

from hbase_migrate.wal.model import Cell, CellType


def waves(cells: Sequence[Cell]) -> list[list[Cell]]:
    """``cells`` as calls to send one after the other, each all puts or all deletes: the
    puts, then the deletes, of every row's first run, then of every row's second run, and so
    on; each row's cells stay in their order, cells of different rows may change places."""
    put = CellType.PUT
    if all(cell.type == put for cell in cells):  # the usual batch: one call
        return [list(cells)] if cells else []
    place: dict[bytes, tuple[int, bool]] = {}  # row -> (its wave, puts?)
    calls: list[list[Cell]] = []  # wave n: calls[2n] its puts, calls[2n + 1] its deletes
    for cell in cells:
        is_put = cell.type == put
        wave, was_put = place.get(cell.row, (0, is_put))
        if was_put != is_put:
            wave += 1
        place[cell.row] = (wave, is_put)
        index = 2 * wave + (not is_put)
        while len(calls) <= index:
            calls.append([])
        calls[index].append(cell)
    return [call for call in calls if call]
