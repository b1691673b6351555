"""Key ranges, their planning and the range digest, without a cluster."""

from __future__ import annotations

import hashlib
import struct

import pytest

from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.ranges.keyrange import KeyRange, RangeError
from hbase_migrate.ranges.plan import RangeCutter, split_region
from hbase_migrate.ranges.stats import digest_rows
from hbase_migrate.validate.run import bulk_loaded_region
from hbase_migrate.wal.model import Cell, CellType


def test_a_range_renders_its_bounds_in_hex_and_reads_back() -> None:
    r = KeyRange("orders", b"ab\x00", b"ac")
    assert str(r) == "orders [616200, 6163)"
    assert KeyRange("t").bounds == "[-inf, +inf)"
    assert KeyRange.parse(r.id) == r
    assert KeyRange.parse("6162-", "t") == KeyRange("t", b"ab", b"")
    with pytest.raises(RangeError, match=r"'t:zz-': non-hexadecimal.*bounds in hex"):
        KeyRange.parse("t:zz-")
    with pytest.raises(RangeError, match="start '62' is not before stop '61'"):
        KeyRange("t", b"b", b"a")


def test_regions_are_cut_at_rows_so_no_range_exceeds_the_budget() -> None:
    rows = [(b"r%d" % i, n) for i, n in enumerate([3, 3, 3, 5, 1, 9, 2])]
    planned = split_region("t", b"", b"z", rows, max_cells=6)
    bounds = [(p.range.start, p.range.stop, p.cells) for p in planned]
    # 3+3 | 3 | 5+1 | 9 (one row above the budget stays whole) | 2
    assert bounds == [(b"", b"r2", 6), (b"r2", b"r3", 3), (b"r3", b"r5", 6),
                      (b"r5", b"r6", 9), (b"r6", b"z", 2)]
    assert split_region("t", b"a", b"b", [], 5)[0].range == KeyRange("t", b"a", b"b")


def test_a_wide_row_in_pieces_is_cut_as_the_whole_row() -> None:
    cutter = RangeCutter("t", b"", 4)
    assert not cutter.seen
    for row, cells in [(b"a", 1), (b"b", 2), (b"b", 2), (b"c", 1)]:  # b: 4 cells, 2 pieces
        cutter.add(row, cells)
    assert cutter.seen
    # a's 1 | b's 4 (the budget, whole) | c's 1: b is judged whole, not by its first piece
    # (which would fit beside a's cell)
    assert [(p.range.start, p.range.stop, p.cells, p.rows) for p in cutter.end(b"z")] == [
        (b"", b"b", 1, 1), (b"b", b"c", 4, 1), (b"c", b"z", 1, 1)]


def _expected_digest(cells: list[Cell]) -> str:
    h = hashlib.sha256()
    for c in cells:
        for part in (c.row, c.family, c.qualifier):
            h.update(len(part).to_bytes(4, "big") + part)
        h.update(struct.pack(">q", c.timestamp) + bytes([c.type]))
        h.update(len(c.value).to_bytes(4, "big") + c.value)
    return h.hexdigest()


def test_the_digest_prefixes_lengths_and_follows_scan_order() -> None:
    r = KeyRange("t")
    a = Cell(b"ab", b"d", b"c", 5, CellType.PUT, b"v")
    b = Cell(b"a", b"d", b"bc", 5, CellType.PUT, b"v")
    assert digest_rows(r, [[a]]).digest != digest_rows(r, [[b]]).digest
    older = a._replace(timestamp=4, value=b"w")
    stats = digest_rows(r, [[older, a]])  # a row's cells arrive in any order
    assert (stats.rows, stats.cells) == (1, 2)
    assert stats.digest == _expected_digest([a, older])  # newest version first


def test_the_entry_points_parse_their_arguments() -> None:
    from spark_apps import checksum_ranges, copy_table

    copy = copy_table.parse_args(["--config", "m.toml", "--master", "spark://h:7077"])
    assert (copy.config, copy.watermark, copy.master) == ("m.toml", None, "spark://h:7077")
    check = checksum_ranges.parse_args(["--config", "m.toml", "--table", "a", "--table", "b",
                                        "--repair"])
    assert (check.table, check.repair, check.master) == (["a", "b"], True, None)


def test_a_bulk_loaded_region_is_found_by_its_start_key() -> None:
    """Region locations from HBase's Thrift2 carry region id 0: the start key the marker's
    row gives is what finds the region; an old record without it goes by encoded name."""
    regions = [RegionDescriptor("t", b"", b"g", 0), RegionDescriptor("t", b"g", b"", 0)]
    load = {"table": "t", "region": "5e4d", "file": "wal.1", "offset": 9}
    assert bulk_loaded_region(regions, {**load, "start_key": ""}) == regions[0]
    assert bulk_loaded_region(regions, {**load, "start_key": b"g".hex()}) == regions[1]
    assert bulk_loaded_region(regions, {**load, "region": regions[1].encoded_name}) == regions[1]
    with pytest.raises(RangeError, match=r"region 5e4d \(start key 6d\) of table t \(WAL wal.1 "
                                         r"at byte offset 9\): the source has no such region"):
        bulk_loaded_region(regions, {**load, "start_key": b"m".hex()})
