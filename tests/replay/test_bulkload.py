"""The bulk load's rounds (``replay/bulkload.py``) against scripted calls and a staging
folder on local disk: the calls judge each file as a region server does (all its rows inside
the region, or ``loaded: false``) and move what they load out of the staging folder. The
cells that arrive are read back from the files loaded with the project's reader and compared
with the window's. Real HBase doing the same: ``tests/realstack/test_bulk_load_rpc_real.py``."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, RegionDescriptor, TableDescriptor
from hbase_migrate.cluster.errors import ClusterError
from hbase_migrate.errors import Kind
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.replay.bulkfiles import BulkWindow
from hbase_migrate.replay.bulkload import BulkLoad, BulkLoadError, BulkLoadReport
from hbase_migrate.wal.model import Cell, CellType, cell_order

T = 1_700_000_000_000
NAME = "ns:orders"
TOKEN = "hdfs://nn:8020/hbase/staging/me__ns_orders__k3y"
TABLE = TableDescriptor(NAME, (
    FamilyDescriptor(b"f", data_block_encoding="FAST_DIFF", compression="gz", bloom_filter="ROW"),
    FamilyDescriptor(b"g", bloom_filter="ROWCOL", block_size=1024),
))


def regions(*starts: bytes) -> list[RegionDescriptor]:
    ends = [*starts[1:], b""]
    return [RegionDescriptor(NAME, s, e, n + 1, "rs", 16020, 0, b"%s,%s,%d." % (
        NAME.encode(), s, n + 1)) for n, (s, e) in enumerate(zip(starts, ends, strict=True))]


WRITTEN = regions(b"", b"h")  # the listing the files were written by


def cells() -> list[Cell]:
    rows = [b"apple", b"cherry", b"date", b"fig", b"grape", b"kiwi", b"lemon", b"zebra"]
    out = [Cell(r, f, b"q%d" % q, T + q, CellType.PUT, b"%s-%d" % (r, q))
           for r in rows for f in (b"f", b"g") for q in range(3)]
    out += [Cell(b"date", b"f", b"q1", T + 9, CellType.DELETE_COLUMN),
            Cell(b"grape", b"g", b"", T + 9, CellType.DELETE_FAMILY),
            Cell(b"kiwi", b"f", b"", T, CellType.DELETE_FAMILY_VERSION),
            Cell(b"zebra", b"g", b"q0", T, CellType.DELETE)]
    return out


class LocalStaging:
    """The cluster's filesystem as a local folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.world: list[str] = []

    def at(self, path: str) -> Path:
        return self.folder / urlsplit(path).path.lstrip("/")

    def world_folder(self, path: str) -> None:
        self.at(path).mkdir(parents=True)
        self.world.append(path)

    def put(self, path: str, chunks: Iterator[bytes]) -> None:
        self.at(path).write_bytes(b"".join(chunks))

    def status(self, path: str) -> dict[str, Any] | None:
        where = self.at(path)
        return {"length": where.stat().st_size} if where.exists() else None


class Refused(ClusterError):
    def __init__(self, message: str, kind: Kind) -> None:
        super().__init__(message)
        self.kind = kind


class ScriptedCalls:
    """Calls answering as region servers holding the regions ``actual``: a call for a region
    not among them fails as ``NotServingRegionException`` does; a call's files are loaded
    (moved out of the staging folder) when each fits the region, else ``loaded: false``.
    ``listings``: what each listing of the regions says (the last one again after; default
    ``actual``); ``script``: what the n-th load call does first (it may raise)."""

    def __init__(self, staging: LocalStaging, actual: list[RegionDescriptor],
                 listings: list[list[RegionDescriptor]] | None = None,
                 script: Sequence[Callable[[list[Path]], None] | None] = ()) -> None:
        self.staging, self.actual = staging, {r.name: r for r in actual}
        self.listings, self.script = listings or [actual], list(script)
        self.calls: list[tuple[bytes, list[tuple[bytes, str]]]] = []
        self.loaded: list[Path] = []
        self.cleaned: list[str] = []
        self.staging.folder.joinpath("region").mkdir(parents=True)

    def regions(self, table: str) -> list[RegionDescriptor]:
        assert table == NAME
        return self.listings.pop(0) if len(self.listings) > 1 else self.listings[0]

    def prepare(self, table: str) -> str:
        return TOKEN

    def load(self, table: str, region: RegionDescriptor,
             family_paths: Sequence[tuple[bytes, str]], bulk_token: str, *,
             assign_seq_num: bool = True, timeout: float | None = None) -> bool:
        assert (table, bulk_token, assign_seq_num) == (NAME, TOKEN, True)
        assert all(p.startswith(f"{TOKEN}/{f.decode()}/") for f, p in family_paths)
        self.calls.append((region.start_key, list(family_paths)))
        files = [self.staging.at(p) for _, p in family_paths]
        step = self.script.pop(0) if self.script else None
        if step is not None:
            step(files)
        served = self.actual.get(region.name)
        if served is None:
            raise Refused(f"NotServingRegionException: {region.name!r}", Kind.RELOCATE)
        for path in files:
            with HFileReader(path) as reader:
                rows = [s.cell.row for s in reader.cells()]
            if rows[0] < served.start_key or (served.end_key and rows[-1] >= served.end_key):
                return False
        self.move(files)
        return True

    def move(self, files: list[Path]) -> None:
        """The files moved into their region."""
        for path in files:
            self.loaded.append(Path(shutil.move(path, self.staging.folder / "region"
                                                / f"{len(self.loaded)}")))

    def cleanup(self, table: str, bulk_token: str) -> None:
        self.cleaned.append(bulk_token)

    def arrived(self) -> list[Cell]:
        """Every cell of the files loaded, in HBase's order."""
        found = []
        for path in self.loaded:
            with HFileReader(path) as reader:
                found += [s.cell for s in reader.cells()]
        return sorted(found, key=cell_order)


