"""Regions split on real HBase 2.6.1 while a migration reads them (issue 38, item 1).

A real table is split (the admin endpoint's ``split``: HBase's ``Admin.split``, returning
once the daughters are open) while prepare, the planning pass, the copy, the validation and
the repair run: the first region listing of prepare and of the planning pass is taken while
a split is under way (a hook starts the split, then reads until it sees the split in meta,
a listing that fails or does not tile, or the split's end), and further splits run during
the copy's, the validation's and the repair's scans. Each step ends right: the target has a
tiling set of the source's split points, and equals the source cell for cell. A first test
measures what the gateways' raw listings answer during repeated splits, on both transports.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, RegionDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.errors import ClusterError
from hbase_migrate.cluster.regions import not_tiling, transition_failure
from hbase_migrate.config import IN_PROCESS, load_config
from hbase_migrate.lifecycle import prepare, snapshot, validate
from hbase_migrate.thrift.mutations import deletes_from_cells
from hbase_migrate.thrift.thrift1 import Thrift1Client
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.validate.compare import compare_tables
from hbase_migrate.wal.model import Cell, CellType
from minihbase.server import MiniHBase
from realstack.hbase import RealHBase
from stackprocs.admin_client import call_admin
from tests.support.minicluster import EmbeddedClusters

pytestmark = [pytest.mark.integration, pytest.mark.realstack]
ROWS = 6000  # two cells each


def key(i: int) -> bytes:
    return b"row-%05d" % i


def make_table(real: ClusterEndpoints, table: str, splits: list[bytes]) -> None:
    """``table`` on real HBase, split at ``splits``, holding ``ROWS`` rows of two cells."""
    assert real.thrift2 is not None
    with Thrift2Client(real.thrift2) as client:
        client.create_table(TableDescriptor(table, (FamilyDescriptor(b"d", max_versions=3),)),
                            splits)
        cells = [Cell(key(i), b"d", q, 1000 + i, CellType.PUT, b"v%d" % i * 4)
                 for i in range(ROWS) for q in (b"a", b"b")]
        client.put_cells(table, cells)


def starts(client: Thrift2Client, table: str) -> list[bytes]:
    return [r.start_key for r in client.regions(table)]


class Splits:
    """Splits of ``table`` at ``points``, one after the other, in a thread."""

    def __init__(self, cluster_json: Path, table: str, points: list[bytes]) -> None:
        self.cluster_json, self.table, self.points = cluster_json, table, points
        self.done: list[tuple[bytes, float, float, int]] = []  # at, began, ended, regions
        self.began = 0.0
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.began = time.monotonic()
        self.thread.start()

    def _run(self) -> None:
        try:
            for at in self.points:
                began = time.monotonic()
                answer = call_admin(self.cluster_json, "split",
                                    {"table": self.table, "at": at.decode()})
                self.done.append((at, began, time.monotonic(), int(answer["regions"])))
        except BaseException as exc:  # handed to the test
            self.failure = exc

    def join(self) -> list[tuple[bytes, float, float, int]]:
        self.thread.join(300)
        assert not self.thread.is_alive(), "the splits did not end within 300 s"
        if self.failure is not None:
            raise self.failure
        return self.done


class SplitWhileListing:
    """Hooks ``Thrift2Client.listed_regions``: the first listing of ``table`` from the
    gateway ``endpoint`` starts ``splits``, then reads until the first split shows (a
    listing that changed, failed or does not tile) or ended; that read is what the caller
    gets. ``seen`` holds what each of those reads saw."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, endpoint: str, splits: Splits) -> None:
        self.endpoint, self.splits = endpoint, splits
        self.seen: list[str] = []
        self.read_began = self.read_ended = 0.0
        original = Thrift2Client.listed_regions
        armed = [True]

        def hooked(client: Thrift2Client, table: str) -> list[RegionDescriptor]:
            if not armed[0] or table != splits.table or client.endpoint != endpoint:
                return original(client, table)
            armed[0] = False
            before = original(client, table)
            splits.start()
            self.read_began = time.monotonic()
            try:
                while True:
                    ended = bool(splits.done) or splits.failure is not None
                    try:
                        listing = original(client, table)
                    except ClusterError as exc:
                        self.seen.append(transition_failure(exc) or str(exc))
                        raise
                    odd = not_tiling(listing)
                    self.seen.append(odd or f"{len(listing)} regions")
                    if ended or odd or len(listing) != len(before):
                        return listing
                    time.sleep(0.005)
            finally:
                self.read_ended = time.monotonic()

        monkeypatch.setattr(Thrift2Client, "listed_regions", hooked)

    def overlapped(self) -> bool:
        """Whether the first split was under way while the hooked read ran."""
        (_, began, ended, _), *_ = self.splits.done
        return began <= self.read_ended and self.read_began <= ended


def configure(folder: Path, source: Path, target: Path, table: str) -> Path:
    path = folder / "migration.toml"
    path.write_text(
        f'[migration]\nname = "mig"\nledger = "sqlite:///{folder / "ledger.db"}"\n'
        f'[source]\ncluster_json = "{source}"\n[target]\ncluster_json = "{target}"\n'
        f'[[tables]]\nsource = "{table}"\n'
        f'[replay]\nroll_period = "1h"\nmargin = "1m"\n'
        f'[spark]\nmaster = "{IN_PROCESS}"\n[ranges]\nmax_cells = 1500\n'
        # slow enough that the splits below happen during the scans
        f'[limits]\ncopy_cells_per_second = 3000\nvalidate_cells_per_second = 6000\n',
        encoding="utf-8")
    return path


