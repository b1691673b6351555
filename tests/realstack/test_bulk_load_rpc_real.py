"""Real HBase 2.6.1 (the session's stack) bulk-loads the files of a window of WAL-like edits
over its own RPC, from Python (``PrepareBulkLoad``, WebHDFS staging, ``BulkLoadHFile``,
``CleanupBulkLoad``; no JVM tool): a raw scan returns exactly the cells the table held and
the edits make, delete markers included, a loaded cell winning over the same key written
before. A region split between writing the files and loading them splits the file that
spans the new boundary; every cell still arrives, and the staging folder is gone after; a
load grouped by a listing from before the split is refused by the region (``loaded:
false``), and the next round lists the regions again and splits the file; refused until the
last round, the load fails naming table, files and region."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.cluster.endpoints import load_cluster_json
from hbase_migrate.cluster.storage.hdfs_files import HdfsRoot
from hbase_migrate.hbase.bulk import BulkLoadCalls
from hbase_migrate.hbase.connect import connect
from hbase_migrate.replay.bulkload import BulkLoadError
from realstack.hbase import RealHBase

from .bulk_rpc import (
    LATER,
    expected_raw,
    fresh_table,
    load,
    raw_scan,
    split_first_region,
    write_window,
)
from .bulk_window import SPLIT, copy_cells, window_entries
from .fixtures import native_cluster_json

pytestmark = [pytest.mark.integration, pytest.mark.realstack]
LOADED, SPLIT_LATER, REFUSED = "bulk_rpc_loaded", "bulk_rpc_split", "bulk_rpc_refused"


@pytest.fixture(scope="module")
def described(real_hbase: RealHBase, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("bulk-rpc")
    yield {**real_hbase.described, "folder": folder, "stack": real_hbase,
           "endpoints": load_cluster_json(native_cluster_json(real_hbase, folder))}


def staged_folders(described: dict[str, Any]) -> list[str]:
    """What is left in the cluster's bulk-load staging folder."""
    endpoints = described["endpoints"]
    return HdfsRoot(endpoints.webhdfs, endpoints.hbase_root, "target").listing("staging")


def first_region_files(files: list[tuple[bytes, Path]]) -> list[str]:
    """The files written for the table's first region (before it split)."""
    return sorted(str(p) for _, p in files if p.name.endswith("-first"))


def test_window_loaded_over_rpc_reads_back_cell_for_cell(described: dict[str, Any]) -> None:
    endpoints, folder = described["endpoints"], described["folder"] / "loaded"
    entries, before = window_entries(), copy_cells()
    with fresh_table(endpoints, LOADED):
        with connect(endpoints) as client:
            client.write_cells(LOADED, before)
        files = write_window(endpoints, LOADED, entries, folder)
        assert len(files) == 4  # two regions, two families
        report = load(endpoints, LOADED, files)
        assert (report.rounds, report.calls, report.split) == (1, 2, [])
        assert sorted(report.loaded) == sorted(str(p) for _, p in files)
        found = raw_scan(endpoints, LOADED)
    expected = expected_raw(before, entries)
    assert len(expected) > 3000
    assert {c.type for c in expected} == {4, 8, 10, 12, 14}
    assert found == expected


def test_a_split_between_writing_and_loading_splits_the_file(described: dict[str, Any]
                                                              ) -> None:
    endpoints, folder = described["endpoints"], described["folder"] / "split"
    entries = window_entries()
    with fresh_table(endpoints, SPLIT_LATER):
        files = write_window(endpoints, SPLIT_LATER, entries, folder)
        assert len(files) == 4
        assert split_first_region(described["stack"].cluster_json, SPLIT_LATER) == 3
        report = load(endpoints, SPLIT_LATER, files)
        assert report.rounds == 1 and report.calls == 3
        assert sorted(report.split) == first_region_files(files)
        assert sorted(Path(p).name for p in report.loaded) == sorted(
            [p.name for _, p in files if str(p) not in report.split]
            + [f"{Path(p).name}_part{n}" for p in report.split for n in (0, 1)])
        found = raw_scan(endpoints, SPLIT_LATER)
        with connect(endpoints) as client:
            starts = [r.start_key for r in client.regions(SPLIT_LATER)]
    assert starts == [b"", LATER, SPLIT]
    assert found == expected_raw([], entries)
    assert staged_folders(described) == []


class ListedBeforeTheSplit:
    """The cluster's calls, whose first listing of the regions is as it was before the
    first region split: the first daughter listed with its parent's end. A load grouped
    by it sends the parent's files to that daughter, which no longer holds all of them."""

    def __init__(self, calls: BulkLoadCalls) -> None:
        self.calls, self.listed = calls, 0

    def regions(self, table: str) -> list[RegionDescriptor]:
        regions = self.calls.regions(table)
        self.listed += 1
        if self.listed > 1:
            return regions
        return [replace(regions[0], end_key=regions[1].end_key), *regions[2:]]

    def prepare(self, table: str) -> str:
        return self.calls.prepare(table)

    def load(self, table: str, region: RegionDescriptor,
             family_paths: Sequence[tuple[bytes, str]], bulk_token: str, *,
             assign_seq_num: bool = True, timeout: float | None = None) -> bool:
        return self.calls.load(table, region, family_paths, bulk_token,
                               assign_seq_num=assign_seq_num, timeout=timeout)

    def cleanup(self, table: str, bulk_token: str) -> None:
        self.calls.cleanup(table, bulk_token)


@pytest.fixture
def refused(described: dict[str, Any], tmp_path: Path
            ) -> Iterator[list[tuple[bytes, Path]]]:
    """The window's files for table REFUSED, written before its first region split."""
    endpoints = described["endpoints"]
    with fresh_table(endpoints, REFUSED):
        files = write_window(endpoints, REFUSED, window_entries(), tmp_path)
        split_first_region(described["stack"].cluster_json, REFUSED)
        yield files


def test_a_file_its_region_no_longer_holds_is_refused_then_split(
        described: dict[str, Any], refused: list[tuple[bytes, Path]]) -> None:
    stale: list[ListedBeforeTheSplit] = []

    def seen_as(calls: BulkLoadCalls) -> BulkLoadCalls:
        stale.append(ListedBeforeTheSplit(calls))
        return stale[-1]

    report = load(described["endpoints"], REFUSED, refused, seen_as)
    # round 1: the daughter answers "not loaded" for the parent's two files; round 2 lists
    # the regions again and loads the parts
    assert stale[0].listed == 2
    assert (report.rounds, report.refused, report.calls) == (2, 1, 4)
    assert sorted(report.split) == first_region_files(refused)
    assert raw_scan(described["endpoints"], REFUSED) == expected_raw([], window_entries())
    assert staged_folders(described) == []


def test_files_still_refused_after_the_last_round_fail_the_load(
        described: dict[str, Any], refused: list[tuple[bytes, Path]]) -> None:
    with pytest.raises(BulkLoadError) as failed:
        load(described["endpoints"], REFUSED, refused, ListedBeforeTheSplit, rounds=1)
    said = str(failed.value)
    assert said.startswith(f"table {REFUSED}: 2 file(s) not loaded after 1 round(s): ")
    assert all(f"{p} (family " in said for p in first_region_files(refused))
    assert said.count(f"region b'{REFUSED},,") == 2
    assert said.count("did not load them") == 2
    # what was loaded stays: the files of the last region only
    loaded = {c.row for c in raw_scan(described["endpoints"], REFUSED)}
    assert loaded and min(loaded) >= SPLIT
    assert staged_folders(described) == []