def written(folder: Path) -> list[tuple[bytes, Path]]:
    window = BulkWindow(TABLE, WRITTEN)
    window.add_cells(cells())
    return [(f.family, f.path) for f in window.write(folder / "files", "test")]


def run(calls: ScriptedCalls, files: list[tuple[bytes, Path]], rounds: int = 10
        ) -> BulkLoadReport:
    return BulkLoad(calls, TABLE, calls.staging, rounds=rounds, max_pause=0.01).run(files)


def fails(message: str, kind: Kind) -> Callable[[list[Path]], None]:
    def step(files: list[Path]) -> None:
        raise Refused(message, kind)
    return step


@pytest.fixture
def staging(tmp_path: Path) -> LocalStaging:
    return LocalStaging(tmp_path / "fs")


ALL = sorted(cells(), key=cell_order)
SPLIT = regions(b"", b"d", b"h")  # the first region split at "d" since the files were written
STALE = [replace(SPLIT[0], end_key=b"h"), SPLIT[2]]  # listed before: the daughter as parent


def test_files_that_fit_load_one_call_a_region(staging: LocalStaging, tmp_path: Path) -> None:
    calls = ScriptedCalls(staging, WRITTEN)
    report = run(calls, written(tmp_path))
    assert (report.rounds, report.calls, report.split, len(report.loaded)) == (1, 2, [], 4)
    assert [(start, sorted(f for f, _ in paths)) for start, paths in calls.calls] == [
        (b"", [b"f", b"g"]), (b"h", [b"f", b"g"])]
    staged = urlsplit(TOKEN).path
    assert staging.world == [f"{staged}/f", f"{staged}/g"]
    assert calls.arrived() == ALL
    assert calls.cleaned == [TOKEN]


def test_regions_split_since_writing_split_the_files_at_every_new_boundary(
        staging: LocalStaging, tmp_path: Path) -> None:
    files = written(tmp_path)
    calls = ScriptedCalls(staging, regions(b"", b"c", b"e", b"h", b"l"))
    report = run(calls, files)
    assert sorted(report.split) == sorted(str(p) for _, p in files)  # both regions split
    assert (report.rounds, report.calls, len(report.loaded)) == (1, 5, 10)
    assert sorted(start for start, _ in calls.calls) == [b"", b"c", b"e", b"h", b"l"]
    assert calls.arrived() == ALL


def test_a_region_refusing_a_file_it_no_longer_holds_gets_its_parts_next_round(
        staging: LocalStaging, tmp_path: Path) -> None:
    files = written(tmp_path)
    calls = ScriptedCalls(staging, SPLIT, [STALE, SPLIT])
    report = run(calls, files)
    assert (report.rounds, report.refused, report.calls, len(report.loaded)) == (2, 1, 4, 6)
    assert sorted(report.split) == sorted(str(p) for _, p in files if p.name.endswith("first"))
    assert calls.arrived() == ALL


def test_a_region_moved_is_tried_again_after_listing_again(staging: LocalStaging,
                                                           tmp_path: Path) -> None:
    calls = ScriptedCalls(staging, WRITTEN, script=[
        fails("RegionMovedException", Kind.RELOCATE)])
    report = run(calls, written(tmp_path))
    assert (report.rounds, report.refused, report.calls) == (2, 1, 3)
    assert [start for start, _ in calls.calls] == [b"", b"h", b""]
    assert calls.arrived() == ALL


def test_files_moved_by_a_call_whose_answer_was_lost_count_as_loaded(
        staging: LocalStaging, tmp_path: Path) -> None:
    calls = ScriptedCalls(staging, WRITTEN)

    def loaded_then_lost(files: list[Path]) -> None:
        calls.move(files)
        raise Refused("connection reset while waiting for the reply", Kind.OUTAGE)

    calls.script = [loaded_then_lost]
    report = run(calls, written(tmp_path))
    assert (report.rounds, report.refused, report.calls, len(report.loaded)) == (1, 0, 2, 4)
    assert calls.arrived() == ALL


def test_a_refusal_no_retry_cures_fails_at_once_naming_table_files_and_region(
        staging: LocalStaging, tmp_path: Path) -> None:
    files = written(tmp_path)
    calls = ScriptedCalls(staging, WRITTEN, script=[
        fails("NoSuchColumnFamilyException: g", Kind.NEVER)])
    with pytest.raises(BulkLoadError) as failed:
        run(calls, files)
    said = str(failed.value)
    assert said.startswith(f"table {NAME}: 2 file(s) not loaded after 1 round(s): ")
    for path in (p for _, p in files if p.name.endswith("first")):
        assert f"{path} (family " in said
    assert said.count(f"region {WRITTEN[0].name!r}: NoSuchColumnFamilyException: g") == 2
    assert len(calls.calls) == 1 and calls.cleaned == [TOKEN]


def test_files_refused_in_every_round_fail_the_load_after_the_last(
        staging: LocalStaging, tmp_path: Path) -> None:
    calls = ScriptedCalls(staging, SPLIT, [STALE])
    with pytest.raises(BulkLoadError, match=r"2 file\(s\) not loaded after 3 round\(s\).*"
                       r"did not load them"):
        run(calls, written(tmp_path), rounds=3)
    assert len(calls.calls) == 2 + 1 + 1  # the last region's files loaded in the first
    assert calls.cleaned == [TOKEN]
