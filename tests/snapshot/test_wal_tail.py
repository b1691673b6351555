"""The WAL edits past a snapshot's store files (``snapshot/tail.py``), merged into a
region's scan as its memstore would hold them: on a golden store file real HBase 2.6.1
wrote (its ``MAX_SEQ_ID_KEY`` 5250) and a WAL written here."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor
from hbase_migrate.hfile.region import region_cells
from hbase_migrate.hfile.visible import ScanSpec
from hbase_migrate.snapshot.tail import TailError, WalSpan, read_tail
from hbase_migrate.wal.model import Cell, CellType, WalKey
from hbase_migrate.wal.writer import WalWriter
from tests.hfile.printout import GOLDEN

FILE_SEQ_ID = 5250
TS = 1_700_000_000_000


def key(region: bytes, seq: int, table: bytes = b"t", written: int = TS) -> WalKey:
    return WalKey(region, table, seq, written)


def test_the_edits_past_the_files_and_before_the_stop_change_the_scan(tmp_path: Path) -> None:
    wal = tmp_path / "host%2C16020%2C1.1700000000000"
    with WalWriter.create(wal) as writer:
        # below the file's sequence id: the file holds it already (a value it never had
        # would show if it were merged)
        writer.append(key(b"aaa", FILE_SEQ_ID - 1),
                      [Cell(b"r00001", b"f", b"q", TS + 1, CellType.PUT, b"stale")])
        # past it: a put of a cell the file has (the same key: it wins) and a marker
        writer.append(key(b"aaa", FILE_SEQ_ID + 10),
                      [Cell(b"r00002", b"f", b"q", TS + 2, CellType.PUT, b"newer")])
        writer.append(key(b"aaa", FILE_SEQ_ID + 11),
                      [Cell(b"r00003", b"f", b"q", TS + 3, CellType.DELETE_COLUMN)])
        writer.append(key(b"bbb", 7, table=b"other"),  # a table not migrated
                      [Cell(b"r00005", b"f", b"q", TS + 5, CellType.DELETE_COLUMN)])
        stop, _size = writer.append(key(b"aaa", FILE_SEQ_ID + 12),
                                    [Cell(b"r00004", b"f", b"q", TS + 4, CellType.PUT,
                                          b"past the replay's offset")])
    tail = read_tail([WalSpan(str(wal), 0, stop)], ["t"])
    assert tail.cells() == 3 and set(tail.regions) == {("t", "aaa")}

    families = [FamilyDescriptor(b"f", max_versions=1)]
    scan = ScanSpec(now_ms=0)
    files = {b"f": [GOLDEN / "multiblock"]}
    alone = list(region_cells(files, families, scan))
    merged = list(region_cells(files, families, scan,
                               newer=functools.partial(tail.newer, "t", "aaa")))
    # expected: the file's scan with r00002's value replaced and r00003 gone
    expected = [c._replace(value=b"newer") if c.row == b"r00002" else c
                for c in alone if c.row != b"r00003"]
    assert {c.row for c in alone} >= {b"r00001", b"r00002", b"r00003", b"r00004"}
    assert merged == expected

    with pytest.raises(TailError, match="region aaa, which the snapshot does not have"):
        tail.check("t", ["zzz"])
    tail.check("other", ["zzz"])  # another table's regions are not this one's business


def test_a_region_the_snapshot_lacks_is_refused_only_when_it_wrote_after_it(
        tmp_path: Path) -> None:
    """A parent split before the snapshot (its daughters' files hold its edits) is left
    out; a region that wrote once the snapshot was asked for cannot be placed."""
    wal = tmp_path / "host%2C16020%2C1.1700000000000"
    cell = Cell(b"r1", b"f", b"q", TS, CellType.PUT, b"v")
    with WalWriter.create(wal) as writer:
        writer.append(key(b"parent", 10, written=TS - 5), [cell])
        writer.append(key(b"daughter", 20, written=TS + 5), [cell])
        end = writer.tell()
    tail = read_tail([WalSpan(str(wal), 0, end)], ["t"], since=TS)
    tail.check("t", ["daughter"])  # the parent wrote only before: left out
    with pytest.raises(TailError, match="region daughter"):
        tail.check("t", ["parent"])
