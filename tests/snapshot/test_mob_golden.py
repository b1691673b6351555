"""A MOB table's snapshot read from its files (``tests/data/real-mob``: written by real HBase
2.6.1, ``make golden-mob``): the reference cells its store files hold resolve to the values
of its MOB files, so every range's rows, cells and digest equal those of the table as
HBase's Java client scanned it; a MOB file gone is refused in one line naming the
reference and the two places looked in."""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from hbase_migrate.cluster.storage.hdfs_files import HdfsRoot
from hbase_migrate.errors import HFileError, HFileUnsupportedError
from hbase_migrate.hfile.mob import MOB_REFERENCE_TAG, mob_region
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.hfile.region import region_cells
from hbase_migrate.hfile.visible import ScanSpec
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.stats import digest_rows
from hbase_migrate.snapshot.manifest import parse_manifest
from hbase_migrate.snapshot.read import read_snapshot, snapshot_range_stats
from hbase_migrate.wal.model import Cell
from minihbase.webhdfs import WebHdfsServer

pytestmark = pytest.mark.integration
GOLDEN = Path(__file__).resolve().parents[1] / "data" / "real-mob"
EXPECTED = json.loads((GOLDEN / "expected.json").read_text(encoding="utf-8"))
TABLE, SNAPSHOT = EXPECTED["table"], EXPECTED["snapshot"]
NOW = 2**62  # no TTL here: any time reads every cell


def expected_cells() -> list[Cell]:
    return [Cell(bytes.fromhex(r), bytes.fromhex(f), bytes.fromhex(q), ts, kind,
                 bytes.fromhex(v)) for r, f, q, ts, kind, v in EXPECTED["cells"]]


def rows_of(cells: list[Cell], key_range: KeyRange) -> Iterator[list[Cell]]:
    inside = [c for c in cells if key_range.contains(c.row)]
    for _row, row in itertools.groupby(inside, key=lambda c: c.row):
        yield list(row)


def served(folder: Path) -> Iterator[HdfsRoot]:
    with WebHdfsServer(folder, hbase_root="/hbase") as server:
        yield HdfsRoot(server.url, "/hbase", "source")


@pytest.fixture
def root() -> Iterator[HdfsRoot]:
    yield from served(GOLDEN / "root")


def test_the_golden_holds_mob_references_in_its_mob_region() -> None:
    """What the test stands on: HBase wrote reference cells (tag 5) into the store files,
    and its MOB files sit in the folder of the MOB region our code names."""
    references = 0
    for path in (GOLDEN / "root" / "data").rglob("*"):
        if path.is_file() and path.parent.name == "m":
            with HFileReader(path) as reader:
                references += sum(any(t.type == MOB_REFERENCE_TAG for t in s.cell.tags)
                                  for s in reader.cells())
    assert references >= 10
    assert [p.name for p in (GOLDEN / "root" / "mobdir/data/default" / TABLE).iterdir()] == [
        mob_region(TABLE)]


@pytest.mark.parametrize("bounds", [(b"", b""), (b"", b"row-5"), (b"row-5", b""),
                                    (b"row-2", b"row-8")])
def test_ranges_read_from_the_snapshot_equal_hbases_scan(root: HdfsRoot, tmp_path: Path,
                                                         bounds: tuple[bytes, bytes]) -> None:
    key_range = KeyRange(TABLE, *bounds)
    expected = digest_rows(key_range, rows_of(expected_cells(), key_range))
    assert expected.cells > 0
    assert snapshot_range_stats(root, SNAPSHOT, key_range, NOW, scratch=tmp_path) == expected


def test_without_a_resolver_a_reference_is_refused_naming_the_file(root: HdfsRoot) -> None:
    regions, descriptor = read_snapshot(root, SNAPSHOT)
    assert len(regions) == 2  # the MOB region is not among them
    files = sorted(p for p in (GOLDEN / "root" / "data").rglob("*")
                   if p.is_file() and p.parent.name == "m")
    with pytest.raises(HFileUnsupportedError, match="MOB reference cell"):
        list(region_cells({b"m": files[:2]}, descriptor.families, ScanSpec(now_ms=NOW)))


def test_a_mob_file_gone_is_refused_in_one_line(tmp_path: Path) -> None:
    copy = tmp_path / "root"
    shutil.copytree(GOLDEN / "root", copy)
    mob_folder = copy / "mobdir/data/default" / TABLE / mob_region(TABLE) / "m"
    for mob_file in mob_folder.iterdir():
        mob_file.unlink()
    for root in served(copy):
        with pytest.raises(HFileError) as caught:
            snapshot_range_stats(root, SNAPSHOT, KeyRange(TABLE), NOW, scratch=tmp_path)
    message = str(caught.value)
    assert "\n" not in message and "MOB reference cell b'row-0'/b'm':b'big'" in message
    assert f"mobdir/data/default/{TABLE}/{mob_region(TABLE)}/m/" in message
    assert f"archive/data/default/{TABLE}/{mob_region(TABLE)}/m/" in message
    assert message.endswith("validate from the live source")


def test_an_archived_mob_file_is_read_from_the_archive(tmp_path: Path) -> None:
    copy = tmp_path / "root"
    shutil.copytree(GOLDEN / "root", copy)
    live = copy / "mobdir/data/default" / TABLE
    archived = copy / "archive/data/default" / TABLE
    archived.parent.mkdir(parents=True)
    live.rename(archived)
    key_range = KeyRange(TABLE)
    for root in served(copy):
        got = snapshot_range_stats(root, SNAPSHOT, key_range, NOW, scratch=tmp_path)
    assert got == digest_rows(key_range, rows_of(expected_cells(), key_range))


def test_every_file_the_manifest_names_is_where_the_export_looks_first() -> None:
    """The export copies a snapshot's files (the MOB ones too) from the first place there
    is: for the MOB region's files that is ``mobdir/``, as HBase's ``HFileLink`` has it."""
    manifest = GOLDEN / "root/.hbase-snapshot" / SNAPSHOT / "data.manifest"
    files = parse_manifest(manifest.read_bytes(), str(manifest))
    mob = [f for f in files if f.region == mob_region(TABLE)]
    assert len(mob) == 4 and len(files) == 10
    for file in files:
        assert (GOLDEN / "root" / file.source_paths()[0]).is_file(), file
