"""The compiled range digest (``ranges/_digest.pyx``) against the pure-Python reference
(``stats.reference_digest_rows``): rows in pieces, pieces out of scan order, empty pieces and
fields, large values and keys, every cell type; and a digest written out from the documented
layout, which both must give."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.stats import DIGEST, digest_rows, reference_digest_rows
from hbase_migrate.wal.model import Cell, CellType, Tag

RANGE = KeyRange("t")
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1
TYPES = st.sampled_from([4, 8, 10, 12, 14])
CELLS = st.builds(
    Cell, st.sampled_from([b"a", b"b", b"ab", b""]), st.sampled_from([b"f", b"g", b""]),
    st.sampled_from([b"q", b"r", b"", b"qq"]),
    st.one_of(st.integers(0, 4), st.sampled_from([LONG_MIN, LONG_MAX, -1])), TYPES,
    st.one_of(st.binary(max_size=8), st.sampled_from([b"", b"x" * 70_000])),
    st.sampled_from([(), (Tag(1, b"t"),)]))


def compiled() -> Any:
    if DIGEST.module is None:
        pytest.skip("the compiled range digest is not built")
    return DIGEST.module


def both(pieces: list[list[Cell]]) -> tuple[tuple[int, int, str], tuple[int, int, str]]:
    ref = reference_digest_rows(RANGE, pieces)
    return compiled().digest_rows(pieces), (ref.rows, ref.cells, ref.digest)


def pieces_of(cells: list[Cell], cuts: list[int]) -> list[list[Cell]]:
    """``cells`` grouped by row in row order, each row cut into pieces at ``cuts``."""
    rows: dict[bytes, list[Cell]] = {}
    for cell in cells:
        rows.setdefault(cell.row, []).append(cell)
    pieces: list[list[Cell]] = []
    for n, row in enumerate(sorted(rows)):
        whole = rows[row]
        cut = cuts[n % len(cuts)] % (len(whole) + 1) if cuts else len(whole)
        pieces += [whole[:cut], whole[cut:]]  # one may be empty
    return pieces


@settings(max_examples=300, deadline=None)
@given(st.lists(CELLS, max_size=30), st.lists(st.integers(0, 30), max_size=4),
       st.booleans())
def test_the_compiled_digest_is_the_references(cells: list[Cell], cuts: list[int],
                                               ordered: bool) -> None:
    if ordered:  # scan order, as a scan hands it; otherwise as drawn (sorted per piece)
        cells = sorted(cells, key=lambda c: (c.row, c.family, c.qualifier, -c.timestamp,
                                             -c.type))
    got, expected = both(pieces_of(cells, cuts))
    assert got == expected


def test_hand_cases_give_the_references_statistics() -> None:
    a = Cell(b"r", b"f", b"q", 5, 4, b"v")
    cases = [
        [],
        [[]],
        [[], [a], []],
        [[a._replace(timestamp=4), a]],  # out of order in one piece
        [[a], [a._replace(qualifier=b"r")]],  # one row in two pieces
        [[a], [], [a._replace(qualifier=b"r")]],
        [[a._replace(row=b"", family=b"", qualifier=b"", value=b"")]],
        [[a._replace(value=b"\x00" * (1 << 19))], [a._replace(row=b"s")]],  # beyond the buffer
        [[a._replace(qualifier=b"k" * (1 << 19))]],  # a key beyond the buffer
        [[a._replace(value=b"y" * 1000, row=b"r%05d" % i)] for i in range(600)],  # many flushes
        [[a._replace(type=kind) for kind in (14, 12, 10, 8, 4)]],
        [[a._replace(type=kind) for kind in (4, 8, 10, 12, 14)]],
        [(a, a._replace(timestamp=LONG_MAX), a._replace(timestamp=LONG_MIN))],  # a tuple piece
        [[a._replace(type=CellType.DELETE_COLUMN), a._replace(type=CellType.PUT)]],
    ]
    for pieces in cases:
        got, expected = both(pieces)  # type: ignore[arg-type]
        assert got == expected, pieces[:2]


def test_a_bytes_like_field_hashes_as_its_bytes() -> None:
    cell = Cell(b"r", b"f", b"q", 1, 4, b"v")
    odd: Any = Cell(bytearray(b"r"), memoryview(b"f"), b"q", 1, 4, bytearray(b"v"))
    assert compiled().digest_rows([[odd]]) == compiled().digest_rows([[cell]])


def test_cells_that_do_not_fit_the_layout_are_refused() -> None:
    with pytest.raises(Exception, match="timestamp does not fit"):
        compiled().digest_rows([[Cell(b"r", b"f", b"q", 1 << 63, 4)]])
    with pytest.raises(Exception, match="type code does not fit"):
        compiled().digest_rows([[Cell(b"r", b"f", b"q", 1, 256)]])


def test_both_give_the_digest_of_the_documented_layout() -> None:
    cells = [Cell(b"row1", b"cf", b"a", 1700000000000, 4, b"hello"),
             Cell(b"row1", b"cf", b"a", 1699999999999, 12),
             Cell(b"row2", b"", b"", -1, 14, b"\xff" * 3)]
    layout = (  # length (4 bytes, big-endian) and bytes of row, family, qualifier; timestamp
        # (8, signed big-endian), type (1); length and bytes of the value
        b"\x00\x00\x00\x04row1" b"\x00\x00\x00\x02cf" b"\x00\x00\x00\x01a"
        b"\x00\x00\x01\x8b\xcf\xe5\x68\x00" b"\x04" b"\x00\x00\x00\x05hello"
        b"\x00\x00\x00\x04row1" b"\x00\x00\x00\x02cf" b"\x00\x00\x00\x01a"
        b"\x00\x00\x01\x8b\xcf\xe5\x67\xff" b"\x0c" b"\x00\x00\x00\x00"
        b"\x00\x00\x00\x04row2" b"\x00\x00\x00\x00" b"\x00\x00\x00\x00"
        b"\xff\xff\xff\xff\xff\xff\xff\xff" b"\x0e" b"\x00\x00\x00\x03\xff\xff\xff")
    golden = hashlib.sha256(layout).hexdigest()
    pieces = [[cells[1], cells[0]], [cells[2]]]  # the first piece out of order
    assert reference_digest_rows(RANGE, pieces).digest == golden
    assert digest_rows(RANGE, pieces).digest == golden
    assert compiled().digest_rows(pieces) == (2, 3, golden)


@pytest.mark.parametrize(("env", "expected"), [("0", "compiled"), ("1", "python")])
def test_the_environment_chooses_the_digest(env: str, expected: str) -> None:
    compiled()
    out = subprocess.run(
        [sys.executable, "-c",
         "from hbase_migrate.ranges.stats import DIGEST; print(DIGEST.implementation())"],
        env={**os.environ, "HBASE_MIGRATE_PURE_PYTHON": env}, capture_output=True, text=True,
        check=True)
    assert out.stdout.strip() == expected
