"""Throttles measured on the embedded stack: the copy, the validation scans and replay each
under a limit, in-process and on Spark ``local[2]`` with two tasks sharing it, and a limit
raised with ``limits set`` while a copy runs. Rates are measured where the work lands:
the target's write hook (copy, replay) and the gateways' scan calls (validation), with
their own timestamps, not from the throttle's state."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.config import load_config
from hbase_migrate.lifecycle import prepare, replay, snapshot, validate
from hbase_migrate.limits.changes import set_limits
from hbase_migrate.wal.model import Cell, CellType
from minihbase.server import MiniHBase
from tests.support.minicluster import EmbeddedClusters, compare, t2

pytestmark = [pytest.mark.integration, pytest.mark.slow]
TABLE = "orders"
ROWS, COLUMNS = 600, 5  # 3,000 cells in two regions of 1,500
SPLIT = b"r3"
WINDOW = 2.0  # seconds: the short windows checked besides the whole run


class Meter:
    """Cells seen by a cluster, with the time each call arrived."""

    def __init__(self) -> None:
        self.events: list[tuple[float, int]] = []
        self.lock = threading.Lock()

    def add(self, cells: int) -> None:
        if cells:
            with self.lock:
                self.events.append((time.monotonic(), cells))

    def since(self, began: float) -> list[tuple[float, int]]:
        with self.lock:
            return [e for e in self.events if e[0] >= began]

    def write_hook(self, table: Any, region: Any, cells: Any, durability: Any) -> None:
        if str(table) == TABLE:
            self.add(len(cells))


class ScanMeter:
    """Stands in for a Thrift2 gateway's ``call_sizes`` log: timestamps its scan calls."""

    def __init__(self, meter: Meter) -> None:
        self.meter = meter

    def append(self, call: tuple[str, int, int]) -> None:
        if call[0] == "getScannerRows":
            self.meter.add(call[2])


def check_rate(events: list[tuple[float, int]], limit: float, cells: int) -> float:
    """The rate of ``events`` (``cells`` in all; a scan reopened at a row reads a few
    again): at most 10% above ``limit`` over the run, and over any ``WINDOW`` but for what
    the buckets may save while idle (a quarter second) and one call; and not below 75% of
    it (the work itself runs several times faster than the limit on a quiet machine, but a
    busy one slows it down, so the floor only catches a throttle that holds back far too
    much)."""
    total = sum(n for _, n in events)
    assert cells <= total <= cells * 1.01
    first, last = events[0][0], events[-1][0]
    rate = (total - events[0][1]) / (last - first)  # what came after the first call
    assert 0.75 * limit <= rate <= 1.1 * limit, (rate, limit)
    largest = max(n for _, n in events)
    for start, _ in events:
        held = sum(n for t, n in events if start <= t < start + WINDOW)
        assert held <= limit * (1.1 * WINDOW + 0.25) + largest, (start - first, held, limit, [
            sum(n for t, n in events if first + i / 4 <= t < first + (i + 1) / 4)
            for i in range(int((last - first) * 4) + 1)])
    assert total <= limit * (1.1 * 10 + 0.25) + largest  # the run fits in a 10 s window
    return rate


