"""The crash harness's kills on Airflow (``soak-crash --airflow local,celery``): a migration
run through the DAGs as an operator runs it (start, replay, validate, cutover) on a live
Airflow of its own (LocalExecutor, or CeleryExecutor with its PostgreSQL, redis-server and
two workers), with the process running one task of each DAG SIGKILLed at a seeded point of
its ledger step (:mod:`minihbase.crash_airflow`; for the start's judge its supervisor, so
that the task is found by its missing heartbeat). Airflow's retry then runs the task again;
after every run the invariants of ``soak-crash`` are judged, and at the end: every WAL file
replayed or a gap, the gate said go (never before) and the target equals the source cell
for cell, read apart from the migration.
"""

from __future__ import annotations

import functools
import shutil
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hbase_migrate.airflow_stack import AirflowStack, hbase_connection, start_airflow
from hbase_migrate.audit.records import StepStatus
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.soak.crash_checks import (
    list_source_wals,
    missing_wal_files,
    unfinished_wal_files,
)
from hbase_migrate.soak.crash_plan import kill_schedule
from minihbase.airflow_demo import Dags
from minihbase.crash_airflow import Target, judge, kill_task, task_instance, view
from minihbase.crash_compare import compare_tables
from minihbase.stack import EmbeddedStack
from minihbase.workload import WorkloadSpec, run_workload
from stackprocs.admin_client import call_admin

Say = Callable[[str], None]
EXECUTORS = ("local", "celery")
NAME, TABLE = "airflow_crash", "orders"
MARGIN_MS = 300_000  # the migration's margin (5m: a new migration's default)
# the task killed in each DAG's run, in the order an operator runs them; each kill's moment
# and mapped part come from the crash schedule of the seed
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
# a retry 2 s after a kill (the DAGs' 30 s, capped by Airflow's largest retry delay); a task
# whose supervisor is gone failed after 30 s without a heartbeat (300 s by default)
AIRFLOW_ENV = {"AIRFLOW__CORE__LOAD_EXAMPLES": "False",
               "AIRFLOW__CORE__MAX_TASK_RETRY_DELAY": "2",
               "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": "30",
               "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT_DETECTION_INTERVAL": "5"}


@dataclass(frozen=True)
class DagClusters:
    """The clusters the DAGs migrate between: their endpoints, the source's HBase root (its
    WAL folders, read apart from the migration) and how to roll the source's WALs."""

    source: ClusterEndpoints
    target: ClusterEndpoints
    source_root: Path
    roll: Callable[[], object]


@dataclass
class DagCrashResult:
    """One executor's DAG kills: a row per kill (:func:`minihbase.crash_airflow.judge`), the
    end's verdicts and what they found."""

    executor: str
    kills: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems and not any(k["violations"] for k in self.kills)

    def summary(self) -> dict[str, Any]:
        converge = [k["seconds_to_converge"] for k in self.kills]
        return {"executor": self.executor, "kills": len(self.kills),
                "kills_hit": sum(k["hit"] for k in self.kills),
                "inside_step": sum(bool(k["running_at_kill"]) for k in self.kills),
                "retries": sum(k["retried"] for k in self.kills),
                "seconds_to_converge": {"max": max(converge, default=0.0),
                                        "mean": round(sum(converge) / len(converge), 1)
                                        if converge else 0.0},
                "seconds": round(self.seconds, 1), "ok": self.ok, "per_kill": self.kills,
                "end": self.end, "problems": self.problems}

    def table(self) -> list[str]:
        """A line per kill: task, process killed, landed (inside its step or after it),
        tries, seconds from the kill to the run's end, work done again."""
        lines = []
        for k in self.kills:
            landed = ("inside its step" if k["running_at_kill"] else "after its step"
                      ) if k["hit"] else "missed"
            redone = ", ".join(f"{key}={n}" for key, n in k["redo"].items() if n) or "none"
            lines.append(f"{self.executor:<7} {k['dag']:<23} {k['task']:<17} "
                         f"{k['killed']:<10} {landed:<15} {k['tries']:>5} "
                         f"{k['seconds_to_converge']:>7.1f}  {redone}")
        return lines


