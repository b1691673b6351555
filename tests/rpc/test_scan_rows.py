"""A scan reply's cells into Results and rows, compiled and pure Python: the rows a reply
carries, grouped here from the cells' own rows; and, compiled, nothing of a whole reply
left for the cycle collector to walk."""

from __future__ import annotations

import gc
import random
from itertools import groupby

import pytest

from hbase_migrate.rpc.scan import ScanResponse, decode_scan_response, scan_response, whole_rows
from hbase_migrate.wal.model import Cell, CellType


def reply_rows(seed: int, rows: int) -> list[list[Cell]]:
    rng = random.Random(seed)
    out = []
    for n in range(rows):
        row = b"r%06d" % n
        out.append([Cell(row, b"f", b"q%d" % q, 1_700_000_000_000 + q, CellType.PUT,
                         rng.randbytes(rng.randrange(0, 200)))
                    for q in range(rng.randrange(1, 6))])
    return out


def reply(results: list[list[Cell]], partial: list[bool]) -> ScanResponse:
    return ScanResponse(7, tuple(tuple(r) for r in results), tuple(partial), True, True,
                        False, 0, None)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_reply_of_whole_rows_hands_out_each_row_once(both_hot_loops: str,
                                                       seed: int) -> None:
    rows = reply_rows(seed, 400)
    data, block = scan_response(reply(rows, [False] * len(rows)))
    decoded = decode_scan_response(data, block)
    got, part = whole_rows(decoded, [])
    cells = [c for r in rows for c in r]
    expected = [list(g) for _, g in groupby(cells, key=lambda c: c.row)]
    assert got == expected
    assert part == []
    assert all(type(r) is list for r in got)


def test_rows_cut_into_partial_results_are_joined(both_hot_loops: str) -> None:
    rows = reply_rows(9, 50)
    results, partial = [], []
    for row in rows:  # each row in Results of at most two cells, all but its last partial
        pieces = [row[i:i + 2] for i in range(0, len(row), 2)]
        results += pieces
        partial += [True] * (len(pieces) - 1) + [False]
    data, block = scan_response(reply(results, partial))
    got, part = whole_rows(decode_scan_response(data, block), [])
    assert got == rows
    assert part == []


def test_the_compiled_loops_leave_a_replys_rows_out_of_the_cycle_collector(
        both_hot_loops: str) -> None:
    if both_hot_loops != "compiled":
        pytest.skip("the reference's tuples and lists are the collector's as any")
    rows = reply_rows(4, 300)
    data, block = scan_response(reply(rows, [False] * len(rows)))
    decoded = decode_scan_response(data, block)
    got, _ = whole_rows(decoded, [])
    assert got == rows
    assert not any(gc.is_tracked(r) for r in decoded.results)
    assert not any(gc.is_tracked(r) for r in got)
    assert not any(gc.is_tracked(c) for r in got for c in r)
