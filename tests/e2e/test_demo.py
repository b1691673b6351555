"""The README's main command, end to end: the demo ends with the target equal to the source,
and everything it started is gone afterwards, also after Ctrl-C."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepStatus, Verdict
from hbase_migrate.config import load_config

pytestmark = pytest.mark.e2e


def _children_of(pid: int) -> set[int]:
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_demo_migrates_a_live_table_and_proves_equality(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    out = subprocess.run(
        [sys.executable, "-m", "hbase_migrate", "demo", "--no-airflow", "--dir", str(root),
         "--ops", "800", "--seed", "11", "--json"],
        capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr
    steps = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    by_name = {s["step"]: s for s in steps}
    assert by_name["first workload on the source"]["total_ops"] == 400
    # the migration reaches both embedded clusters over HBase's own RPC (the default)
    assert by_name["start source and target miniclusters"]["client"] == "native"
    spec = load_config(root / "migration.toml")
    assert spec.source.endpoints().native and spec.target.endpoints().native
    follow = by_name["replay WALs in --follow mode while the workload writes"]
    assert follow["live_workload_ops"] > 0
    assert follow["follow_runs"] >= 1
    assert by_name["final catch-up replay"]["exit_code"] == 0
    backfill = by_name["backfill: replay the first seconds after T0 again"]
    assert backfill["exit_code"] == 0 and backfill["files_selected"] >= 1
    assert backfill["cells_replayed"] > 0  # edits of the window, applied again
    compared = by_name["validate: source and target range by range"]
    assert (compared["verdict"], compared["state"]) == ("match", "validated")
    assert compared["ranges"] == compared["ranges_matching"] > 0
    assert compared["source_cells"] == compared["target_cells"] > 0
    assert out.stdout.rstrip().endswith(f"{compared['source_cells']} cells compared")
    gate = by_name["cutover gate"]
    assert (gate["verdict"], gate["reasons"], gate["lag"]) == ("go", [], 0)
    written = Path(by_name["audit report"]["path"])
    assert written == (root / "report.html").absolute() and written.stat().st_size > 10_000
    page = written.read_text("utf-8")
    assert "GO: the target can take over" in page and 'data-plot="throughput"' in page
    assert f"report: {written}" in out.stdout

    # The ledger recorded the source's WAL files per region server: replayed, none failed,
    # no gap.
    status = subprocess.run(
        [sys.executable, "-m", "hbase_migrate", "status", "--config",
         str(root / "migration.toml"), "--json"],
        capture_output=True, text=True, timeout=120, check=False)
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert report["has_gaps"] is False
    (migration,) = report["migrations"]
    assert migration["state"] == "validated"
    assert len(migration["servers"]) == 2
    assert all(s["pending"]["failed"] == 0 and s["replayed"] > 0 for s in migration["servers"])


def _descendants(pid: int) -> set[int]:
    found, todo = set(), [pid]
    while todo:
        children = _children_of(todo.pop())
        todo += list(children - found)
        found |= children
    return found


def test_ctrl_c_stops_everything_it_started(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "hbase_migrate", "demo", "--dir", str(tmp_path / "demo"),
         "--ops", "200"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        seen: set[int] = set()
        for line in proc.stdout:  # ZooKeeper, two miniclusters, then Airflow's four parts
            seen |= _descendants(proc.pid)
            if "start Airflow" in line:
                break
        time.sleep(1.0)
        seen |= _descendants(proc.pid)
        assert len(seen) >= 7, "ZooKeeper, two miniclusters and Airflow should be running"
        proc.send_signal(signal.SIGINT)
        proc.wait(120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in seen) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in seen if _alive(pid)]


# Its own Airflow (api-server, scheduler, triggerer, dag-processor), not the session's:
# `make test-stacks` runs it.
@pytest.mark.own_stack
@pytest.mark.timeout(1800)  # above the demo's own waits, so a stuck one reports itself
def test_the_main_job_through_airflow_ends_with_go_and_names_the_dag_runs(
        tmp_path: Path) -> None:
    root = tmp_path / "demo"
    out = subprocess.run(
        [sys.executable, "-m", "hbase_migrate", "demo", "--dir", str(root), "--ops", "600",
         "--seed", "13", "--json"],
        capture_output=True, text=True, timeout=1700, check=False)
    assert out.returncode == 0, (out.stdout[-3000:], out.stderr[-3000:])
    steps = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]

    def fact(prefix: str) -> dict[str, Any]:
        found, = (s for s in steps if s["step"].startswith(prefix))
        return found

    # The cutover DAG wrote the report where the run asked, and the demo names it.
    cutover = fact("hbase_migrate_cutover")
    written = Path(cutover["report"])
    assert written == (root / "report.html").absolute() and cutover["verdict"] == "go"
    assert "GO: the target can take over" in written.read_text("utf-8")
    assert f"report: {written}" in out.stdout
    assert out.stdout.rstrip().endswith("every range matching")
    assert fact("the workload stops")["workload_ops"] > 0
    # Every DAG run it caused is green; those with nothing to do skipped their tasks (the
    # CDC stream without a Kafka connection, the scheduled runs that name no migration).
    listed = fact("every DAG run the demo caused")
    assert {state for runs in listed["runs"].values() for state in runs} == {"success"}
    assert listed["skipped_tasks"]["hbase_migrate_cdc"] == listed["runs"][
        "hbase_migrate_cdc"]["success"] > 0

    # The ledger names the DAG run and task behind every step, and none ran without Airflow.
    spec = load_config(root / "migration.toml")
    with Ledger.open(spec.ledger_url, upgrade_schema=False) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None and record.state == "validated"
        recorded = ledger.steps(record.id)
        last_ranges = ledger.last_validations(record.id)
    assert all(s.status is StepStatus.SUCCEEDED for s in recorded), [
        (s.kind, s.error) for s in recorded if s.status is not StepStatus.SUCCEEDED]
    by_run = {(s.dag_id, s.run_id, s.kind, s.task_id) for s in recorded}
    start = fact("hbase_migrate_start")["run"]
    for kind in ("prepare", "snapshot", "validate"):
        assert ("hbase_migrate_start", start, kind, kind) in by_run
    rounds = [fact("hbase_migrate_wal_watch"), fact("round 1"), fact("round 2"),
              fact("the workload stops")]
    for turn in rounds:
        assert ("hbase_migrate_replay", turn["replay_run"], "replay", "replay") in by_run
        assert ("hbase_migrate_replay", turn["replay_run"], "validate", "validate") in by_run
    # The workload wrote the whole time: every round's replay applied new edits (in parts:
    # one per WAL chain of the source's two region servers).
    for turn in rounds[1:]:
        parts = [s for s in recorded if s.kind == "replay" and s.run_id == turn["replay_run"]]
        assert 1 <= len(parts) <= 2, turn
        assert sum(sum(p.metrics["cells"].values()) for p in parts) > 0, turn
    assert ("hbase_migrate_backfill", fact("airflow backfill")["run"], "backfill",
            "replay_window") in by_run
    # a backfill run over the first seconds after T0 replays edits again: it proves replay
    after = fact("hbase_migrate_backfill: replay the first seconds after T0")
    assert ("hbase_migrate_backfill", after["run"], "backfill", "replay_window") in by_run
    began = datetime.fromisoformat(after["window"][0])
    assert round(began.timestamp() * 1000) == record.watermark
    assert after["cells_replayed"] > 0
    gate = recorded[-1]
    assert (gate.kind, gate.dag_id, gate.run_id) == (
        "cutover-check", "hbase_migrate_cutover", fact("hbase_migrate_cutover")["run"])
    assert gate.metrics["verdict"] == "go" and gate.metrics["reasons"] == []
    assert all(s.dag_id for s in recorded)
    assert last_ranges and all(v.final_verdict is Verdict.MATCH for v in last_ranges)
