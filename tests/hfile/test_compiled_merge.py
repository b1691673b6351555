"""The compiled merge and the compiled scan cut into rows (``_visible.pyx``) against their
pure-Python references (``merge.reference_merged_cells``; ``merged_cells``, ``visible_cells``
and ``itertools.groupby`` in ``region.rows_of``) on generated regions: several files per
family, two families, halves of split files, bulk-loaded files (their cells taking the
file's sequence id, or not), WAL cells newer than the files, a read from a row and up to a
row, and faults: cells out of order, of another family, MOB references. Each store file is
a stand-in reader handing out its cells a block at a time as ``HFileReader`` does, with the
block's offset; results and errors (type, message, file, offset) must be the same."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.hfile.merge import StoreFile, merged_cells, reference_merged_cells
from hbase_migrate.hfile.reference import Half
from hbase_migrate.hfile.region import rows_of
from hbase_migrate.hfile.visible import VISIBLE, FamilyRules, ScanSpec
from hbase_migrate.wal.model import Cell, Tag

ROWS = [b"a", b"b", b"bb", b"c"]
KINDS = [4, 4, 4, 8, 12, 14]


class StandIn:
    """What the merge reads of an ``HFileReader``: its name, file info, and cells a block
    at a time from a row, ``block_offset`` the block's (100 per block)."""

    def __init__(self, name: str, info: dict[bytes, bytes], blocks: list[list[StoreCell]]):
        self.name, self.file_info, self.blocks = name, info, blocks
        self.block_offset = 0

    def cells_by_block(self, start: bytes = b"") -> Iterator[list[StoreCell]]:
        for at, block in enumerate(self.blocks):
            self.block_offset = 100 * at
            yield [c for c in block if c.cell.row >= start]

    def cells(self, start: bytes = b"") -> Iterator[StoreCell]:
        for block in self.cells_by_block(start):
            yield from block


def key(s: StoreCell) -> tuple[bytes, bytes, bytes, int, int, int]:
    c = s.cell
    return (c.row, c.family, c.qualifier, -c.timestamp, -c.type, -s.mvcc)


@st.composite
def store_files(draw: Any, family: bytes, number: int) -> dict[str, Any]:
    """A store file's description: its cells (sorted, unless drawn out of order), blocks,
    name, file info and half."""
    cells = draw(st.lists(st.builds(
        lambda row, q, ts, kind, tags, mvcc: StoreCell(
            Cell(row, family, q, ts, kind, b"v%d" % ts, tags), mvcc),
        st.sampled_from(ROWS), st.sampled_from([b"q", b"r"]),
        st.one_of(st.integers(0, 5), st.just(-(1 << 63)), st.just((1 << 63) - 1)),
        st.sampled_from(KINDS), st.sampled_from([(), (), (), (Tag(5, b"mob"),)]),
        st.integers(0, 9)), max_size=12))
    cells.sort(key=key)
    fault = draw(st.sampled_from(["none"] * 8 + ["order", "family"]))
    if fault == "order" and len(cells) > 1:
        at = draw(st.integers(0, len(cells) - 2))
        if key(cells[at])[:5] != key(cells[at + 1])[:5]:
            cells[at], cells[at + 1] = cells[at + 1], cells[at]
    elif fault == "family" and cells:
        at = draw(st.integers(0, len(cells) - 1))
        cells[at] = StoreCell(cells[at].cell._replace(family=b"x"), cells[at].mvcc)
    size = draw(st.integers(1, 4))
    bulk = draw(st.sampled_from(["no", "name", "info", "info-skip"]))
    seq = draw(st.integers(0, 6))
    name = f"{family.decode()}{number}" + (f"_SeqId_{seq}_" if bulk == "name" else "")
    info = {b"MAX_SEQ_ID_KEY": seq.to_bytes(8, "big")}
    if bulk.startswith("info"):
        info[b"BULKLOAD_TIMESTAMP"] = b"\x00" * 8
    if bulk == "info-skip":
        info[b"SKIP_RESET_SEQ_ID"] = b"\x01"
    half = draw(st.one_of(st.none(), st.builds(Half, st.sampled_from(ROWS), st.booleans())))
    return {"family": family, "name": name, "info": info, "half": half,
            "blocks": [cells[i:i + size] for i in range(0, len(cells), size)]}


def opened(files: list[dict[str, Any]]) -> list[StoreFile]:
    return [StoreFile(f["family"], StandIn(f["name"], f["info"], f["blocks"]),  # type: ignore[arg-type]
                      f["half"]) for f in files]


REGIONS = st.tuples(st.integers(1, 3), st.integers(0, 2)).flatmap(lambda counts: st.tuples(
    *[store_files(b"f", n) for n in range(counts[0])],
    *[store_files(b"g", n) for n in range(counts[1])])).map(list)
NEWER = st.lists(st.builds(lambda row, q, ts, kind, mvcc: StoreCell(
    Cell(row, b"f", q, ts, kind, b"w%d" % ts), mvcc), st.sampled_from(ROWS),
    st.sampled_from([b"q", b"s"]), st.integers(0, 5), st.sampled_from(KINDS),
    st.integers(10, 12)), max_size=5).map(lambda cells: sorted(cells, key=key))
FROM = st.sampled_from([b"", b"", b"b", b"bb", b"d"])


def outcome(run: Callable[[], list[Any]]) -> tuple[str, Any]:
    """The run's result, or its error as what the tests compare of it."""
    try:
        return "cells", run()
    except Exception as exc:
        return "error", (type(exc), str(exc), getattr(exc, "file", None),
                         getattr(exc, "offset", None))


