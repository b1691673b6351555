"""The main job through Airflow, on the embedded stack.

1. Start a real ZooKeeper, the source minicluster (two region servers writing real WAL
   files) and an empty target; write a first workload to the source.
2. Start a local Airflow (:func:`hbase_migrate.airflow_stack.start_airflow`): the project's
   DAGs, plugins and ``airflow.cfg``, one ``hbase`` connection per cluster; with the Celery
   executor also PostgreSQL (Airflow's database and the ledger), redis-server and the
   workers, each in its own folder.
3. Drive the lifecycle through the DAGs, as a user does from the UI or the REST API, while
   a workload writes to the source the whole time, from before the start until the drain:
   trigger ``hbase_migrate_start`` with the form's fields (schema, watermark T0, copy, a
   live validation); unpause the WAL watch: its scheduled run finds the migration in
   progress and announces its WAL files, and the Asset-scheduled ``hbase_migrate_replay``
   catches up; in each round the region servers roll their WALs while a watch run waits
   (one triggered with an empty form, or the scheduled one under way), the watch announces
   the new files as one Asset event, and the replay applies them and validates in live mode
   (verdicts recorded, what still differs listed, the run not failed for it);
   ``airflow backfill create`` replays a past hour again, as the README gives it, and a
   ``hbase_migrate_backfill`` run triggered with the first seconds after T0 as its data
   interval replays them again (it must replay cells: a window before T0 proves nothing);
   each replay run's validation compares the rows it wrote (its round); then the workload
   stops, a last round drains replay, ``hbase_migrate_validate`` compares every range, and
   ``hbase_migrate_cutover`` gives the verdict (judged on that validation after the last
   catch-up) and writes the audit report.
4. List every DAG run the demo caused: each is green or skipped (an hour with no WAL edit
   of the migration is skipped, saying so; the CDC stream skips while no Kafka connection
   is configured).

Only the start and the cutover name the migration (``orders`` over the connections
``hbase_source`` and ``hbase_target``: :func:`migration_conf`), as a user fills in their
forms; its ledger is the default one (under the stack's folder, or the Celery stack's
shared ledger), where the schedules, the backfill and the watch find it by themselves.
Only the embedded stack, the workload and the REST calls belong here: every step runs in an
Airflow task that calls the core. Everything started is stopped at the end, also on Ctrl-C,
unless ``keep_running`` asks to wait for it.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

from hbase_migrate.airflow_stack import AirflowStack, hbase_connection, start_airflow
from hbase_migrate.audit.engine import redact
from hbase_migrate.audit.records import GateVerdict
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.config import AUTO, ENDPOINT_KEYS, LEDGER_ENV
from hbase_migrate.lifecycle.result import StepResult
from hbase_migrate.workdir import claim_workdir
from minihbase.demo import DemoResult, DemoSpec, Report, _step, _workload, copy_fact
from minihbase.stack import EmbeddedStack
from minihbase.workload import Workload, WorkloadSpec
from stackprocs.admin_client import call_admin
from stackprocs.process import EmbeddedStackError

MIGRATION = "orders"  # the demo's migration and table
SOURCE_ARGS = ["--region-servers", "2", "--roll-period", "1h", "--wal-compression", "dict+tags"]
DAGS = ("hbase_migrate_start", "hbase_migrate_wal_watch", "hbase_migrate_replay",
        "hbase_migrate_backfill", "hbase_migrate_validate", "hbase_migrate_cutover")
ROUNDS = 2
SPARK = "local[2]"  # the Spark master of --spark: every run of the DAGs on Spark
ROUND_SECONDS = 4.0  # how long the workload writes into the WALs of a round before the roll
LIVE_SCALE = 60.0  # the live workload writes half of --ops per this many seconds
RUN_TIMEOUT = 600.0
AFTER_T0 = timedelta(seconds=30)  # the window after T0 the demo replays again


def ledger_url(root: Path) -> str:
    return f"sqlite:///{(root / MIGRATION / 'ledger.db').absolute()}"


def migration_conf() -> dict[str, Any]:
    """The Params naming the demo's migration, as a user fills in the start's and the
    cutover's forms (the ledger left empty: the default one)."""
    return {"migration": MIGRATION, "source_conn_id": "hbase_source",
            "target_conn_id": "hbase_target", "tables": [MIGRATION]}