def write_rows(cluster: MiniHBase, prefix: str) -> None:
    """``ROWS`` rows of ``COLUMNS`` cells, alternating between the two regions."""
    now = int(time.time() * 1000)
    cells = [Cell(f"{half}{prefix}{i:03d}".encode(), b"d", f"c{c}".encode(), now,
                  CellType.PUT, f"value-{i}-{c}".encode() * 2)
             for i in range(ROWS // 2) for half in ("r1", "r5") for c in range(COLUMNS)]
    with t2(cluster) as client:
        client.put_cells(TABLE, cells)


def configure(folder: Path, src: MiniHBase, dst: MiniHBase, master: str,
              limits: str) -> Path:
    path = folder / "migration.toml"
    path.write_text(
        f'[migration]\nname = "mig"\nledger = "sqlite:///{folder / "ledger.db"}"\n'
        f'[source]\ncluster_json = "{src.write_cluster_json()}"\n'
        f'[target]\ncluster_json = "{dst.write_cluster_json()}"\n'
        f'[[tables]]\nsource = "{TABLE}"\n[replay]\nroll_period = "1s"\nmargin = 0\n'
        f'[spark]\nmaster = "{master}"\n[ranges]\nmax_cells = 2000\n'
        '[gateway]\nmax_result_bytes = "4KiB"\nmax_put_bytes = "2KiB"\n'
        f'[limits]\n{limits}', encoding="utf-8")
    return path


def clusters(make_embedded: EmbeddedClusters, written: Meter, scanned: Meter
             ) -> tuple[MiniHBase, MiniHBase]:
    src = make_embedded("source")
    dst = make_embedded("target", write_hook=written.write_hook)
    for cluster in (src, dst):
        assert cluster.thrift2_handler is not None
        cluster.thrift2_handler.call_sizes = ScanMeter(scanned)  # type: ignore[assignment]
    with t2(src) as client:
        client.create_table(TableDescriptor(TABLE, (FamilyDescriptor(b"d", max_versions=3),)),
                            [SPLIT])
    write_rows(src, "a")
    return src, dst


@pytest.mark.parametrize("engine", ["in-process", "local[2]"])
def test_copy_validate_and_replay_keep_their_limits(engine: str, tmp_path: Path,
                                                    make_embedded: EmbeddedClusters,
                                                    request: pytest.FixtureRequest) -> None:
    spark = request.getfixturevalue("spark") if engine != "in-process" else None
    written, scanned = Meter(), Meter()
    src, dst = clusters(make_embedded, written, scanned)
    spec = load_config(configure(tmp_path, src, dst, engine,
                                 "copy_cells_per_second = 1000\n"
                                 "validate_cells_per_second = 2000\n"
                                 "replay_cells_per_second = 1000\n"))
    prepare(spec)
    began = time.monotonic()
    copied = snapshot(spec).metrics
    assert copied["ranges"] == 2 and copied["cells"] == ROWS * COLUMNS
    assert copied["limits"] == {"copy_cells_per_second": 1000.0,
                                "copy_bytes_per_second": None, "adaptive": False}
    check_rate(written.since(began), 1000, ROWS * COLUMNS)

    began = time.monotonic()
    checked = validate(spec, recompare_wait=0).metrics
    assert checked["verdict"] == "match", checked
    assert checked["limits"]["validate_cells_per_second"] == 2000.0
    check_rate(scanned.since(began), 2000, 2 * ROWS * COLUMNS)  # both clusters

    write_rows(src, "b")  # after T0: replay's work
    began = time.monotonic()
    executor = None
    if spark is not None:
        from hbase_migrate.replay.spark import spark_executor

        executor = spark_executor(spark)
    summary = replay(spec, executor=executor)
    assert summary.exit_code == 0 and summary.limits is not None
    assert summary.limits["replay_cells_per_second"] == 1000.0
    check_rate(written.since(began), 1000, ROWS * COLUMNS)
    assert compare(src, dst, TABLE).equal


def test_a_limit_set_while_a_copy_runs_applies_within_the_refresh(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    written, scanned = Meter(), Meter()
    src, dst = clusters(make_embedded, written, scanned)
    spec = load_config(configure(tmp_path, src, dst, "in-process",
                                 "copy_cells_per_second = 400\nrefresh = \"500ms\"\n"))
    prepare(spec)
    began = time.monotonic()
    copy = threading.Thread(target=snapshot, args=(spec,))
    copy.start()
    while sum(n for _, n in written.since(began)) < 600:
        time.sleep(0.05)
    changed = time.monotonic()
    assert set_limits(spec, ["copy_cells_per_second=2000"]) == {
        "copy_cells_per_second": 2000}
    copy.join(30)
    before = [e for e in written.since(began) if e[0] < changed]
    check_rate(before, 400, sum(n for _, n in before))
    settled = changed + 0.5 + 0.1  # the refresh, and a scan call's worth
    after = [e for e in written.since(settled)]
    rate = check_rate(after, 2000, sum(n for _, n in after))
    # at the old limit the rest would have taken 6 s more
    assert after[-1][0] - changed < 2.5, (after[-1][0] - changed, rate)
