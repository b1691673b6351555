"""What the snapshot's progress bar reads while the copy runs: the cells moved (all of the
table's by the end), the key ranges (done of all), a rate and a time left, and the
watermark line as soon as T0 is fixed."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hbase_migrate import runstate
from hbase_migrate.commands.meter_column import meter_text
from hbase_migrate.config import load_config
from hbase_migrate.lifecycle import prepare, snapshot
from hbase_migrate.timeutil import format_time
from minihbase.zookeeper import ZooKeeperServer
from tests.support.minicluster import cell_count, clusters_over_rpc, run_workload, write_migration

pytestmark = pytest.mark.integration


def test_meter_text() -> None:
    meter = runstate.Meter(cells=1500, cells_goal=4500, ranges_done=2, ranges_total=6,
                           started=time.monotonic() - 3.0)
    text = meter_text(meter)
    rate = float(text.split(", ")[1].split(" cells/s")[0].replace(",", ""))
    assert 490 <= rate <= 500  # 1500 cells in about 3 s
    left = round((4500 - 1500) / rate)
    assert text == f"1,500 cells, {rate:,.0f} cells/s, ETA {left // 60}:{left % 60:02d}"
    planning = runstate.Meter(cells=10, regions_done=1, regions_total=4,
                              started=time.monotonic() - 1.0)
    assert meter_text(planning).startswith("planning: region 1/4, 10 cells, ")
    assert "ETA ?" not in meter_text(planning)  # 4 regions, 1 passed: an estimate
    assert meter_text(runstate.Meter()) == ""


@pytest.mark.parametrize("planning_cells", [1_000_000, 1], ids=["planning-pass", "tasks"])
def test_the_copy_feeds_the_bar(tmp_path: Path, zookeeper: ZooKeeperServer,
                                planning_cells: int) -> None:
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        run_workload(src, "t", seed=9, ops=200)
        total = cell_count(src, "t")
        config = write_migration(tmp_path, src, dst, "t")
        with config.open("a", encoding="utf-8") as out:
            out.write(f"[ranges]\nmax_cells = 50\nplan_copy_cells = {planning_cells}\n"
                      f'[spark]\nmaster = "in-process"\n')
        spec = load_config(config)
        prepare(spec)
        said: list[tuple[str, int]] = []
        seen: list[tuple[int, int]] = []
        result = snapshot(spec, announce=lambda line: said.append((line, runstate.meter.cells)),
                          progress=lambda done, of: seen.append((done, of)))
    meter = runstate.meter
    ranges = result.metrics["tables"][0]["ranges"]
    assert said == [(f"watermark T0 = {format_time(result.metrics['watermark'])}", 0)]
    assert meter.cells == total == result.metrics["cells"]
    assert (meter.ranges_done, meter.ranges_total) == (ranges, ranges)
    assert seen[-1] == (ranges, ranges)
    assert "ETA 0:00" in meter_text(meter)
