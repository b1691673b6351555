"""The chaos soak through Airflow (:mod:`minihbase.soak`): a local Airflow runs the DAGs as
the demo drives them (:class:`minihbase.airflow_demo.Dags`), every run triggered with the
soak's migration named in full in its conf. While the writer writes and the monkey acts,
rounds go on in a thread: a WAL watch run waits for new files, the source rolls, and the
replay run the watch's Asset event starts applies them and validates (live). Runs that chaos
broke (a replay task killed, the scheduler restarted under a task) fail and the next round
catches up. After the chaos: the writer stops, rounds drain until a replay run succeeded and
left no source WAL file short of its end, and ``hbase_migrate_cutover`` gives the verdict
and writes the report."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from hbase_migrate.airflow_stack import hbase_connection, start_airflow
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.status import drained
from hbase_migrate.config import MigrationSpec
from hbase_migrate.lifecycle.result import StepResult
from hbase_migrate.replay.discovery import SOURCE
from minihbase.airflow_demo import DAGS, RUN_TIMEOUT, Dags
from minihbase.soak import (
    MIGRATION,
    ROLL_PERIOD,
    TABLE,
    ListWriter,
    Say,
    SoakResult,
    SoakSpec,
    ledger_url,
    run_chaos,
)
from minihbase.soak_acts import cluster_acts, process_act
from stackprocs.admin_client import call_admin
from stackprocs.process import EmbeddedStackError

REPLAY = "hbase_migrate_replay"
ROUND_SECONDS = 8.0  # the writer fills the current WALs this long before a round's roll
DRAIN_ROUNDS = 4


class Rounds:
    """WAL watch and replay rounds in a thread until :meth:`stop`."""

    def __init__(self, dags: Dags, source_json: Path, say: Say) -> None:
        self.dags, self.source_json, self.say = dags, source_json, say
        self.halt = threading.Event()
        self.replays: dict[str, str] = {}  # replay run -> its end state
        self.failed: list[BaseException] = []
        self.thread = threading.Thread(target=self._loop, name="airflow-rounds", daemon=True)

    def _loop(self) -> None:
        try:
            while not self.halt.is_set():
                self.round()
        except BaseException as exc:  # raised in the caller's thread by check()
            self.failed.append(exc)

    def check(self) -> None:
        if self.failed:
            raise self.failed[0]

    def round(self) -> str | None:
        """One watch run, a roll, and the replay run its event started: that run's state
        (None when the watch itself did not finish well)."""
        dags = self.dags
        watch = dags.trigger("hbase_migrate_wal_watch", poll_seconds=1, wait_seconds=120)
        try:
            dags.wait_deferred("hbase_migrate_wal_watch", watch, "new_wal_files")
        except EmbeddedStackError as exc:  # the scheduler restarted under it, say
            self.say(f"round: {exc}")
        time.sleep(ROUND_SECONDS)
        call_admin(self.source_json, "roll")
        if dags.wait_run("hbase_migrate_wal_watch", watch)["state"] != "success":
            self.say(f"round: watch run {watch} did not succeed; next round")
            return None
        replay = dags.wait(REPLAY, lambda r: self._started_by(r, watch))
        self.replays[replay["dag_run_id"]] = replay["state"]
        return str(replay["state"])

    def _started_by(self, run: dict[str, Any], watch: str) -> bool:
        if run["dag_run_id"] in self.replays:
            return False
        status, events = self.dags.stack.api(
            "GET", f"/dags/{REPLAY}/dagRuns/{quote(run['dag_run_id'], safe='')}"
            "/upstreamAssetEvents")
        return status == 200 and any(e.get("source_run_id") == watch
                                     for e in events.get("asset_events", []))

    def stop(self) -> None:
        self.halt.set()
        self.thread.join()
        self.check()


def kill_replay_task(dags: Dags, wait: float = 60.0) -> dict[str, Any]:
    """Mark a running task of a replay run failed: Airflow terminates it."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        for run in dags.runs(REPLAY):
            if run["state"] != "running":
                continue
            path = f"/dags/{REPLAY}/dagRuns/{quote(run['dag_run_id'], safe='')}/taskInstances"
            for ti in dags.call("GET", path)["task_instances"]:
                if ti["state"] == "running":
                    index = f"/{ti['map_index']}" if ti.get("map_index", -1) >= 0 else ""
                    dags.call("PATCH", f"{path}/{ti['task_id']}{index}",
                              {"new_state": "failed"})
                    return {"killed": f"task {ti['task_id']} of {run['dag_run_id']}"}
        time.sleep(1.0)
    return {"killed": None, "why": f"no replay task ran within {wait:g} s"}