TABLE_HEAD = (f"{'airflow':<7} {'dag':<23} {'task':<17} {'killed':<10} {'landed':<15} "
              f"{'tries':>5} {'conv. s':>7}  work done again")


def run_dag_kills(folder: Path, executor: str, clusters: DagClusters, seed: int, say: Say
                  ) -> DagCrashResult:
    """Start an Airflow with ``executor`` in ``folder`` over ``clusters``, run the DAGs with
    one kill each, judge each run and the end."""
    began = time.monotonic()
    result = DagCrashResult(executor)
    conns = [hbase_connection("crash_source", clusters.source),
             hbase_connection("crash_target", clusters.target)]
    with start_airflow(folder, parallelism=2, connections=conns, extra_env=AIRFLOW_ENV,
                       executor=executor, workers=2) as airflow:
        # the LocalExecutor's ledger a SQLite file; the Celery stack's its shared PostgreSQL
        ledger = airflow.ledger_url or f"sqlite:///{folder.absolute() / 'ledger.db'}"
        conf = {"migration": NAME, "source_conn_id": "crash_source",
                "target_conn_id": "crash_target", "tables": [TABLE], "spark_conn_id": None}
        dags = Dags(airflow, conf if airflow.ledger_url else {**conf, "ledger": ledger})
        airflow.wait_for_dags({dag for dag, _ in KILLED})
        say(f"airflow ({executor}) up: {airflow.url}; {len(KILLED)} DAG runs, one task "
            "killed in each")
        run_workload(clusters.source, WorkloadSpec(TABLE, seed, 400))
        for (dag_id, task_id), planned in zip(
                KILLED, kill_schedule(seed, len(KILLED), tuple(t for _, t in KILLED)),
                strict=True):
            if dag_id == "hbase_migrate_replay":  # edits only the replay brings over
                run_workload(clusters.source, WorkloadSpec(TABLE, seed + 1, 300))
                clusters.roll()
            target = Target(task_id, planned.part - 1 if task_id in MAPPED else -1,
                            planned.fraction, EXPECTED.get(task_id, SPAN),
                            task_id in SUPERVISED)
            outcome = kill_one(airflow, dags, dag_id, target, ledger)
            result.kills.append(outcome)
            say(f"airflow ({executor}) {dag_id} {target.name}: "
                f"{'hit' if outcome['hit'] else 'missed'} ({outcome['killed']}, steps "
                f"{outcome['steps_killed']}, running {outcome['running_at_kill']}); run "
                f"{outcome['state']} after {outcome['tries']} tries in "
                f"{outcome['run_seconds']} s"
                + (f"; VIOLATIONS: {'; '.join(outcome['violations'])[:400]}"
                   if outcome["violations"] else ""))
        result.end, result.problems = judge_end(result.kills, clusters, ledger)
    result.seconds = time.monotonic() - began
    say(f"airflow ({executor}): end {result.end}" +
        (f"; PROBLEMS: {'; '.join(result.problems)}" if result.problems else ""))
    return result