def compiled_module() -> Any:
    if VISIBLE.module is None:
        pytest.skip("the compiled scan matcher is not built")
    return VISIBLE.module


def under(implementation: str, run: Callable[[], list[Any]]) -> tuple[str, Any]:
    before = VISIBLE.implementation()
    VISIBLE.use(implementation)  # type: ignore[arg-type]
    try:
        return outcome(run)
    finally:
        VISIBLE.use(before)


@settings(max_examples=150, deadline=None)
@given(REGIONS, NEWER, FROM, st.booleans())
def test_the_compiled_merge_gives_the_references_cells_and_errors(
        files: list[dict[str, Any]], newer: list[StoreCell], start: bytes, mob: bool) -> None:
    compiled_module()
    expected = outcome(lambda: list(reference_merged_cells(opened(files), mob, newer, start)))
    found = under("compiled", lambda: list(merged_cells(opened(files), mob, newer, start)))
    assert found == expected
    if found[0] == "cells":  # the same types too: a bulk-loaded file's cells made anew
        assert [type(s) for s in found[1]] == [StoreCell] * len(found[1])


RULES = st.builds(FamilyRules, st.integers(1, 3), st.integers(0, 1),
                  st.one_of(st.none(), st.integers(0, 4)), st.sampled_from(["FALSE", "TRUE"]))


@settings(max_examples=150, deadline=None)
@given(REGIONS, NEWER, FROM, st.sampled_from([b"", b"", b"b", b"c", b"bb"]), RULES, RULES,
       st.booleans())
def test_the_compiled_rows_are_the_references(
        files: list[dict[str, Any]], newer: list[StoreCell], start: bytes, stop: bytes,
        f_rules: FamilyRules, g_rules: FamilyRules, mob: bool) -> None:
    compiled_module()
    rules = {b"f": f_rules, b"g": g_rules}
    scan = ScanSpec(now_ms=3, max_versions=1 << 30)
    resolve = (lambda cell: cell._replace(value=b"resolved", tags=())) if mob else None

    def run() -> list[Any]:
        return list(rows_of(opened(files), rules, scan, start, stop, newer, resolve))

    expected = under("python", run)
    assert under("compiled", run) == expected
    if expected[0] == "cells":  # the rows: the reference's cells of [start, stop), cut by row
        rows = expected[1]
        assert all(len({c.row for c in row}) == 1 for row in rows)
        assert [r[0].row for r in rows] == sorted({r[0].row for r in rows})
        assert all(c.row >= start and (not stop or c.row < stop) for r in rows for c in r)


def test_a_bottom_half_is_not_read_past_its_split_row() -> None:
    """The bottom half of a file whose cells after the split row are out of order: neither
    merge reads them (``_keyed`` stops at the split row)."""
    compiled_module()
    cells = [StoreCell(Cell(row, b"f", b"q", 1, 4), 0) for row in (b"a", b"c", b"b")]
    files: list[dict[str, Any]] = [{"family": b"f", "name": "f0", "info": {},
                                    "half": Half(b"c", False), "blocks": [cells[:1], cells[1:]]}]
    expected = [cells[0]]
    assert list(reference_merged_cells(opened(files))) == expected
    assert under("compiled", lambda: list(merged_cells(opened(files)))) == ("cells", expected)


def test_rows_stop_at_the_stop_row_before_a_fault_past_it() -> None:
    """A read up to row ``c`` stops at the first cell of ``c``, before the family rules
    (that cell a delete marker, which the scan does not return): the out-of-order cell
    after it is not read, by either implementation."""
    cells = [StoreCell(Cell(row, b"f", b"q", 1, 4), 0) for row in (b"a", b"a", b"c", b"b")]
    cells[1] = StoreCell(cells[1].cell._replace(qualifier=b"r"), 0)
    cells[2] = StoreCell(cells[2].cell._replace(type=8), 0)
    files: list[dict[str, Any]] = [{"family": b"f", "name": "f0", "info": {}, "half": None,
                                    "blocks": [cells]}]
    rules = {b"f": FamilyRules()}

    def run() -> list[Any]:
        return list(rows_of(opened(files), rules, ScanSpec(now_ms=3), b"", b"c"))

    assert under("python", run) == ("cells", [[cells[0].cell, cells[1].cell]])
    if VISIBLE.module is not None:
        assert under("compiled", run) == ("cells", [[cells[0].cell, cells[1].cell]])


def test_the_rows_of_two_families_are_one_list_per_row() -> None:
    """A row's cells of both families in one list, each family's rules applied."""
    f = [StoreCell(Cell(row, b"f", b"q", ts, 4, b"%d" % ts), 0)
         for row in (b"a", b"b") for ts in (2, 1)]
    g = [StoreCell(Cell(b"a", b"g", b"q", 1, 4), 0)]
    files: list[dict[str, Any]] = [
        {"family": b"f", "name": "f0", "info": {}, "half": None, "blocks": [f]},
        {"family": b"g", "name": "g0", "info": {}, "half": None, "blocks": [g]}]
    rules = {b"f": FamilyRules(max_versions=1), b"g": FamilyRules()}
    expected = [[f[0].cell, g[0].cell], [f[2].cell]]  # the newest version of each column
    for implementation in ("python", "compiled"):
        if implementation == "compiled" and VISIBLE.module is None:
            continue
        found = under(implementation, lambda: list(
            rows_of(opened(files), rules, ScanSpec(now_ms=3), b"", b"")))
        assert found == ("cells", expected)