def write_config(root: Path, source: ClusterEndpoints, target: ClusterEndpoints,
                 ledger: str | None = None) -> Path:
    """The migration :func:`migration_conf` names, as a file for the command line
    (``status``, ``report``): the same clusters (by their gateways), tables, ledger and
    replay settings."""
    def section(endpoints: ClusterEndpoints) -> str:
        data = endpoints.to_json()
        return "".join(f"{k} = {json.dumps(str(data[k]))}\n" for k in ENDPOINT_KEYS
                       if data.get(k))

    path = root / "migration.toml"
    path.write_text(
        f'[migration]\nname = "{MIGRATION}"\nledger = "{ledger or ledger_url(root)}"\n'
        f"[source]\n{section(source)}[target]\n{section(target)}"
        f'[[tables]]\nsource = "{MIGRATION}"\n'
        '[replay]\nroll_period = "1h"\nmargin = "5m"\n', encoding="utf-8")
    return path


class Dags:
    """Triggers DAG runs over the REST API and waits for them. ``conf`` names the migration
    (every identifying Param: see :func:`migration_conf`) for the DAGs a person starts for
    one migration (:meth:`trigger`); :meth:`trigger_all` leaves the form's defaults: the run
    acts on every migration in progress."""

    def __init__(self, stack: AirflowStack, conf: dict[str, Any]) -> None:
        missing = [k for k in ("migration", "source_conn_id", "target_conn_id", "tables")
                   if not conf.get(k)]
        if missing:
            raise EmbeddedStackError(f"the DAG runs' conf lacks {', '.join(missing)}: the "
                                     "forms have no default migration")
        self.stack, self.conf = stack, conf

    def call(self, method: str, path: str, body: Any = None) -> Any:
        status, answer = self.stack.api(method, path, body)
        if status >= 300:
            raise EmbeddedStackError(f"airflow {method} {path}: {status} {answer}")
        return answer

    def unpause(self, dag_id: str) -> None:
        self.call("PATCH", f"/dags/{dag_id}", {"is_paused": False})

    def trigger(self, dag_id: str, **conf: Any) -> str:
        """A run of ``dag_id`` for the migration ``self.conf`` names."""
        return self.trigger_all(dag_id, **{**self.conf, **conf})

    def trigger_all(self, dag_id: str, **conf: Any) -> str:
        """A run of ``dag_id`` with the form's defaults but ``conf`` (and the Spark
        connection ``self.conf`` names)."""
        spark = {k: self.conf[k] for k in ("spark_conn_id",) if k in self.conf}
        run = self.call("POST", f"/dags/{dag_id}/dagRuns",
                        {"logical_date": None, "conf": {**spark, **conf}})
        return str(run["dag_run_id"])

    def trigger_window(self, dag_id: str, start: datetime, end: datetime) -> str:
        """A run of ``dag_id`` for the migration ``self.conf`` names whose data interval is
        ``[start, end)`` (what a backfill of that window replays)."""
        run = self.call("POST", f"/dags/{dag_id}/dagRuns", {
            "logical_date": start.isoformat(), "data_interval_start": start.isoformat(),
            "data_interval_end": end.isoformat(), "conf": self.conf})
        return str(run["dag_run_id"])

    def active(self, dag_id: str) -> list[str]:
        """The runs of ``dag_id`` queued or running, the oldest first."""
        return [r["dag_run_id"] for r in reversed(self.runs(dag_id))
                if r["state"] in ("queued", "running")]

    def runs(self, dag_id: str) -> list[dict[str, Any]]:
        """The newest 100 runs (the API lists the oldest first unless asked)."""
        return list(self.call("GET", f"/dags/{dag_id}/dagRuns?limit=100&order_by=-id")[
            "dag_runs"])

    def wait(self, dag_id: str, pick: Callable[[dict[str, Any]], bool],
             timeout: float = RUN_TIMEOUT) -> dict[str, Any]:
        """The newest run of ``dag_id`` that ``pick`` accepts, once it has finished."""
        deadline = time.monotonic() + timeout
        while True:
            self.stack.check_alive()
            chosen = [r for r in self.runs(dag_id) if pick(r)]
            if chosen and all(r["state"] in ("success", "failed") for r in chosen):
                return max(chosen, key=lambda r: r.get("start_date") or "")
            if time.monotonic() > deadline:
                raise EmbeddedStackError(f"no finished {dag_id} run within {timeout:g} s: "
                                         f"{self.describe(dag_id, chosen)}; logs in "
                                         f"{self.stack.task_logs}")
            time.sleep(1.0)

    def describe(self, dag_id: str, chosen: list[dict[str, Any]]) -> str:
        """The unfinished runs among ``chosen`` with their tasks' states (or, when none was
        chosen, the newest runs of the DAG): what a stuck wait reports."""
        if not chosen:
            newest = sorted(self.runs(dag_id), key=lambda r: r.get("start_date") or "")[-5:]
            return "no such run yet; the newest: " + ", ".join(
                f"{r['dag_run_id']} {r['state']}" for r in newest)
        said = []
        for run in chosen:
            if run["state"] in ("success", "failed"):
                continue
            tasks = self.call("GET", f"/dags/{dag_id}/dagRuns/{quote(run['dag_run_id'], safe='')}"
                              "/taskInstances")["task_instances"]
            said.append(f"{run['dag_run_id']} {run['state']} (" + ", ".join(
                _task_name(t) + f" {t['state']}" for t in tasks) + ")")
        return "; ".join(said)

    def wait_run(self, dag_id: str, run_id: str) -> dict[str, Any]:
        return self.wait(dag_id, lambda r: r["dag_run_id"] == run_id)

    def wait_new(self, dag_id: str, seen: set[str]) -> dict[str, Any]:
        """The first run of ``dag_id`` not in ``seen``, once finished."""
        return self.wait(dag_id, lambda r: r["dag_run_id"] not in seen)

    def wait_deferred(self, dag_id: str, run_id: str, task_id: str, map_index: int = 0,
                      timeout: float = RUN_TIMEOUT) -> None:
        """Until the mapped task ``task_id`` (its ``map_index``: a migration) waits on its
        trigger (or succeeded without): a trigger that fires before the executor has seen
        the deferral makes the scheduler fail the task (it finds it queued again)."""
        path = (f"/dags/{dag_id}/dagRuns/{quote(run_id, safe='')}/taskInstances/{task_id}/"
                f"{map_index}")
        deadline = time.monotonic() + timeout
        while True:
            status, answer = self.stack.api("GET", path)  # 404 until the run has started
            state = answer.get("state") if status == 200 else None
            if state in ("deferred", "success"):
                return
            self.stack.check_alive()
            if state in ("failed", "upstream_failed", "skipped") or time.monotonic() > deadline:
                raise EmbeddedStackError(f"{dag_id} run {run_id}: task {task_id} is {state}, "
                                         "not waiting on its trigger")
            time.sleep(0.5)

    def xcom(self, dag_id: str, run_id: str, task_id: str) -> dict[str, Any]:
        """The value a task returned (its ``return_value`` XCom); of a task mapped per
        migration (a scheduled DAG's), the demo's migration's instance."""
        run = f"/dags/{dag_id}/dagRuns/{quote(run_id, safe='')}/taskInstances/{task_id}"
        status, mapped = self.stack.api("GET", f"{run}/listMapped")
        index = -1
        if status == 200 and mapped.get("task_instances"):
            index = next((t["map_index"] for t in mapped["task_instances"]
                          if t.get("rendered_map_index") == MIGRATION),
                         mapped["task_instances"][0]["map_index"])
        answer = self.call("GET", f"{run}/xcomEntries/return_value?map_index={index}"
                           "&deserialize=true&stringify=false")
        return dict(answer["value"])

    def differing(self, dag_id: str, run_id: str) -> dict[str, Any]:
        """What a run's live validation found: its verdict, what still differs (ranges, or
        the round's rows after a replay) and the round's rows whose newer edit is on its way."""
        found = self.xcom(dag_id, run_id, "validate")
        return {"validation": found.get("verdict"),
                "differing": len(found.get("differing", [])),
                **({"pending": found["pending"]} if "pending" in found else {})}

    def require(self, run: dict[str, Any], what: str) -> None:
        if run["state"] != "success":
            raise EmbeddedStackError(
                f"{what}: DAG run {run['dag_run_id']} of {run['dag_id']} {run['state']}; its "
                f"task logs are in {self.stack.task_logs} (dag_id={run['dag_id']})")


