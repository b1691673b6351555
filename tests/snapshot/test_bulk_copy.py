"""The bulk copy (``[snapshot] method = "bulk"``) on the embedded pair: the scan copy's ranges
written as HFiles and loaded through the bulk replay's load into the embedded target.

The embedded cluster keeps no HFiles, so its bulk load here is minihbase's stand-in
(:mod:`minihbase.bulk_loads`): the three calls of a bulk load, a staging folder on local
disk, and a load that reads each staged file with the project's HFile reader, refuses a file
holding a row outside its region (``loaded: false``, as a region server does) and stores the
cells as the embedded cluster's own bulk load does (no WAL entries). The target is judged
from the clusters' stores, not through the product: every visible version of the source
equal to the target's, cell for cell. Left as it is, the embedded target takes no bulk load:
each range fails saying why, none recorded. Real HBase:
``tests/realstack/test_bulk_copy_real.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.config import MigrationSpec, load_config
from hbase_migrate.hbase.connect import connect
from hbase_migrate.lifecycle import finish_snapshot, prepare, snapshot
from hbase_migrate.lifecycle.snapshot import snapshot_parts
from hbase_migrate.ranges.keyrange import RangeError
from hbase_migrate.snapshot import bulk_copy
from minihbase.bulk_loads import BulkLoading
from minihbase.server import MiniHBase
from tests.support.local_staging import LocalStaging
from tests.support.minicluster import EmbeddedClusters, compare, run_workload
from tests.support.oracle import stored_cells
from tests.support.ranges import TABLE, configure

pytestmark = pytest.mark.integration


def bulk_migration(
    tmp_path: Path, src: MiniHBase, dst: MiniHBase, monkeypatch: pytest.MonkeyPatch
) -> tuple[MigrationSpec, BulkLoading]:
    """A migration of the workload's table (several ranges a region), copied by the bulk
    method in-process, its loads into ``dst`` through :class:`BulkLoading`; prepared."""
    config = configure(tmp_path, src, dst, master="in-process")
    with config.open("a", encoding="utf-8") as f:
        f.write('[snapshot]\nmethod = "bulk"\n')
    loading = BulkLoading(dst.endpoints, LocalStaging(tmp_path / "hdfs"), dst.region_servers)
    monkeypatch.setattr(bulk_copy, "open_loads", loading.open_loads)
    spec = load_config(config)
    prepare(spec)
    return spec, loading


def copied_ranges(spec: MigrationSpec) -> list[tuple[bytes, bytes, int | None]]:
    """Each planned range (start, stop) with the cells recorded copied (None: not copied)."""
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None
        return [
            (r.range_start, r.range_end, r.copied_cells if r.copied_at is not None else None)
            for r in ledger.key_ranges(record.id)
        ]


def in_range(row: bytes, start: bytes, stop: bytes) -> bool:
    return start <= row and (not stop or row < stop)


def test_the_bulk_copy_leaves_the_target_equal_to_the_source_cell_for_cell(
    tmp_path: Path, make_embedded: EmbeddedClusters, monkeypatch: pytest.MonkeyPatch
) -> None:
    src, dst = make_embedded.pair()
    run_workload(src, TABLE, seed=78, ops=400)
    source = stored_cells(src, TABLE)
    columns = [c[:3] for c in source]
    assert len(columns) > len(set(columns)), "the workload left no column of two versions"
    spec, loading = bulk_migration(tmp_path, src, dst, monkeypatch)
    loading.faults.split = True  # a region splits once its files are written

    result = snapshot(spec).to_json()

    assert result["state"] == "copied" and result["method"] == "bulk", result
    judged = compare(src, dst, TABLE)
    assert judged.equal and judged.source_cells == len(source), judged.to_json()
    assert stored_cells(dst, TABLE) == source
    # every range's load was acknowledged and recorded with the cells it read
    ranges = copied_ranges(spec)
    assert len(ranges) > 2
    assert [cells for *_, cells in ranges] == [
        sum(in_range(c[0], start, stop) for c in source) for start, stop, _ in ranges
    ]
    # no range was written through the target's write path: every cell came as a load
    assert (
        sorted((c.row, c.family, c.qualifier, c.timestamp, c.value) for c in loading.loaded)
        == source
    )
    # the split after the first files were written: refused, then loaded split in two
    assert sum(m.refused for m in loading.made) >= 1 and not loading.faults.split
    assert len(regions_of(dst)) == len(regions_of(src)) + 1
    assert result["copied_while_planning"] == 0


def test_a_range_whose_load_fails_is_not_recorded_and_a_rerun_loads_it(
    tmp_path: Path, make_embedded: EmbeddedClusters, monkeypatch: pytest.MonkeyPatch
) -> None:
    src, dst = make_embedded.pair()
    run_workload(src, TABLE, seed=79, ops=300)
    source = stored_cells(src, TABLE)
    spec, loading = bulk_migration(tmp_path, src, dst, monkeypatch)
    poison = source[len(source) // 2][0]
    loading.faults.refuse = poison

    with pytest.raises(RangeError, match=r"bulk copy of range .* failed: .*refused"):
        snapshot(spec)

    ranges = copied_ranges(spec)
    refused = next((start, stop) for start, stop, _ in ranges if in_range(poison, start, stop))
    assert [cells for start, stop, cells in ranges if (start, stop) == refused] == [None]
    target = stored_cells(dst, TABLE)
    assert not [c for c in target if in_range(c[0], *refused)]  # nothing of it loaded
    for start, stop, cells in ranges:  # each range recorded holds its cells in the target
        if cells is not None:
            assert [c for c in target if in_range(c[0], start, stop)] == [
                c for c in source if in_range(c[0], start, stop)
            ]

    loading.faults.refuse = None
    again = snapshot(spec).to_json()
    assert again["state"] == "copied", again
    assert stored_cells(dst, TABLE) == source
    assert all(cells is not None for *_, cells in copied_ranges(spec))


def regions_of(cluster: MiniHBase) -> list[RegionDescriptor]:
    with connect(cluster.endpoints) as client:
        return client.regions(TABLE)


def test_a_bulk_copy_in_parts_loads_each_part_and_the_finish_says_bulk(
    tmp_path: Path, make_embedded: EmbeddedClusters, monkeypatch: pytest.MonkeyPatch
) -> None:
    src, dst = make_embedded.pair()
    run_workload(src, TABLE, seed=80, ops=300)
    source = stored_cells(src, TABLE)
    spec, loading = bulk_migration(tmp_path, src, dst, monkeypatch)

    plan = snapshot_parts(spec, parts=2).to_json()
    assert (plan["method"], plan["parts"]) == ("bulk", [[1, 2], [2, 2]]), plan
    assert not loading.made  # the plan loads nothing
    first = snapshot(spec, part=(1, 2)).to_json()
    assert first["method"] == "bulk" and first["state"] == "copying", first
    loaded = len(loading.loaded)
    assert 0 < loaded < len(source)
    snapshot(spec, part=(2, 2))
    finished = finish_snapshot(spec).to_json()

    assert (finished["state"], finished["method"]) == ("copied", "bulk"), finished
    assert stored_cells(dst, TABLE) == source
    assert len(loading.loaded) == len(source)  # each cell loaded once, by its part


def test_a_target_that_takes_no_bulk_load_fails_each_range_saying_why(
    tmp_path: Path, make_embedded: EmbeddedClusters
) -> None:
    src, dst = make_embedded.pair()
    run_workload(src, TABLE, seed=81, ops=100)
    config = configure(tmp_path, src, dst, master="in-process")
    with config.open("a", encoding="utf-8") as f:
        f.write('[snapshot]\nmethod = "bulk"\n')
    spec = load_config(config)
    prepare(spec)

    with pytest.raises(
        RangeError,
        match=r"the bulk copy cannot load into the target: the "
        r"target cluster '[^']+' (is reached through its Thrift gateway|has "
        r"no hbase.version)",
    ):
        snapshot(spec)

    assert copied_ranges(spec) and all(cells is None for *_, cells in copied_ranges(spec))
    assert stored_cells(dst, TABLE) == []
