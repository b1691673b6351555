"""The crash harness's kills on Airflow (LocalExecutor, a live Airflow of this module's own):
a migration run through the DAGs as an operator runs it (start, replay, validate, cutover),
with the process running one task of each DAG SIGKILLed at a seeded point of its ledger
step (the task runner, as an OOM kill or an evicted pod does; for the start's judge its
supervisor, the LocalExecutor's worker: the task is then found by its missing heartbeat).
Airflow's retry then runs the task again, and after every run the invariants of
``soak-crash`` hold: no step left ``running``, no duplicate ledger row, at most one range or
WAL chain's batch redone per kill; at the end every WAL file is replayed or a gap, the gate
says go (never before) and the target equals the source cell for cell."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.airflow_stack import AirflowStack, hbase_connection, start_airflow
from hbase_migrate.audit.records import StepStatus
from hbase_migrate.replay.ordering import chain_id
from hbase_migrate.soak.crash_checks import (
    FINISHED,
    duplicate_rows,
    leftover_steps,
    list_source_wals,
    missing_wal_files,
    redo,
    unfinished_wal_files,
)
from hbase_migrate.soak.crash_plan import kill_schedule
from minihbase.airflow_demo import Dags
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from minihbase.zookeeper import ZooKeeperServer
from tests.support.airflow_kills import Killed, Target, kill_task, task_instance, view
from tests.support.minicluster import clusters_over_rpc, compare, run_workload

pytestmark = [pytest.mark.own_stack, pytest.mark.integration, pytest.mark.e2e,
              pytest.mark.timeout(900)]

SEED = 76
NAME, TABLE = "airflow_crash", "orders"
MARGIN_MS = 300_000  # the migration's margin (5m: a new migration's default)
# the task killed in each DAG's run, in the order an operator runs them; each kill's moment
# and mapped part come from the crash schedule of this seed
KILLED = (("hbase_migrate_start", "snapshot_part"), ("hbase_migrate_start", "validate"),
          ("hbase_migrate_replay", "replay"), ("hbase_migrate_validate", "validate_part"),
          ("hbase_migrate_cutover", "cutover_check"))
MAPPED = {"snapshot_part", "replay", "validate_part"}
SUPERVISED = {"validate"}  # killed through its supervisor
REDO = {"snapshot_part": "copy", "replay": "wal", "validate": "validation",
        "validate_part": "validation", "cutover_check": "validation"}
# seconds: the span of a step a kill is drawn in, from its first ledger row (the gate's
# check of this small table is over in tens of milliseconds)
EXPECTED = {"cutover_check": 0.05}
SPAN = 0.4


@dataclass
class Stack:
    airflow: AirflowStack
    dags: Dags
    source: MiniHBase
    target: MiniHBase
    ledger: str


@pytest.fixture
def stack(tmp_path: Path, airflow_template: Path, zookeeper: ZooKeeperServer
          ) -> Iterator[Stack]:
    (tmp_path / "airflow").mkdir()
    shutil.copyfile(airflow_template, tmp_path / "airflow" / "airflow.db")
    with clusters_over_rpc(tmp_path, zookeeper, WalSettings(region_servers=2)) as (src, dst):
        conns = [hbase_connection("crash_source", src.endpoints),
                 hbase_connection("crash_target", dst.endpoints)]
        # a retry 2 s after a kill (the DAGs' 30 s, capped by Airflow's largest retry delay);
        # a task whose supervisor is gone failed after 30 s without a heartbeat (300 s)
        with start_airflow(tmp_path, parallelism=2, connections=conns, extra_env={
                "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                "AIRFLOW__CORE__MAX_TASK_RETRY_DELAY": "2",
                "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": "30",
                "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT_DETECTION_INTERVAL": "5",
                }) as airflow:
            ledger = f"sqlite:///{tmp_path / 'ledger.db'}"
            dags = Dags(airflow, {"migration": NAME, "source_conn_id": "crash_source",
                                  "target_conn_id": "crash_target", "tables": [TABLE],
                                  "ledger": ledger, "spark_conn_id": None})
            airflow.wait_for_dags({dag for dag, _ in KILLED})
            yield Stack(airflow, dags, src, dst, ledger)


def test_killed_airflow_task_processes_are_retried_and_converge(stack: Stack) -> None:
    plan = kill_schedule(SEED, len(KILLED), tuple(task for _, task in KILLED))
    src, dst, dags = stack.source, stack.target, stack.dags
    run_workload(src, TABLE, seed=SEED, ops=400)
    kills: list[dict[str, Any]] = []
    for (dag_id, task_id), planned in zip(KILLED, plan, strict=True):
        if dag_id == "hbase_migrate_replay":  # edits only the replay brings over
            run_workload(src, TABLE, seed=SEED + 1, ops=300)
            assert src.region_servers is not None
            src.region_servers.roll()
        dags.unpause(dag_id)
        began = time.monotonic()
        run_id = dags.trigger(dag_id)
        target = Target(task_id, planned.part - 1 if task_id in MAPPED else -1,
                        planned.fraction, EXPECTED.get(task_id, SPAN), task_id in SUPERVISED)
        killed = kill_task(stack.airflow, dag_id, run_id, target, stack.ledger, NAME)
        run = dags.wait_run(dag_id, run_id)
        for other in dags.active(dag_id):  # a scheduled run the unpause let start
            dags.wait_run(dag_id, other)
        kills.append({**judge(stack, dag_id, run_id, run, killed),
                      "run_seconds": round(time.monotonic() - began, 1)})
    print(json.dumps(kills, indent=1))  # the kills, shown with -s or on failure
    assert all(k["hit"] for k in kills), kills
    # inside a step (its ledger row running): on a quiet machine a short step may have
    # ended and reported by the kill (then the task's success stands, as checked above)
    assert any(k["running_at_kill"] for k in kills), kills
    assert kills[-1]["state"] == "success"  # the gate, retried after its kill, says go

    final = view(stack.ledger, NAME)
    assert not unfinished_wal_files(final) and not final.open_gaps
    assert final.watermark is not None
    listed = max(s.started_at for s in final.steps if s.kind == "replay"
                 and s.status is StepStatus.SUCCEEDED)
    on_source = list_source_wals(src.hbase_root_dir, [TABLE.encode()])
    assert on_source and not missing_wal_files(final, on_source, final.watermark - MARGIN_MS,
                                               listed)
    assert compare(src, dst, TABLE).equal


def judge(stack: Stack, dag_id: str, run_id: str, run: dict[str, Any], killed: Killed
          ) -> dict[str, Any]:
    """The run after its killed task's retry: the task tried twice and succeeded (the
    cutover's gate may say no-go only while something is not done), and the invariants."""
    target = killed.target
    ti = task_instance(stack.airflow, dag_id, run_id, target)
    assert ti is not None
    after = view(stack.ledger, NAME)
    assert killed.before is not None and killed.at_kill is not None
    redone = redo(killed.before, killed.at_kill, after, killed.steps, REDO[target.task_id])
    outcome = {"dag": dag_id, "task": target.name, "fraction": target.fraction,
               "killed": "supervisor" if target.supervisor else "runner",
               "hit": killed.hit, "steps_killed": killed.steps,
               "running_at_kill": killed.running, "state": run["state"],
               "tries": ti["try_number"], "redo": redone,
               "chains_in_flight": chains_in_flight(killed)}
    assert run["state"] == "success" and ti["state"] == "success", outcome
    # killed inside its step: Airflow's retry ran it again; killed once the step had ended,
    # the task may have reported success already (its retry then finds the step done)
    assert ti["try_number"] == 2 if killed.running else ti["try_number"] in (1, 2), outcome
    assert not leftover_steps(after, []), outcome
    assert not duplicate_rows(after), outcome
    mine = [s for s in after.steps if s.id in killed.steps]
    assert all(s.status is not StepStatus.RUNNING for s in mine), outcome
    # redone per kill: at most one range copied again, one WAL chain's batch read again
    assert redone.get("ranges_recopied", 0) <= 1, outcome
    assert len(outcome["chains_in_flight"]) <= 1, outcome
    return outcome


def chains_in_flight(killed: Killed) -> list[str]:
    """The WAL chains whose files the killed process moved on (acknowledged offsets
    recorded after its step began) and left unfinished: what its retry reads on from."""
    assert killed.at_kill is not None and killed.before is not None
    was = {path: row.offset for path, row in killed.before.wal.items()}
    since = min((s.started_at for s in killed.at_kill.steps if s.id in killed.steps),
                default=killed.at_kill.at)
    return sorted({chain_id(row.path) for path, row in killed.at_kill.wal.items()
                   if row.status not in FINISHED and row.updated_at >= since
                   and row.offset > was.get(path, 0)})