def drive_airflow(spec: SoakSpec, migration: MigrationSpec, clusters: tuple[Path, Path],
                  writer: ListWriter, result: SoakResult, say: Say) -> None:
    # the DAGs' hbase connections name the clusters as the migration file does (their
    # client: HBase's RPC or the Thrift2 gateway)
    connections = [hbase_connection(f"hbase_{side.role}", side.endpoints())
                   for side in (migration.source, migration.target)]
    with start_airflow(spec.root, parallelism=2, connections=connections) as airflow:
        airflow.wait_for_dags(DAGS, timeout=RUN_TIMEOUT)
        say(f"airflow up: {airflow.url}; hbase_source and hbase_target over "
            f"{migration.source.endpoints().client}")
        dags = Dags(airflow, {"migration": MIGRATION, "source_conn_id": "hbase_source",
                              "target_conn_id": "hbase_target", "tables": [TABLE],
                              "roll_period": ROLL_PERIOD, "margin": "1m",
                              "ledger": ledger_url(spec.root), "spark_conn_id": None})
        for dag_id in ("hbase_migrate_start", REPLAY, "hbase_migrate_cutover",
                       "hbase_migrate_wal_watch"):
            dags.unpause(dag_id)
        started = dags.trigger("hbase_migrate_start")
        dags.require(dags.wait_run("hbase_migrate_start", started), "the start")
        say(f"hbase_migrate_start {started}: schema, T0, copy, validation done")
        rounds = Rounds(dags, clusters[0], say)
        rounds.thread.start()
        acts = {**cluster_acts(*clusters, target_native=migration.target.endpoints().native),
                "kill-replay": process_act(lambda: kill_replay_task(dags), lambda: None),
                "restart-scheduler": lambda event, rng: {
                    "scheduler_pid": airflow.restart("scheduler")}}
        try:
            run_chaos(spec, migration, acts, writer, result, say, beside=rounds.check)
        finally:
            result.written = writer.stop()
            rounds.stop()
        failed = sorted(r for r, state in rounds.replays.items() if state != "success")
        say(f"rounds: {len(rounds.replays)} replay runs, {len(failed)} failed under chaos")
        # a roll during a run (the replay DAG's parts run one after another) can leave a file
        # archived behind the run's offsets: drain until a run succeeded and none is left
        for _ in range(DRAIN_ROUNDS):
            if rounds.round() == "success" and not undrained(migration):
                break
        else:
            result.problems.append(f"no replay run drained the source in {DRAIN_ROUNDS} "
                                   f"rounds; task logs in {airflow.task_logs}")
        gate = dags.trigger("hbase_migrate_cutover", max_lag="1m",
                            report_path=str((spec.root / "report.html").absolute()))
        dags.wait_run("hbase_migrate_cutover", gate)
        result.gate = last_gate(migration)


def undrained(migration: MigrationSpec) -> int:
    """How many source WAL files the ledger knows are not replayed to their end (what the
    cutover gate counts)."""
    with Ledger.open(migration.ledger_url) as ledger:
        record = ledger.migration(migration.name)
        files = ledger.wal_files(record.id, SOURCE) if record else []
    return sum(not drained(f) for f in files)


def last_gate(migration: MigrationSpec) -> StepResult | None:
    """The newest cutover-check step of the ledger, as its step returned it."""
    with Ledger.open(migration.ledger_url) as ledger:
        record = ledger.migration(migration.name)
        checks = ledger.steps(record.id, "cutover-check") if record else []
    if not checks:
        return None
    return StepResult(migration.name, checks[-1].id, None, checks[-1].metrics)
