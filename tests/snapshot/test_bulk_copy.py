"""The bulk copy (``[snapshot] method = "bulk"``) on the embedded pair: the scan copy's ranges
written as HFiles and loaded through the bulk replay's load into the embedded target.

The embedded cluster keeps no HFiles, so its bulk load here is :class:`EmbeddedLoads`: the
three calls of a bulk load, a staging folder on local disk, and a load that reads each
staged file with the project's HFile reader, refuses a file holding a row outside its
region (``loaded: false``, as a region server does) and stores the cells as the embedded
cluster's own bulk load does (no WAL entries). The target is judged from the clusters'
stores, not through the product: every visible version of the source equal to the target's,
cell for cell. Left as it is, the embedded target takes no bulk load: each range fails
saying why, none recorded. Real HBase: ``tests/realstack/test_bulk_copy_real.py``."""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.cluster.errors import ClusterError
from hbase_migrate.config import ClusterSpec, MigrationSpec, load_config
from hbase_migrate.hbase.connect import connect
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.lifecycle import finish_snapshot, prepare, snapshot
from hbase_migrate.lifecycle.snapshot import snapshot_parts
from hbase_migrate.ranges.keyrange import RangeError
from hbase_migrate.snapshot import bulk_copy
from hbase_migrate.wal.model import Cell
from minihbase.server import MiniHBase
from tests.support.local_staging import LocalStaging
from tests.support.minicluster import EmbeddedClusters, compare, run_workload
from tests.support.oracle import stored_cells
from tests.support.ranges import TABLE, configure

pytestmark = pytest.mark.integration


class EmbeddedLoads:
    """The embedded ``target``'s bulk load (the module), as ``options`` (shared by every
    task's) say: ``split`` splits the region of the next load called at the middle row of
    its files (written for the region whole), which then no longer fit (``loaded: false``),
    once; ``refuse`` (a row) fails every load holding it, as a call no retry cures."""

    def __init__(self, target: MiniHBase, staging: LocalStaging, options: dict[str, Any]) -> None:
        self.target, self.staging, self.options = target, staging, options
        self.client = connect(target.endpoints)
        self.prepared = 0
        self.refused = 0  # files a region refused (a row outside it)
        self.loaded: list[Cell] = []

    def regions(self, table: str) -> list[RegionDescriptor]:
        return self.client.regions(table)

    def prepare(self, table: str) -> str:
        self.prepared += 1
        token = f"file:///stage/{id(self)}-{self.prepared}"  # tasks run side by side
        self.staging.world_folder(token)
        return token

    def load(
        self,
        table: str,
        region: RegionDescriptor,
        family_paths: Sequence[tuple[bytes, str]],
        bulk_token: str,
        *,
        assign_seq_num: bool = True,
        timeout: float | None = None,
    ) -> bool:
        cells = []
        for _family, path in family_paths:
            with HFileReader(self.staging.at(path)) as reader:
                cells += [stored.cell for stored in reader.cells()]
        rows = sorted({c.row for c in cells})
        assert self.target.region_servers is not None
        servers = self.target.region_servers
        if len(rows) > 1 and self.options.pop("split", False):  # the region named is gone
            held = next(r for r in servers.store.table(table).regions if r.contains(rows[0]))
            servers.split(held.encoded_name, rows[len(rows) // 2])
            self.refused += len(family_paths)
            return False
        if any(not region.contains(c.row) for c in cells):
            self.refused += len(family_paths)
            return False
        if any(c.row == self.options.get("refuse") for c in cells):
            raise ClusterError(f"region {region.region_name!r}: the files were refused")
        servers.bulk_load(table, cells)
        for _family, path in family_paths:  # moved into the region
            self.staging.at(path).unlink()
        self.loaded += cells
        return True

    def cleanup(self, table: str, bulk_token: str) -> None:
        shutil.rmtree(self.staging.at(bulk_token), ignore_errors=True)


@dataclass
class Loading:
    """How the bulk copy tasks load into the embedded ``target``: each through an
    :class:`EmbeddedLoads` of its own (``made``, in order) over the ``options`` set here."""

    target: MiniHBase
    staging: LocalStaging
    options: dict[str, Any] = field(default_factory=dict)
    made: list[EmbeddedLoads] = field(default_factory=list)

    @contextmanager
    def open_loads(self, target: ClusterSpec) -> Iterator[tuple[Any, LocalStaging]]:
        assert target.endpoints().name == self.target.endpoints.name
        self.made.append(EmbeddedLoads(self.target, self.staging, self.options))
        try:
            yield self.made[-1], self.staging
        finally:
            self.made[-1].client.close()

    @property
    def loaded(self) -> list[Cell]:
        return [c for m in self.made for c in m.loaded]


def bulk_migration(
    tmp_path: Path, src: MiniHBase, dst: MiniHBase, monkeypatch: pytest.MonkeyPatch
) -> tuple[MigrationSpec, Loading]:
    """A migration of the workload's table (several ranges a region), copied by the bulk
    method in-process, its loads into ``dst`` through :class:`Loading`; prepared."""
    config = configure(tmp_path, src, dst, master="in-process")
    with config.open("a", encoding="utf-8") as f:
        f.write('[snapshot]\nmethod = "bulk"\n')
    loading = Loading(dst, LocalStaging(tmp_path / "hdfs"))
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
    loading.options["split"] = True  # a region splits once its files are written

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
    assert sum(m.refused for m in loading.made) >= 1 and "split" not in loading.options
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
    loading.options["refuse"] = poison

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

    loading.options.clear()
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
