"""A window of WAL edits as one sorted HFile per target region and family
(``replay/bulkfiles.py``), read back by the project's reader: every cell in the file of its
region, in HBase's order, the last of a key written more than once kept, the family's
settings in each file. Real HBase loading such files and reading them as the write path
would leave them: ``tests/realstack/test_bulk_window_real.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.replay.bulkfiles import BulkWindow, BulkWindowError
from hbase_migrate.replay.mutations import WalPosition, to_mutations
from hbase_migrate.wal.model import Cell, CellType
from tests.replay.bulk_window_cells import ENTRIES, REGIONS, TABLE, T, marker, put


def window() -> BulkWindow:
    win = BulkWindow(TABLE, REGIONS)
    for n, cells in enumerate(ENTRIES):
        win.add(to_mutations(cells, WalPosition("wal.1", n * 100, n)))
    return win


def read(path: Path) -> tuple[list[Cell], dict[bytes, bytes]]:
    with HFileReader(path) as reader:
        return [s.cell for s in reader.cells()], reader.file_info


def test_one_sorted_file_per_region_and_family(tmp_path: Path) -> None:
    win = window()
    assert win.count == 11
    files = win.write(tmp_path, "window-7", loaded_at=T)
    assert win.count == 0  # emptied
    found = {(f.region.start_key, f.family): read(f.path)[0] for f in files}
    assert found == {
        (b"", b"f"): [put(b"", b"empty-row", T, b"e"),
                      put(b"apple", b"a", T + 1, b"second"),
                      marker(b"apple", b"a", T, CellType.DELETE)],
        (b"h", b"f"): [marker(b"hat", b"", T + 4, CellType.DELETE_FAMILY_VERSION),
                       marker(b"mango", b"", T + 9, CellType.DELETE_FAMILY),
                       put(b"mango", b"a", T, b"m1"), put(b"mango", b"a", T - 5, b"m0")],
        (b"h", b"g"): [marker(b"hat", b"x", T + 3, CellType.DELETE_COLUMN, b"g")],
        (b"p", b"f"): [put(b"zebra", b"a", T, b"z1")],
        (b"p", b"g"): [put(b"zebra", b"b", T, b"z2", b"g")],
    }
    assert [f.cells for f in files] == [len(c) for c in found.values()]
    assert {f.path.parent.name for f in files} == {"f", "g"}  # FOLDER/FAMILY/ as tools take


def test_files_carry_the_family_settings_and_bulk_load_info(tmp_path: Path) -> None:
    files = {(f.region.start_key, f.family): f for f in window().write(tmp_path, "w7")}
    _cells, info = read(files[(b"", b"f")].path)
    assert info[b"DATA_BLOCK_ENCODING"] == b"FAST_DIFF"
    assert info[b"BLOOM_FILTER_TYPE"] == b"ROW"
    assert info[b"hfile.TAGS_COMPRESSED"] == b"\xff"
    assert info[b"BULKLOAD_SOURCE_TASK"] == b"w7"
    assert b"MAX_SEQ_ID_KEY" not in info
    with HFileReader(files[(b"", b"f")].path) as reader:
        assert reader.trailer.compression == 1  # GZ
    _cells, info_g = read(files[(b"h", b"g")].path)
    assert info_g[b"BLOOM_FILTER_TYPE"] == b"ROWCOL"
    assert b"DATA_BLOCK_ENCODING" not in info_g


def test_a_family_the_target_lacks_is_refused() -> None:
    win = BulkWindow(TABLE, REGIONS)
    with pytest.raises(BulkWindowError, match="no family 'x'"):
        win.add_cells([put(b"r", b"q", T, b"v", b"x")])


def test_regions_must_cover_the_first_key() -> None:
    with pytest.raises(BulkWindowError, match="first key"):
        BulkWindow(TABLE, REGIONS[1:2])
