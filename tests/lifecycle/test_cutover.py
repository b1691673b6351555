"""The cutover gate on the embedded stack, with a real ledger: go when all is clear; no-go,
with the reason, for replay lag above the threshold, for a mismatching range and for an open
gap. Each verdict is a ledger step, and the report shows the newest one."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepStatus
from hbase_migrate.config import MigrationSpec, load_config
from hbase_migrate.lifecycle import cutover_check, prepare, replay, report, snapshot, validate
from hbase_migrate.replay.apply import TargetUnavailableError
from hbase_migrate.wal.model import Cell
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from minihbase.zookeeper import ZooKeeperServer
from tests.support.minicluster import clusters_over_rpc, run_workload, t2, write_migration

pytestmark = pytest.mark.integration
TABLE = "orders"
MINUTE = 60_000


def gate_steps(spec: MigrationSpec) -> list[tuple[StepStatus, dict[str, Any]]]:
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None
        return [(s.status, s.metrics) for s in ledger.steps(record.id, "cutover-check")]


def migrated(tmp_path: Path, src: MiniHBase, dst: MiniHBase) -> MigrationSpec:
    """A migration copied, caught up and validated while nothing else writes."""
    run_workload(src, TABLE, seed=31, ops=150)
    spec = load_config(write_migration(tmp_path, src, dst, TABLE, outage_tolerance="0s"))
    prepare(spec)
    snapshot(spec)
    run_workload(src, TABLE, seed=32, ops=100)  # after T0: arrives by replay
    assert replay(spec).exit_code == 0
    assert validate(spec).verdict == "match"
    return spec


def test_go_then_no_go_for_lag_and_for_a_mismatching_range(
        tmp_path: Path, zookeeper: ZooKeeperServer) -> None:
    settings = WalSettings(region_servers=2, roll_period=3600)
    with clusters_over_rpc(tmp_path, zookeeper, wal=settings) as (src, dst):
        started = time.time()
        spec = migrated(tmp_path, src, dst)
        gate = cutover_check(spec, max_lag=MINUTE).to_json()
        assert (gate["verdict"], gate["reasons"], gate["lag"]) == ("go", [], 0)

        # The source takes writes the target never gets: its gateway is down while a
        # catch-up lists the grown WAL files, so the edits wait and the lag grows.
        run_workload(src, TABLE, seed=33, ops=60)
        gateways = dst.endpoints.thrift, dst.endpoints.thrift2
        dst.stop()
        with pytest.raises(TargetUnavailableError):  # listed, then refused, loudly
            replay(spec)
        time.sleep(1.2)
        gate = cutover_check(spec, max_lag=1000).to_json()
        assert gate["verdict"] == "no-go"
        # now less the oldest waiting edit (ms), at most as old as the test's first write
        assert 1000 < gate["lag"] <= int((time.time() - started) * 1000)
        assert any(r.startswith("replay lag ") and r.endswith(" is above 1s")
                   for r in gate["reasons"]), gate["reasons"]
        assert any("not replayed to their end" in r for r in gate["reasons"])

        # back where it was, as a production gateway comes back (gateways that moved after
        # the copy are another definition, refused: test_definitions)
        thrift, thrift2 = (int(str(g).rsplit(":", 1)[1]) for g in gateways)
        dst.ports = thrift, thrift2
        dst.start()
        assert (dst.endpoints.thrift, dst.endpoints.thrift2) == gateways
        spec = load_config(spec.path or "")
        assert replay(spec).exit_code == 0
        assert validate(spec).verdict == "match"
        assert cutover_check(spec, max_lag=MINUTE).verdict == "go"

        # A cell only the target has: the comparison finds it, and nothing else is wrong.
        with t2(dst) as client:
            client.put_cells(TABLE, [Cell(b"row-zz", b"d", b"extra", 1, 4, b"!")])
        found = validate(spec, recompare_wait=0).to_json()  # a recompare finds it again
        assert found["verdict"] == "mismatch"
        (table,) = found["tables"]
        assert len(table["mismatched"]) == 1  # the range holding row-zz, of all planned
        different = f"the last validation found 1 of {table['ranges']} range(s) different"
        gate = cutover_check(spec, max_lag=MINUTE).to_json()
        assert gate["verdict"] == "no-go"
        assert gate["reasons"] == [different]

        verdicts = [(status, m["verdict"]) for status, m in gate_steps(spec)]
        assert verdicts == [(StepStatus.SUCCEEDED, "go"), (StepStatus.FAILED, "no-go"),
                            (StepStatus.SUCCEEDED, "go"), (StepStatus.FAILED, "no-go")]
        written_report = report(spec, out=tmp_path / "report.html").to_json()
        assert written_report["verdict"] == "no-go"
        page = Path(written_report["path"]).read_text("utf-8")
        assert "NO-GO: the target cannot take over yet" in page
        assert different in page


def test_no_go_for_an_open_gap(tmp_path: Path, zookeeper: ZooKeeperServer) -> None:
    settings = WalSettings(region_servers=2, roll_period=3600)
    with clusters_over_rpc(tmp_path, zookeeper, wal=settings) as (src, dst):
        spec = migrated(tmp_path, src, dst)
        assert cutover_check(spec, max_lag=MINUTE).verdict == "go"
        # Edits go to the live files replay has listed; then the files are archived and
        # deleted before replay reads them again (a log cleaner faster than replay).
        run_workload(src, TABLE, seed=34, ops=60)
        assert src.region_servers is not None
        for name in src.region_servers.roll():
            (src.hbase_root_dir / "oldWALs" / name).unlink()
        assert replay(spec).exit_code == 3
        assert validate(spec, recompare_wait=0).verdict == "mismatch"  # edits really lost
        gate = cutover_check(spec, max_lag=MINUTE).to_json()
        assert gate["verdict"] == "no-go"
        gaps = [r for r in gate["reasons"] if "open gap(s): edits lost for the target" in r]
        assert gaps and gate["open_gaps"] >= 1, gate["reasons"]
        assert gate_steps(spec)[-1][0] is StepStatus.FAILED
