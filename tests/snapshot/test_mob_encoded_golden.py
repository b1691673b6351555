"""An encoded MOB table's snapshot read from its files (``tests/data/real-mob-encoded``:
written by real HBase 2.6.1, ``make golden-mob``), as ``validate --from snapshot`` reads the
source: store and MOB files whose tags HBase compressed (FAST_DIFF and DIFF families,
``COMPRESS_TAGS`` on by default), cells with their own TTL, some expired. Every range's
rows, cells and digest equal those of the table as HBase's Java client scanned it."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from hbase_migrate.cluster.storage.hdfs_files import HdfsRoot
from hbase_migrate.hfile.decoders import CELLS
from hbase_migrate.hfile.mob import MOB_REFERENCE_TAG
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.hfile.visible import TTL_TAG_TYPE
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.stats import digest_rows
from hbase_migrate.snapshot.read import range_rows, read_snapshot, snapshot_range_stats
from hbase_migrate.wal.model import Cell, Tag
from minihbase.webhdfs import WebHdfsServer
from tests.hfile.conftest import _each

pytestmark = pytest.mark.integration
GOLDEN = Path(__file__).resolve().parents[1] / "data" / "real-mob-encoded"
EXPECTED = json.loads((GOLDEN / "expected.json").read_text(encoding="utf-8"))
TABLE, SNAPSHOT = EXPECTED["table"], EXPECTED["snapshot"]
NOW = EXPECTED["scanned_at_ms"]  # when HBase's scan ran: the one-second TTLs had run out


def expected_cells() -> list[Cell]:
    return [Cell(bytes.fromhex(r), bytes.fromhex(f), bytes.fromhex(q), ts, kind,
                 bytes.fromhex(v), tuple(Tag(t, bytes.fromhex(x)) for t, x in tags))
            for r, f, q, ts, kind, v, tags in EXPECTED["cells"]]


def rows_of(cells: list[Cell], key_range: KeyRange) -> Iterator[list[Cell]]:
    inside = [c for c in cells if key_range.contains(c.row)]
    for _row, row in itertools.groupby(inside, key=lambda c: c.row):
        yield list(row)


@pytest.fixture(params=["python", "compiled"])
def both_decoders(request: pytest.FixtureRequest) -> Iterator[str]:
    """The pure-Python data block decoders, then the compiled ones."""
    yield from _each(CELLS, request)


@pytest.fixture
def root() -> Iterator[HdfsRoot]:
    with WebHdfsServer(GOLDEN / "root", hbase_root="/hbase") as server:
        yield HdfsRoot(server.url, "/hbase", "source")


@pytest.mark.usefixtures("both_decoders")
def test_the_golden_holds_compressed_tags_ttls_and_mob_references() -> None:
    """What the test stands on: every file HBase wrote, store file or MOB file, says its
    tags are compressed and is read whole; among the cells are TTL tags, and the MOB
    family's reference cells carry tag 5 beside the TTL of the cell they stand for."""
    files = [p for p in (GOLDEN / "root").rglob("*") if p.is_file()
             and p.parent.name in ("m", "f") and "/data/" in p.as_posix()]
    assert len(files) == 10  # 4 MOB files, 4 store files of m, 2 of f
    kinds: set[tuple[str, frozenset[int]]] = set()
    for path in files:
        with HFileReader(path) as reader:
            assert reader.compressed_tags, path
            encoding = reader.file_info[b"DATA_BLOCK_ENCODING"]
            assert encoding == (b"FAST_DIFF" if path.parent.name == "m" else b"DIFF")
            kinds |= {(path.parent.name, frozenset(t.type for t in s.cell.tags))
                      for s in reader.cells()}
    assert ("f", frozenset({TTL_TAG_TYPE})) in kinds
    assert ("m", frozenset({MOB_REFERENCE_TAG, 6, TTL_TAG_TYPE})) in kinds


def test_expired_cells_are_not_in_hbases_scan() -> None:
    """The golden's expectation holds no cell of one second's TTL: HBase's scan hid them."""
    cells = expected_cells()
    assert not [c for c in cells if c.qualifier == b"brief"]
    assert len([c for c in cells if any(t.type == TTL_TAG_TYPE for t in c.tags)]) >= 25


@pytest.mark.usefixtures("both_decoders")
@pytest.mark.parametrize("bounds", [(b"", b""), (b"", b"row-5"), (b"row-5", b""),
                                    (b"row-2", b"row-8")])
def test_ranges_read_from_the_snapshot_equal_hbases_scan(root: HdfsRoot, tmp_path: Path,
                                                         bounds: tuple[bytes, bytes]) -> None:
    key_range = KeyRange(TABLE, *bounds)
    expected = digest_rows(key_range, rows_of(expected_cells(), key_range))
    assert expected.cells > 0
    assert snapshot_range_stats(root, SNAPSHOT, key_range, NOW, scratch=tmp_path) == expected


def test_cells_and_plain_family_tags_are_hbases(root: HdfsRoot, tmp_path: Path) -> None:
    """Cell for cell as HBase scanned them; the plain family's with their TTL tags as HBase
    returned them (a MOB cell's tags are those of its reference, not compared)."""
    regions, descriptor = read_snapshot(root, SNAPSHOT)
    rows = range_rows(root, SNAPSHOT, regions, descriptor.families, KeyRange(TABLE), NOW,
                      scratch=tmp_path)
    got = [c for row in rows for c in row]
    expected = expected_cells()
    assert [c._replace(tags=()) for c in got] == [c._replace(tags=()) for c in expected]
    assert [c for c in got if c.family == b"f"] == [c for c in expected if c.family == b"f"]


def expired(cell: Cell, now_ms: int) -> bool:
    """HBase's rule for a cell's own TTL (``ScanQueryMatcher.isCellTTLExpired``): its first
    TTL tag, a long of ms, has run out when timestamp + TTL < now."""
    ttl = next((t.value for t in cell.tags if t.type == TTL_TAG_TYPE), None)
    return ttl is not None and cell.timestamp + int.from_bytes(ttl, "big", signed=True) < now_ms


@pytest.mark.parametrize("days_later", [10, 11])
def test_ttls_read_from_compressed_tags_hide_the_cells_they_outlive(
        root: HdfsRoot, tmp_path: Path, days_later: int) -> None:
    """Read ten days after the cells were written (five ms more), the plain family's first
    five rows have run out (their TTLs are ten days and i ms) and so have the MOB family's
    cells but row-3's newer, TTL-less version; eleven days after, every tagged cell: each
    TTL is the cell's own, read from the compressed tags of its store file."""
    written = min(c.timestamp for c in expected_cells())
    now = written + days_later * 86_400_000 + (5 if days_later == 10 else 0)
    key_range = KeyRange(TABLE)
    kept = [c for c in expected_cells() if not expired(c, now)]
    assert 0 < len(kept) < len(expected_cells())
    expected = digest_rows(key_range, rows_of(kept, key_range))
    assert snapshot_range_stats(root, SNAPSHOT, key_range, now, scratch=tmp_path) == expected