def _task_name(task: dict[str, Any]) -> str:
    """``task_id``, with ``[i]`` for a mapped task's part."""
    index = task.get("map_index", -1)
    return str(task["task_id"]) + (f"[{index}]" if index is not None and index >= 0 else "")


def run_airflow_demo(spec: DemoSpec, report: Report, *, spark: bool = True,
                     keep_running: Callable[[str], None] | None = None,
                     executor: str = "local", workers: int = 2) -> DemoResult:
    """Run the flow; ``report(step, facts)`` as each step ends; ``keep_running(ui_url)`` is
    called at the end, before anything stops (it returns when the user is done).
    ``executor`` and ``workers``: as :func:`~hbase_migrate.airflow_stack.start_airflow`
    (with celery, the ledger is a database on the stack's PostgreSQL)."""
    result = DemoResult()
    with claim_workdir(spec.root, "demo"), EmbeddedStack(spec.root) as stack:
        with _step(result, "start ZooKeeper and the source and target miniclusters",
                   report) as facts:
            facts["zookeeper"] = stack.start_zookeeper()
            source = stack.start_cluster("source", SOURCE_ARGS)
            target = stack.start_cluster("target")
            facts.update(source=source.thrift2, target=target.thrift2, client=spec.client)
        with _step(result, "first workload on the source", report) as facts:
            facts.update(_workload(source, WorkloadSpec(MIGRATION, spec.seed, spec.ops // 2)))
        parts = ("api-server, scheduler, triggerer, dag-processor" if executor == "local" else
                 f"PostgreSQL, redis-server, api-server, scheduler, triggerer, "
                 f"dag-processor, {workers} Celery worker(s)")
        with _step(result, f"start Airflow ({parts})", report) as facts:
            # spark_default serves the runs Airflow starts itself (the Asset-triggered
            # replays, the schedules): Spark, or Spark only for large work (auto)
            # the migration's view of both clusters: over spec.client (the workload keeps
            # writing through the source's Thrift2 gateway)
            migrated = {c.name: replace(c, client=spec.client) for c in (source, target)}
            airflow = start_airflow(spec.root, parallelism=2, executor=executor,
                                    workers=workers, spark_master=SPARK if spark else AUTO,
                                    connections=[hbase_connection(f"hbase_{name}", c)
                                                 for name, c in migrated.items()])
            try:
                airflow.wait_for_dags(DAGS, timeout=RUN_TIMEOUT)
                # the Celery stack's shared ledger, every task's default
                ledger = airflow.env.get(LEDGER_ENV) or None
                write_config(spec.root, migrated["source"], migrated["target"], ledger)
            except BaseException:
                airflow.stop()
                raise
            facts.update(ui=airflow.url, executor=executor,
                         ledger=redact(ledger) if ledger else "sqlite")
        with airflow:
            # Without Spark every task works in-process.
            conf = {**migration_conf(), **({} if spark else {"spark_conn_id": None})}
            dags = Dags(airflow, conf)
            _drive(spec, dags, source, result, report)
            with _step(result, "every DAG run the demo caused is green or skipped",
                       report) as facts:
                facts.update(runs_by_state(dags, result))
            if keep_running is not None:
                keep_running(airflow.url)
    return result


class LiveWorkload:
    """The workload writing to the source in a thread until :meth:`stop` (or the end of the
    ``with`` block, also on an error or Ctrl-C)."""

    def __init__(self, source: ClusterEndpoints, spec: WorkloadSpec) -> None:
        self.source, self.spec = source, spec
        self.halt = threading.Event()
        self.written: dict[str, Any] = {}
        self.failed: list[BaseException] = []
        self.thread = threading.Thread(target=self._write, name="live-workload", daemon=True)

    def _write(self) -> None:
        try:
            runner = Workload(self.source, self.spec)
            try:
                runner.ensure_table()
                self.written.update(runner.run(stop=self.halt).to_json())
            finally:
                runner.close()
        except BaseException as exc:  # raised in the caller's thread by check() or stop()
            self.failed.append(exc)

    def check(self) -> None:
        if self.failed:
            raise self.failed[0]
        if not self.thread.is_alive():
            raise EmbeddedStackError("the live workload stopped early")

    def stop(self) -> dict[str, Any]:
        """Stop writing; what was written."""
        self.halt.set()
        self.thread.join()
        if self.failed:
            raise self.failed[0]
        return self.written

    def __enter__(self) -> LiveWorkload:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.halt.set()
        self.thread.join()


def _drive(spec: DemoSpec, dags: Dags, source: ClusterEndpoints, result: DemoResult,
           report: Report) -> None:
    """The lifecycle through the DAGs, the workload writing until just before the drain."""
    for dag_id in ("hbase_migrate_start", "hbase_migrate_replay", "hbase_migrate_cutover"):
        dags.unpause(dag_id)
    cluster_json = spec.root / "source" / "cluster.json"
    rate = max(2.0, spec.ops / 2 / LIVE_SCALE)
    live_spec = WorkloadSpec(MIGRATION, spec.seed + 1, ops=None, duration=math.inf,
                             rate=rate)  # until stopped
    with LiveWorkload(source, live_spec) as workload:
        with _step(result, "the workload starts writing to the source, until the drain",
                   report) as facts:
            facts.update(rate=rate)
        with _step(result, "hbase_migrate_start: target schema, watermark T0, copy, "
                   "validation (live)", report) as facts:
            run_id = dags.trigger("hbase_migrate_start")
            dags.require(dags.wait_run("hbase_migrate_start", run_id), "the start")
            facts.update(run=run_id, **dags.differing("hbase_migrate_start", run_id),
                         **copy_fact(dags.xcom("hbase_migrate_start", run_id, "snapshot")))
            workload.check()
        with _step(result, "hbase_migrate_wal_watch announces the WAL files, "
                   "hbase_migrate_replay catches up from T0", report) as facts:
            # Unpaused, the watch's latest interval is scheduled at once: its run finds the
            # migration in progress in the ledger and the WAL files written since T0.
            dags.unpause("hbase_migrate_wal_watch")
            watch = dags.wait("hbase_migrate_wal_watch",
                              lambda r: r["run_type"] == "scheduled")
            dags.require(watch, "the watch's scheduled run")
            first = dags.wait_new("hbase_migrate_replay", set())
            dags.require(first, "the first replay")
            facts.update(watch_run=watch["dag_run_id"], replay_run=first["dag_run_id"],
                         **dags.differing("hbase_migrate_replay", first["dag_run_id"]))
            workload.check()
        for turn in range(1, ROUNDS + 1):
            with _step(result, f"round {turn}: the region servers roll their WALs, the watch "
                       "announces them, the replay applies and validates them (live)",
                       report) as facts:
                facts.update(_round(dags, cluster_json))
                workload.check()
        with _step(result, "airflow backfill create: replay a past hour again",
                   report) as facts:
            facts.update(_backfill(dags))
            workload.check()
        with _step(result, "hbase_migrate_backfill: replay the first seconds after T0 "
                   "again", report) as facts:
            facts.update(_replay_after_t0(dags, spec.root))
            workload.check()
        with _step(result, "the workload stops; the last WALs are announced and replay "
                   "drains", report) as facts:
            written = workload.stop()
            facts.update(workload_ops=written.get("total_ops", 0), **_round(dags, cluster_json))
            while dags.active("hbase_migrate_wal_watch"):  # a scheduled run began meanwhile
                facts.update(_round(dags, cluster_json))
        with _step(result, "hbase_migrate_validate: every range, after the last catch-up",
                   report) as facts:
            facts.update(_validated(dags))
    with _step(result, "hbase_migrate_cutover: the gate, then the audit report",
               report) as facts:
        run_id = dags.trigger("hbase_migrate_cutover", max_lag="1m",
                              report_path=str((spec.root / "report.html").absolute()))
        gate = dags.wait_run("hbase_migrate_cutover", run_id)
        facts.update(run=run_id, state=gate["state"])
        result.report = StepResult.from_json(dags.xcom("hbase_migrate_cutover", run_id,
                                                       "report"))
        facts.update(report=result.report.metrics["path"], verdict=result.report.verdict)


def _validated(dags: Dags) -> dict[str, Any]:
    """A strict validation of every range (the rounds' validations compared only the rows
    each replay wrote; the gate asks for every range after the last catch-up): the validate
    DAG unpaused (its schedule's run for the latest interval may start too) and run."""
    dags.unpause("hbase_migrate_validate")
    run_id = dags.trigger("hbase_migrate_validate")
    dags.require(dags.wait_run("hbase_migrate_validate", run_id), "the validation")
    for other in dags.active("hbase_migrate_validate"):  # the schedule's, before the gate
        dags.require(dags.wait_run("hbase_migrate_validate", other), "the scheduled validation")
    return {"run": run_id, **dags.differing("hbase_migrate_validate", run_id)}


def _round(dags: Dags, cluster_json: Path) -> dict[str, Any]:
    """Roll the source's WALs while a watch run waits (the one under way, a scheduled run,
    or one triggered with the form's defaults: every migration in progress); the replay run
    the watch's event starts, once finished (and its validation's differing ranges)."""
    seen = {r["dag_run_id"] for r in dags.runs("hbase_migrate_replay")}
    under_way = dags.active("hbase_migrate_wal_watch")
    watch = (under_way[0] if under_way else
             dags.trigger_all("hbase_migrate_wal_watch", poll_seconds=1, wait_seconds=300))
    dags.wait_deferred("hbase_migrate_wal_watch", watch, "new_wal_files")
    time.sleep(ROUND_SECONDS)  # the workload writes into the current WALs
    rolled = call_admin(cluster_json, "roll")
    dags.require(dags.wait_run("hbase_migrate_wal_watch", watch), "the watch")
    replayed = dags.wait_new("hbase_migrate_replay", seen)
    dags.require(replayed, "the replay")
    return {"rolled": rolled, "watch_run": watch, "replay_run": replayed["dag_run_id"],
            **dags.differing("hbase_migrate_replay", replayed["dag_run_id"])}


def _backfill(dags: Dags) -> dict[str, Any]:
    """``airflow backfill create`` for the hour before the first one the schedule ran, as the
    README gives it (the DAG unpaused first: a paused DAG holds a backfill's runs, queued);
    the run replays that hour for every migration in progress (none of its WAL edits were
    written then: its task is skipped, saying so). The hour comes from the scheduled runs,
    not the clock: unpaused just after the hour turns, the schedule runs the last two hours,
    and a backfill of an hour that has a run already makes none."""
    dags.unpause("hbase_migrate_backfill")  # its last full hour is scheduled at once
    dags.wait("hbase_migrate_backfill", lambda r: r["run_type"] == "scheduled")
    end = min(datetime.fromisoformat(r["data_interval_start"])
              for r in dags.runs("hbase_migrate_backfill") if r["run_type"] == "scheduled")
    start = end - timedelta(hours=1)
    created = dags.stack.airflow(
        "backfill", "create", "--dag-id", "hbase_migrate_backfill",
        "--from-date", start.isoformat(), "--to-date", start.isoformat())
    if created.returncode:
        raise EmbeddedStackError(f"airflow backfill create failed: "
                                 f"{created.stderr.strip()[-500:]}")
    backfilled = dags.wait("hbase_migrate_backfill", lambda r: r["run_type"] == "backfill")
    dags.require(backfilled, "the backfill")
    return {"window": [start.isoformat(), end.isoformat()], "run": backfilled["dag_run_id"]}


def _replay_after_t0(dags: Dags, root: Path) -> dict[str, Any]:
    """A backfill run whose data interval is the first seconds after T0: edits the copy
    did not hold, replayed again (a window with none would prove nothing: it fails)."""
    from hbase_migrate.audit.ledger import Ledger

    with Ledger.open(ledger_url(root), upgrade_schema=False) as ledger:
        record = ledger.migration(MIGRATION)
    if record is None or record.watermark is None:
        raise EmbeddedStackError(f"migration {MIGRATION!r} has no watermark T0 recorded")
    start = datetime.fromtimestamp(record.watermark / 1000, UTC)
    end = min(start + AFTER_T0, datetime.now(UTC))
    run_id = dags.trigger_window("hbase_migrate_backfill", start, end)
    dags.require(dags.wait_run("hbase_migrate_backfill", run_id), "the backfill after T0")
    replayed = dags.xcom("hbase_migrate_backfill", run_id, "replay_window")
    cells = sum((replayed.get("cells") or {}).values())
    if not cells:
        raise EmbeddedStackError(f"the backfill of [{start.isoformat()}, {end.isoformat()}) "
                                 "replayed no cell: the window after T0 held no WAL edit")
    return {"window": [start.isoformat(), end.isoformat()], "run": run_id,
            "files_selected": replayed.get("files_selected"), "cells_replayed": cells}


def runs_by_state(dags: Dags, result: DemoResult) -> dict[str, Any]:
    """The number of runs of each DAG by state, once none is queued or running; raises
    naming the runs that failed (the gate's own run is the gate's answer: a no-go is told as
    the verdict)."""
    deadline = time.monotonic() + RUN_TIMEOUT
    while True:
        found = {d: dags.runs(d) for d in (*DAGS, "hbase_migrate_cdc")}
        if all(r["state"] in ("success", "failed") for runs in found.values() for r in runs):
            break
        if time.monotonic() > deadline:
            raise EmbeddedStackError(f"DAG runs still unfinished after {RUN_TIMEOUT:g} s")
        time.sleep(1.0)
    verdict = result.report.verdict if result.report else None
    red = [f"{d} {r['dag_run_id']}" for d, runs in found.items() for r in runs
           if r["state"] == "failed"
           and not (d == "hbase_migrate_cutover" and verdict != GateVerdict.GO)]
    if red:
        raise EmbeddedStackError(f"red DAG run(s): {', '.join(red)}; their task logs are in "
                                 f"{dags.stack.task_logs}")
    skipped, hosts = task_counts(dags, found)
    return {"runs": {d: dict(Counter(r["state"] for r in runs)) for d, runs in found.items()},
            "skipped_tasks": skipped, "task_hosts": hosts}


def task_counts(dags: Dags, found: dict[str, list[dict[str, Any]]]
                ) -> tuple[dict[str, int], dict[str, int]]:
    """How many tasks of each DAG were skipped (a run with nothing to do is green, its
    tasks skipped), and how many tasks each worker host ran."""
    skipped: Counter[str] = Counter()
    hosts: Counter[str] = Counter()
    for dag_id, runs in found.items():
        for run in runs:
            answer = dags.call("GET", f"/dags/{dag_id}/dagRuns/"
                               f"{quote(run['dag_run_id'], safe='')}/taskInstances")
            skipped[dag_id] += sum(t["state"] == "skipped" for t in answer["task_instances"])
            hosts.update(t["hostname"] for t in answer["task_instances"] if t.get("hostname"))
    return {d: n for d, n in skipped.items() if n}, dict(hosts)


def wait_for_interrupt(url: str, say: Callable[[str], None]) -> None:
    """Keep everything running until Ctrl-C (the demo's ``--keep-running``)."""
    say(f"Airflow UI: {url}  (everything keeps running; Ctrl-C stops it)")
    stop = threading.Event()
    try:
        while not stop.wait(3600):
            pass
    except KeyboardInterrupt:
        say("stopping ...")