@pytest.fixture
def target(make_embedded: EmbeddedClusters, tmp_path: Path) -> MiniHBase:
    return make_embedded("target", folder=tmp_path / "dst")


def test_raw_listings_during_splits_and_settled_ones(real_hbase: RealHBase) -> None:
    """What real HBase's gateways answer a region listing while a region splits (measured,
    printed), and that ``regions()`` of both clients only ever answers a tiling listing."""
    table = "regions_listing_real"
    real = ClusterEndpoints.from_json(real_hbase.described)
    assert real.thrift2 is not None
    make_table(real, table, [key(3000)])
    points = [key(i) for i in (500, 1000, 1500, 2000, 2500, 3500, 4000, 4500, 5000, 5500)]
    splits = Splits(real_hbase.cluster_json, table, points)
    raw: dict[str, int] = {}
    settled: list[list[RegionDescriptor]] = []
    with Thrift2Client(real.thrift2) as t2, Thrift1Client(real.thrift) as t1:
        splits.start()
        while splits.thread.is_alive():
            for name, listed in (("thrift2", t2.listed_regions), ("thrift", t1.listed_regions)):
                try:
                    odd = not_tiling(listed(table)) or "consistent"
                except ClusterError as exc:
                    odd = transition_failure(exc) or f"other error: {exc}"
                raw[f"{name}: {odd}"] = raw.get(f"{name}: {odd}", 0) + 1
            settled += [t2.regions(table), t1.regions(table)]
        done = splits.join()
        final = starts(t2, table)
    print(f"\nraw listings during {len(points)} splits of a real table: {raw}")
    assert [d[3] for d in done] == list(range(3, 3 + len(points)))  # one more region each
    assert final == [b"", *sorted([key(3000), *points])]
    assert not any(k.endswith("other error") for k in raw), raw
    assert len(settled) >= 2 * len(points)  # listings ran all through the splits
    assert all(not_tiling(s) is None and s for s in settled)


def test_each_step_ends_right_while_the_source_splits(
        real_hbase: RealHBase, target: MiniHBase, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    table = "regions_steps_real"
    real = ClusterEndpoints.from_json(real_hbase.described)
    assert real.thrift2 is not None and target.endpoints.thrift2 is not None
    make_table(real, table, [key(3000)])
    spec = load_config(configure(tmp_path, real_hbase.cluster_json,
                                 target.write_cluster_json(), table))
    src = Thrift2Client(real.thrift2)
    dst = Thrift2Client(target.endpoints.thrift2)

    def during(step: Callable[[], Any], points: list[bytes], hook: bool) -> Splits:
        """Run ``step`` while ``points`` split the source table (the first overlapping the
        step's first region listing when ``hook``); every split ended within the step
        or after it."""
        splits = Splits(real_hbase.cluster_json, table, points)
        listing = SplitWhileListing(monkeypatch, real.thrift2 or "", splits) if hook else None
        began = time.monotonic()
        if listing is None:
            splits.start()
        step()
        ended = time.monotonic()
        monkeypatch.undo()
        done = splits.join()
        assert len(done) == len(points)
        if listing is not None:
            assert listing.overlapped(), (listing.seen, done)
            print(f"\n{step}: the hooked listing saw {listing.seen}")
        assert splits.began >= began and done[0][1] < ended  # the first split began inside
        return splits

    with src, dst:
        assert starts(src, table) == [b"", key(3000)]
        # prepare: its split points come from a listing read while a region splits
        during(lambda: prepare(spec), [key(1500)], hook=True)
        target_starts = starts(dst, table)
        assert target_starts in ([b"", key(3000)], [b"", key(1500), key(3000)]), target_starts

        # planning (the snapshot's counting pass) lists the regions while one splits; more
        # splits meet the copy's scans
        copy_points = [key(i) for i in (4500, 500, 2200, 5200)]
        splits = during(lambda: snapshot(spec), copy_points, hook=True)
        assert splits.done[-1][3] == 7
        assert compare_tables(src, dst, table).equal  # cell for cell
        assert compare_tables(src, dst, table).source_cells == 2 * ROWS

        # validation's scans meet splits
        checked: list[dict[str, Any]] = []
        during(lambda: checked.append(validate(spec, recompare_wait=0).to_json()),
               [key(i) for i in (3700, 1000)], hook=False)
        assert checked[0]["verdict"] == "match", checked

        # repair: the target lost cells and holds one the source never had; the repair's
        # scans meet splits
        lost = [c for row in dst.scan(table, key(4100), key(4110)) for c in row]
        dst.delete_multiple(table, deletes_from_cells(
            [c._replace(type=int(CellType.DELETE)) for c in lost]))
        dst.put_cells(table, [Cell(key(2300), b"d", b"extra", 5, CellType.PUT, b"x")])
        assert not compare_tables(src, dst, table).equal
        fixed: list[dict[str, Any]] = []
        during(lambda: fixed.append(validate(spec, repair=True, recompare_wait=0).to_json()),
               [key(i) for i in (4100, 2600)], hook=False)
        assert fixed[0]["verdict"] == "match", fixed
        comparison = compare_tables(src, dst, table)
        assert comparison.equal and comparison.source_cells == 2 * ROWS, comparison.examples
        assert len(src.regions(table)) == 11
    out = capsys.readouterr().out
    with capsys.disabled():
        print(out)
