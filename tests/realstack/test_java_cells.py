"""The Java dump's reader and comparison (no JVM): the lines HBase's Java client prints
become cells and regions, and two dumps that differ by a value, a version, a marker or a
repeated cell are told apart, naming what is missing and what is extra."""

from __future__ import annotations

from hbase_migrate.wal.model import Cell, CellType, Tag
from tests.realstack.java_cells import cells_of, differences, regions_of

PUT = Cell(b"r1", b"f", b"q", 101, CellType.PUT, b"v")
MARKER = Cell(b"r1", b"f", b"", 100, CellType.DELETE_FAMILY, b"")


def test_the_lines_become_cells() -> None:
    lines = ["CELL raw 7231 66 x71 101 4 x76", "CELL raw 7231 66 x 100 14 x",
             "CELL visible 7231 66 x71 101 4 x76", "END 1 2"]
    assert cells_of(lines, "raw") == [PUT, MARKER]
    assert cells_of(lines, "visible") == [PUT]


def test_a_tags_field_becomes_the_cells_tags() -> None:
    """With a codec asked for, each line ends with the tags area: per tag an int16 length
    (type and value), the type byte, the value; ``x`` alone: none."""
    lines = ["CELL raw 7231 66 x71 101 4 x76 x0003c86463000108",
             "CELL raw 7231 66 x 100 14 x x"]
    assert cells_of(lines, "raw") == [PUT._replace(tags=(Tag(200, b"dc"), Tag(8, b""))),
                                      MARKER]


def test_the_region_lines_become_regions() -> None:
    lines = ["CELL raw 7231 66 x71 101 4 x76", "REGION x x67 localhost 16020",
             "REGION x67 x localhost 16021", "END 1 1"]
    assert regions_of(lines) == [(b"", b"g", "localhost", 16020), (b"g", b"", "localhost", 16021)]
    assert cells_of(lines, "raw") == [PUT]  # region lines are no cells


def test_dumps_that_differ_are_told_apart() -> None:
    assert differences([PUT, MARKER], [PUT, MARKER]) == ""
    changed = PUT._replace(value=b"w")
    assert differences([PUT, MARKER], [changed, MARKER]) == (
        f"2 cells expected, 2 found; 1 missing {[PUT]}; 1 extra {[changed]}")
    older = PUT._replace(timestamp=99)
    assert "1 extra" in differences([PUT], [PUT, older])
    assert "1 missing" in differences([PUT, MARKER], [PUT])
    assert differences([PUT], [PUT, PUT]) == "1 cells expected, 2 found; 0 missing []; 0 extra []"
