"""How a batch of row mutations becomes write calls: every call all puts or all deletes, each
row once in a call and its cells in their order, as few calls as that order allows, a call
cut into pieces of a byte budget without reordering; tags are not sent (HBase's gateway would
drop them) and are kept when a result carries them."""

from __future__ import annotations

import random
from collections import Counter
from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from hbase_migrate.cluster.sizing import cells_bytes
from hbase_migrate.cluster.waves import row_calls, row_cells, rows_of, stages
from hbase_migrate.thrift.mutations import puts_from_cells
from hbase_migrate.thrift.thrift2 import cells_from_result
from hbase_migrate.thrift.thrift2_idl import hbase2
from hbase_migrate.wal.cells import tags_bytes
from hbase_migrate.wal.model import Cell, CellType, Tag

KINDS = (CellType.PUT, CellType.DELETE, CellType.DELETE_COLUMN, CellType.DELETE_FAMILY)


def cell(row: int, kind: CellType, ts: int) -> Cell:
    return Cell(b"r%d" % row, b"d", b"q", ts, kind, b"v" if kind == CellType.PUT else b"")


batches = st.lists(st.tuples(st.integers(0, 5), st.sampled_from(KINDS)), max_size=60).map(
    lambda picks: [cell(row, kind, ts) for ts, (row, kind) in enumerate(picks)])


def row_runs(cells: list[Cell]) -> int:
    """The most alternations between puts and deletes any one row has."""
    runs: Counter[bytes] = Counter()
    last: dict[bytes, bool] = {}
    for c in cells:
        is_put = c.type == CellType.PUT
        if last.get(c.row) != is_put:
            runs[c.row] += 1
        last[c.row] = is_put
    return max(runs.values(), default=0)


@given(batches)
def test_calls_keep_each_rows_order_and_are_all_puts_or_all_deletes(cells: list[Cell]) -> None:
    calls = row_calls(rows_of(cells))
    assert all(calls)
    for call in calls:
        assert len({c.type == CellType.PUT for c in row_cells(call)}) == 1
        rows = [row for row, _ in call]
        assert len(rows) == len(set(rows))  # a row once per call
        assert all(c.row == row for row, row_cells_ in call for c in row_cells_)
    sent = [c for call in calls for c in row_cells(call)]
    assert Counter(sent) == Counter(cells)
    for row in {c.row for c in cells}:
        assert [c for c in sent if c.row == row] == [c for c in cells if c.row == row]
    # a row's n-th run goes out in the n-th wave: at most a put and a delete call per wave
    assert len(calls) <= 2 * row_runs(cells)


@given(batches, st.integers(1, 200))
def test_stages_cut_a_call_in_order_within_the_budget(cells: list[Cell], budget: int) -> None:
    for call in row_calls(rows_of(cells)):
        pieces = list(stages(call, budget))
        assert all(pieces)
        # the call's cells, row by row, in order: nothing lost, moved or sent twice
        assert [c for piece in pieces for c in row_cells(piece)] == row_cells(call)
        for piece in pieces:
            weight = sum(cells_bytes(cs) for _, cs in piece)
            assert weight <= budget or len(row_cells(piece)) == 1
            assert len({row for row, _ in piece}) == len(piece)


def test_deletes_spread_over_rows_take_a_few_calls_not_one_per_alternation() -> None:
    # the usual replay batch: puts over many rows, every 25th cell a delete
    rows = random.Random(7)
    cells = [cell(rows.randrange(100), CellType.DELETE_COLUMN if i % 25 == 24 else
                  CellType.PUT, i) for i in range(2000)]
    alternations = 1 + sum(1 for a, b in pairwise(cells)
                           if (a.type == CellType.PUT) != (b.type == CellType.PUT))
    assert alternations == 160  # calls in batch order: one per alternation
    assert len(row_calls(rows_of(cells))) <= 2 * row_runs(cells) <= 14  # 11 here: 160 before


def test_puts_carry_every_field_where_the_idl_names_it() -> None:
    cells = [Cell(b"r2", b"d", b"q1", 7, CellType.PUT, b"x"),
             Cell(b"r1", b"e", b"q2", 9, CellType.PUT, b"y"),
             Cell(b"r2", b"d", b"q3", 8, CellType.PUT, b"z")]
    puts = puts_from_cells(cells, durability=hbase2.TDurability.SKIP_WAL)
    assert [(p.row, p.timestamp, p.attributes, p.durability) for p in puts] == [
        (b"r2", None, None, hbase2.TDurability.SKIP_WAL),
        (b"r1", None, None, hbase2.TDurability.SKIP_WAL)]
    assert [[(v.family, v.qualifier, v.value, v.timestamp, v.tags, v.type)
             for v in p.columnValues] for p in puts] == [
        [(b"d", b"q1", b"x", 7, None, None), (b"d", b"q3", b"z", 8, None, None)],
        [(b"e", b"q2", b"y", 9, None, None)]]


def test_tags_read_from_a_result_and_not_sent() -> None:
    tags = (Tag(8, (3_600_000).to_bytes(8, "big")), Tag(200, b"dc1"))
    tagged, plain = cell(1, CellType.PUT, 7)._replace(tags=tags), cell(1, CellType.PUT, 6)
    result = hbase2.TResult(row=b"r1", columnValues=[
        hbase2.TColumnValue(b"d", b"q", b"v", 7, tags_bytes(tags), int(CellType.PUT)),
        hbase2.TColumnValue(b"d", b"q", b"v", 6, None, int(CellType.PUT))])
    assert cells_from_result(result) == [tagged, plain]
    (put,) = puts_from_cells([tagged, plain])
    assert [v.tags for v in put.columnValues] == [None, None]