def kill_one(airflow: AirflowStack, dags: Dags, dag_id: str, target: Target, ledger: str
             ) -> dict[str, Any]:
    """Trigger ``dag_id``, kill ``target`` in its run, wait for the run (and any run the
    unpause let start) to end, and judge it."""
    dags.unpause(dag_id)
    began = time.monotonic()
    run_id = dags.trigger(dag_id)
    try:
        killed = kill_task(airflow, dag_id, run_id, target, ledger, NAME)
    except HBaseMigrateError as exc:
        run = dags.wait_run(dag_id, run_id)
        return {"dag": dag_id, "task": target.name, "fraction": target.fraction,
                "killed": "supervisor" if target.supervisor else "runner", "hit": False,
                "steps_killed": [], "running_at_kill": [], "state": run["state"],
                "tries": 0, "retried": 0, "redo": {}, "chains_in_flight": [],
                "violations": [str(exc)], "seconds_to_converge": 0.0,
                "run_seconds": round(time.monotonic() - began, 1)}
    landed = time.monotonic()
    run = dags.wait_run(dag_id, run_id)
    converged = round(time.monotonic() - landed, 1)  # from the kill to the run's end
    for other in dags.active(dag_id):  # a scheduled run the unpause let start
        dags.wait_run(dag_id, other)
    ti = task_instance(airflow, dag_id, run_id, target)
    if ti is None:
        raise HBaseMigrateError(f"airflow: {dag_id} {run_id} has no task {target.name}")
    outcome = judge(ti, run, killed, view(ledger, NAME), REDO[target.task_id])
    return {"dag": dag_id, **outcome, "seconds_to_converge": converged,
            "run_seconds": round(time.monotonic() - began, 1)}


def judge_end(kills: list[dict[str, Any]], clusters: DagClusters, ledger: str
              ) -> tuple[dict[str, Any], list[str]]:
    """After the last run: every WAL file replayed or a gap and none missing, no gap open,
    a kill inside a step among them, the gate said go, the target equals the source."""
    final = view(ledger, NAME)
    problems = [f"a WAL file: {line}" for line in unfinished_wal_files(final)]
    problems += [f"open gap {gap}" for gap in final.open_gaps]
    replays = [s.started_at for s in final.steps if s.kind == "replay"
               and s.status is StepStatus.SUCCEEDED]
    on_source = list_source_wals(clusters.source_root, [TABLE.encode()])
    if final.watermark is None or not replays or not on_source:
        problems.append(f"no T0 ({final.watermark}), finished replay ({len(replays)}) or "
                        f"source WAL file ({len(on_source)})")
    else:
        problems += missing_wal_files(final, on_source, final.watermark - MARGIN_MS,
                                      max(replays))
    if kills and not any(k["running_at_kill"] for k in kills):
        problems.append("no kill landed inside a step")
    gate = kills[-1]["state"] if kills and kills[-1]["task"] == "cutover_check" else None
    if gate != "success":
        problems.append(f"the cutover run ended {gate}, not go")
    cells = compare_tables(_thrift(clusters.source), _thrift(clusters.target), TABLE)
    if not cells["equal"]:
        problems.append(f"the target differs from the source: {cells}")
    return {"gate": "go" if gate == "success" else gate, "cells": cells,
            "wal_files": len(final.wal)}, problems


def _thrift(endpoints: ClusterEndpoints) -> ClusterEndpoints:
    """The cluster over its Thrift2 gateway (apart from the migration's transport) when it
    has one."""
    return replace(endpoints, client="thrift") if endpoints.thrift2 else endpoints


def embedded_dag_kills(root: Path, executors: tuple[str, ...], seed: int, say: Say
                       ) -> list[DagCrashResult]:
    """Each executor's DAG kills on an embedded pair of its own (ZooKeeper, a source with
    two region servers writing real WALs, a target) under ``root/airflow-<executor>``."""
    results = []
    for executor in executors:
        folder = root / f"airflow-{executor}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        with ExitStack() as stack:
            embedded = stack.enter_context(EmbeddedStack(folder))
            embedded.start_zookeeper()
            source = embedded.start_cluster("source", ["--region-servers", "2"])
            target = embedded.start_cluster("target")
            source_json = folder / "source" / "cluster.json"
            clusters = DagClusters(source, target, source_json.parent / "hbase",
                                   functools.partial(call_admin, source_json, "roll"))
            try:
                results.append(run_dag_kills(folder, executor, clusters, seed, say))
            except HBaseMigrateError as exc:
                failed = DagCrashResult(executor, problems=[f"{type(exc).__name__}: {exc}"])
                say(f"airflow ({executor}): FAILED: {exc}")
                results.append(failed)
    return results
