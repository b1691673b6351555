"""WAL cells -> row mutations: grouping, order, exact types, unknown types, tags."""

from __future__ import annotations

import pytest

from hbase_migrate.replay.errors import UnknownCellTypeError
from hbase_migrate.replay.mutations import (
    Kind,
    RowMutation,
    WalPosition,
    count_tags,
    to_mutations,
)
from hbase_migrate.wal.model import Cell, CellType, Tag

POS = WalPosition("wal.1", 120, 3)
PUT, DEL, DCOL, DFAM, DFV = 4, 8, 12, 14, 10


def cell(row: bytes, type_: int, ts: int = 5, qualifier: bytes = b"q") -> Cell:
    family_wide = type_ in (DFAM, DFV)
    return Cell(row, b"f", b"" if family_wide else qualifier, ts, type_,
                b"v" if type_ == PUT else b"")


def test_walplayer_defect_case_gives_three_mutations_in_order() -> None:
    # WALPlayer emits Put r1, Put r1, Delete r1, Put r2, Delete r1 for these cells.
    p1, d1, p2 = cell(b"r1", PUT), cell(b"r1", DEL), cell(b"r2", PUT)
    assert to_mutations([p1, d1, p2], POS) == [
        RowMutation(b"r1", Kind.PUT, (p1,), POS),
        RowMutation(b"r1", Kind.DELETE, (d1,), POS),
        RowMutation(b"r2", Kind.PUT, (p2,), POS),
    ]


def test_consecutive_cells_of_one_row_and_kind_share_a_mutation() -> None:
    cells = [cell(b"a", PUT, 1, b"x"), cell(b"a", PUT, 2, b"y"),
             cell(b"a", DEL, 3), cell(b"a", DCOL, 4), cell(b"a", DFAM, 5), cell(b"a", DFV, 6),
             cell(b"b", DCOL, 7), cell(b"a", PUT, 8)]
    got = to_mutations(cells, POS)
    assert [(m.row, m.kind, len(m.cells)) for m in got] == [
        (b"a", Kind.PUT, 2), (b"a", Kind.DELETE, 4), (b"b", Kind.DELETE, 1),
        (b"a", Kind.PUT, 1)]
    # every cell once, in WAL order, with its own timestamp and exact type
    flat = [c for m in got for c in m.cells]
    assert flat == cells
    assert [c.type for c in got[1].cells] == [DEL, DCOL, DFAM, DFV]
    assert [c.timestamp for c in flat] == [1, 2, 3, 4, 5, 6, 7, 8]


def test_an_entry_without_data_cells_gives_nothing() -> None:
    assert to_mutations([], POS) == []


@pytest.mark.parametrize("code", [0, 255, 13, 6])
def test_unknown_type_codes_fail_naming_file_offset_and_entry(code: int) -> None:
    bad = Cell(b"r", b"f", b"q", 1, code)
    with pytest.raises(UnknownCellTypeError) as info:
        to_mutations([cell(b"r", PUT), bad], POS)
    text = str(info.value)
    assert "wal.1" in text and "byte offset 120" in text and "entry #3" in text
    assert f"type code {code}" in text


def test_tags_are_counted() -> None:
    tagged = Cell(b"r", b"f", b"q", 1, CellType.PUT, b"v", (Tag(8, b"\x00\x00\x00\x01"),
                                                           Tag(1, b"acl")))
    assert count_tags([tagged, cell(b"r", PUT), tagged._replace(tags=(Tag(2, b""),))]) == 3
