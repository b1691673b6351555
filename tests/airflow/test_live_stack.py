"""The DAGs on a live local Airflow (api-server, scheduler, triggerer, dag-processor on
127.0.0.1, started and stopped by this module) against embedded clusters:

* a REST trigger with a bad Param is refused (400) naming the parameter, and no run starts;
* a run while no migration is in progress ends with its ``migrations`` task skipped, the
  reason in the task's log as the UI shows it; a REST trigger of a paused DAG waits, queued,
  for the unpause;
* a migration started as the UI does (the trigger form's fields over REST; the start DAG,
  run by hand only, is not paused) is kept in step by the unpaused watch's scheduled run and
  the replay it triggers, nothing pasted anywhere;
* a watch run's one Asset event triggers the replay DAG, which replays the batch (its
  ``spark_default`` is ``auto``: these small runs replay in the task, as the ledger records;
  the main job's test replays on Spark): the target equals the source after a workload, and
  the ledger says which run did it, and the run's validation compared the rows it wrote
  (the replay's round: no part planned, the judge validates it);
* a replay run maps one task per WAL chain, and a part whose file cannot be read is
  retried alone;
* ``airflow backfill create`` (no ``--dag-run-conf``) over four hours of a paused DAG makes
  four runs that wait for the unpause; each replays for the migration in progress exactly
  the WAL files holding edits of its own hour (derived here from the write times the files
  were given), and the hour with no edit ends skipped, saying so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from hbase_migrate import lifecycle
from hbase_migrate.airflow_stack import AirflowStack, hbase_connection, start_airflow
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.config import load_config
from hbase_migrate.replay.watermark import fix_watermark
from hbase_migrate.wal.names import ServerName
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from minihbase.zookeeper import ZooKeeperServer
from tests.browser import Browser, colours, find_chromium, png_size
from tests.support.minicluster import (
    clusters_over_rpc,
    compare,
    edits_after_t0,
    run_workload,
    t2,
    write_migration,
)
from tests.support.replay import HBaseRoot, puts, source_endpoints, write_config
from tests.support.wait import load_stretch

pytestmark = [pytest.mark.integration, pytest.mark.slow]
DAGS = ("hbase_migrate_start", "hbase_migrate_wal_watch", "hbase_migrate_replay",
        "hbase_migrate_backfill", "hbase_migrate_validate", "hbase_migrate_cutover")
DONE = ("success", "failed")
HOUR = 3_600_000
# The most a task's retry waits on this stack (Airflow's [core] max_task_retry_delay), in
# seconds: the DAGs' first retry comes 30-60 s after a failure (30 s, exponential backoff,
# Airflow's spread); 10 s here, stretched by the load, leave a test the time to mend what
# failed before the retry runs
RETRY_CAP = str(round(10 * load_stretch()))


@dataclass
class Live:
    stack: AirflowStack
    folder: Path
    source: MiniHBase
    target: MiniHBase


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory,
         zookeeper: ZooKeeperServer) -> Iterator[Live]:
    """The embedded clusters (reached over HBase's own RPC) and a live Airflow."""
    folder = tmp_path_factory.mktemp("live")
    with clusters_over_rpc(folder, zookeeper, WalSettings(region_servers=2)) as (src, dst), \
            start_airflow(folder, parallelism=2, connections=[],  # spark_default: its default
                          extra_env={"AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                                     "AIRFLOW__CORE__MAX_TASK_RETRY_DELAY": RETRY_CAP}
                          ) as stack:
        stack.wait_for_dags(DAGS)
        yield Live(stack, folder, src, dst)


def browser(*, width: int = 1280, height: int = 1600) -> Browser:
    if find_chromium() is None:
        if os.environ.get("HBASE_MIGRATE_SCREENSHOTS"):
            pytest.fail("Chromium is not installed: no screenshot can be taken")
        pytest.skip("Chromium is not installed")
    return Browser(width=width, height=height, timeout=120.0)


def unpause(stack: AirflowStack, dag_id: str) -> None:
    status, answer = stack.api("PATCH", f"/dags/{dag_id}", {"is_paused": False})
    assert status == 200, answer


def trigger(stack: AirflowStack, dag_id: str, conf: dict[str, Any]) -> tuple[int, Any]:
    return stack.api("POST", f"/dags/{dag_id}/dagRuns", {"logical_date": None, "conf": conf})


def runs(stack: AirflowStack, dag_id: str) -> list[dict[str, Any]]:
    status, answer = stack.api("GET", f"/dags/{dag_id}/dagRuns?limit=100&order_by=-id")
    assert status == 200, answer
    return list(answer["dag_runs"])


def task_logs(live: Live, dag_id: str, run_id: str) -> str:
    """The tail of every task log of a run, for failure messages."""
    logs = sorted((live.folder / "airflow" / "logs").glob(
        f"dag_id={dag_id}/run_id={run_id}/**/*.log"))
    return "\n".join(f"--- {p.name}\n" + "\n".join(p.read_text(errors="replace")
                                                    .splitlines()[-25:]) for p in logs)


def run_path(dag_id: str, run_id: str) -> str:
    return f"/dags/{dag_id}/dagRuns/{quote(run_id, safe='')}"


def tasks_of(stack: AirflowStack, dag_id: str, run_id: str) -> list[dict[str, Any]]:
    """A run's task instances, mapped ones each with its map index and label: the grid."""
    status, answer = stack.api("GET", f"{run_path(dag_id, run_id)}/taskInstances?limit=100")
    assert status == 200, answer
    return list(answer["task_instances"])


def task_log(stack: AirflowStack, dag_id: str, run_id: str, task: dict[str, Any]) -> str:
    """A task instance's log as the UI reads it (the REST API's log of its last try)."""
    status, answer = stack.api(
        "GET", f"{run_path(dag_id, run_id)}/taskInstances/{task['task_id']}/logs/"
        f"{max(1, task['try_number'])}?full_content=true&map_index={task['map_index']}")
    assert status == 200, answer
    return json.dumps(answer)


def form_conf(stack: AirflowStack, dag_id: str, **filled: Any) -> dict[str, Any]:
    """What the UI's trigger form sends: every Param's value as the form shows it (its
    default), with the fields a user fills in."""
    status, details = stack.api("GET", f"/dags/{dag_id}/details")
    assert status == 200, details
    conf = {name: param["value"] for name, param in details["params"].items()}
    assert set(filled) <= set(conf), set(filled) - set(conf)
    return {**conf, **filled}


def unpaused_now(stack: AirflowStack, dag_id: str) -> datetime:
    """Unpause ``dag_id``; when (a run the pause held starts after it)."""
    when = datetime.now(UTC)
    unpause(stack, dag_id)
    return when


def started(run: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(run["start_date"])


def wait_run(live: Live, dag_id: str, pick: Any, timeout: float = 300.0) -> dict[str, Any]:
    """The first run of ``dag_id`` that ``pick`` accepts, once it has finished."""
    deadline = time.monotonic() + timeout
    while True:
        chosen = [r for r in runs(live.stack, dag_id) if pick(r)]
        if chosen and chosen[0]["state"] in DONE:
            return chosen[0]
        if time.monotonic() > deadline:
            raise AssertionError(f"no finished {dag_id} run within {timeout:g} s: {chosen}")
        time.sleep(1.0)


def watched(live: Live, pick: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """The watch unpaused until its run ``pick`` accepts ends green (then paused again: the
    tests trigger it themselves); that run and its ``new_wal_files`` tasks' states by
    migration."""
    try:
        unpause(live.stack, "hbase_migrate_wal_watch")
        watch = wait_run(live, "hbase_migrate_wal_watch", pick)
    finally:
        live.stack.api("PATCH", "/dags/hbase_migrate_wal_watch", {"is_paused": True})
    assert watch["state"] == "success", task_logs(live, "hbase_migrate_wal_watch",
                                                  watch["dag_run_id"])
    return watch, {t["rendered_map_index"]: t["state"]
                   for t in tasks_of(live.stack, "hbase_migrate_wal_watch", watch["dag_run_id"])
                   if t["task_id"] == "new_wal_files"}


def test_airflow_keeps_its_state_on_the_stacks_postgresql(live: Live) -> None:
    """The metadata database is the stack's PostgreSQL (no SQLite file, whose every writer
    locks the whole file): the scheduler and dag-processor registered the DAGs there."""
    import psycopg

    assert live.stack.postgres is not None
    with psycopg.connect(live.stack.postgres.dsn("airflow")) as db:
        registered = {r[0] for r in db.execute("select dag_id from dag").fetchall()}
    assert set(DAGS) <= registered
    assert not (live.stack.home / "airflow.db").exists()


def test_a_bad_param_is_refused_before_a_run(live: Live) -> None:
    named = {"migration": "m", "source_conn_id": "a", "target_conn_id": "b", "tables": ["t"]}
    status, answer = trigger(live.stack, "hbase_migrate_start",
                             {**named, "watermark": "yesterday"})
    assert status == 400 and "watermark" in json.dumps(answer), answer
    status, answer = trigger(live.stack, "hbase_migrate_start", {})  # no default migration
    assert status == 400 and "migration" in json.dumps(answer), answer
    status, answer = trigger(live.stack, "hbase_migrate_backfill", {"gateway": "thrift3"})
    assert status == 400 and "gateway" in json.dumps(answer), answer
    assert runs(live.stack, "hbase_migrate_start") == []


def test_a_run_with_no_migration_in_progress_skips_saying_why(live: Live) -> None:
    """Before any migration has started: a run of the validation (triggered over REST with
    an empty form, as a scheduled run has) stays queued while the DAG is paused, starts once
    it is unpaused, and ends green with its ``migrations`` task skipped, the reason in the
    log the UI shows, and nothing after it run."""
    status, run = trigger(live.stack, "hbase_migrate_validate", {})
    assert status == 200, run
    assert run["state"] == "queued"
    unpaused = unpaused_now(live.stack, "hbase_migrate_validate")
    done = wait_run(live, "hbase_migrate_validate",
                    lambda r: r["dag_run_id"] == run["dag_run_id"])
    assert done["state"] == "success" and started(done) >= unpaused, done
    tasks = tasks_of(live.stack, "hbase_migrate_validate", run["dag_run_id"])
    assert {t["task_id"]: t["state"] for t in tasks} == {
        "migrations": "skipped", "plan_validation": "skipped", "validate_part": "skipped",
        "validate": "skipped"}
    first = next(t for t in tasks if t["task_id"] == "migrations")
    said = task_log(live.stack, "hbase_migrate_validate", run["dag_run_id"], first)
    assert "hbase_migrate_validate: no migration in progress in the ledgers" in said, said


def test_a_migration_started_from_the_ui_is_kept_in_step_by_the_schedules(live: Live) -> None:
    """The start DAG triggered with its form's fields (clusters by ``hbase`` connection, the
    ledger left empty), then edits written to the source after the copy: the watch's
    scheduled run (the DAG unpaused, nothing pasted) announces the new WAL files of that
    migration, the replay its event triggers applies them, and the target equals the source
    cell for cell. Its ref in XCom names the migration alone (its ledger is the default)."""
    src, dst, stack, name, table = live.source, live.target, live.stack, "ui_test", "ui_orders"
    for conn_id, cluster in (("hbase_source", src), ("hbase_target", dst)):
        stack.put_connection(hbase_connection(conn_id, cluster.endpoints))
    run_workload(src, table, seed=21, ops=150)
    conf = form_conf(stack, "hbase_migrate_start", migration=name, tables=[table],
                     source_conn_id="hbase_source", target_conn_id="hbase_target", parts=1)
    # a DAG run by hand only is not paused: the trigger runs, no unpause first (issue 71)
    status, details = stack.api("GET", "/dags/hbase_migrate_start")
    assert status == 200 and details["is_paused"] is False, details
    status, run = trigger(stack, "hbase_migrate_start", conf)
    assert status == 200, run
    done = wait_run(live, "hbase_migrate_start", lambda r: r["dag_run_id"] == run["dag_run_id"])
    assert done["state"] == "success", task_logs(live, "hbase_migrate_start", run["dag_run_id"])
    assert compare(src, dst, table).equal

    run_workload(src, table, seed=22, ops=150)  # after T0: only replay brings these over
    assert src.region_servers is not None
    src.region_servers.roll()
    assert not compare(src, dst, table).equal
    # unpaused, its latest interval's run is scheduled
    watch, mapped = watched(live, lambda r: r["run_type"] == "scheduled")
    assert mapped == {name: "success"}, mapped
    status, refs = stack.api("GET", f"{run_path('hbase_migrate_wal_watch', watch['dag_run_id'])}"
                             "/taskInstances/migrations/xcomEntries/return_value"
                             "?deserialize=true&stringify=false")
    assert status == 200 and refs["value"] == [{"migration": name}], refs
    replayed = wait_run(live, "hbase_migrate_replay", lambda r: True)
    assert replayed["run_type"] == "asset_triggered"
    assert replayed["state"] == "success", task_logs(live, "hbase_migrate_replay",
                                                     replayed["dag_run_id"])
    assert compare(src, dst, table).equal
    with Ledger.open(f"sqlite:///{live.folder / name / 'ledger.db'}") as ledger:
        record = ledger.migration(name)
        assert record is not None
        steps = ledger.steps(record.id)
        ran = {(s.kind, s.status.value, s.dag_id, s.run_id) for s in steps if s.kind == "replay"}
        checked = [s.metrics.get("round", {}) for s in steps if s.kind == "validate"
                   and s.run_id == replayed["dag_run_id"]]
    assert ran == {("replay", "succeeded", "hbase_migrate_replay", replayed["dag_run_id"])}
    # its validation compared the rows the replay wrote (the round), not every range
    replayed_by = sorted(s.id for s in steps if s.kind == "replay")  # a step per WAL chain
    assert [(c.get("replays"), c.get("rows", 0) > 0) for c in checked] == [(replayed_by, True)]


NAMED = {"source_conn_id": "hbase_source", "target_conn_id": "hbase_target"}


@dataclass
class OwnLedger:
    name: str
    table: str
    ledger: str

    def definitions(self) -> list[dict[str, Any]]:
        with Ledger.open(self.ledger) as opened:
            record = opened.migration(self.name)
            assert record is not None
            return [d for _, d, _ in opened.definitions(record.id)]


def test_a_ledger_later_runs_cannot_open_is_refused_by_the_form(live: Live) -> None:
    """A relative SQLite file (each task's working folder) or a URL with a password (never
    carried to the scheduled runs) is refused when the start form is sent, with the rule."""
    named = {**NAMED, "migration": "refused", "tables": ["t"]}
    for bad in ("sqlite:///orders.db", "postgresql://me:secret@127.0.0.1:5432/ledger"):
        status, answer = trigger(live.stack, "hbase_migrate_start", form_conf(
            live.stack, "hbase_migrate_start", **named, ledger=bad))
        said = json.dumps(answer)
        assert status == 400 and "param ledger" in said, (status, answer)
        assert "every scheduled run can open" in said, said
    assert not [r for r in runs(live.stack, "hbase_migrate_start")
                if r["conf"].get("migration") == "refused"]


@pytest.fixture(scope="module")
def own_ledger(live: Live) -> OwnLedger:
    """A migration started from the form with a ledger of its own (none the schedules look
    in by default) and a roll period of 2m, then edits after its T0 in rolled WAL files."""
    src, dst, stack = live.source, live.target, live.stack
    found = OwnLedger("own_ledger", "own", f"sqlite:///{live.folder / 'elsewhere' / 'o.db'}")
    for conn_id, cluster in (("hbase_source", src), ("hbase_target", dst)):
        stack.put_connection(hbase_connection(conn_id, cluster.endpoints))
    run_workload(src, found.table, seed=51, ops=150)
    status, run = trigger(stack, "hbase_migrate_start", form_conf(
        stack, "hbase_migrate_start", **NAMED, migration=found.name, tables=[found.table],
        parts=1, roll_period="2m", ledger=found.ledger))
    assert status == 200, run
    unpause(stack, "hbase_migrate_start")
    done = wait_run(live, "hbase_migrate_start", lambda r: r["dag_run_id"] == run["dag_run_id"])
    assert done["state"] == "success", task_logs(live, "hbase_migrate_start", run["dag_run_id"])
    run_workload(src, found.table, seed=52, ops=150)  # after T0: only replay brings these
    assert src.region_servers is not None
    src.region_servers.roll()
    assert not compare(src, dst, found.table).equal
    return found


def cutover(live: Live, name: str, **filled: Any
            ) -> tuple[dict[str, Any], dict[str, dict[str, Any]], str]:
    """A cutover run triggered from its form (the name and ``filled`` in, the rest as the
    form shows it): the finished run, its tasks, its gate's log."""
    stack = live.stack
    status, run = trigger(stack, "hbase_migrate_cutover", form_conf(
        stack, "hbase_migrate_cutover", migration=name, **filled))
    assert status == 200, run
    unpause(stack, "hbase_migrate_cutover")
    done = wait_run(live, "hbase_migrate_cutover", lambda r: r["dag_run_id"] == run["dag_run_id"])
    tasks = {t["task_id"]: t for t in tasks_of(stack, "hbase_migrate_cutover", run["dag_run_id"])}
    return done, tasks, task_log(stack, "hbase_migrate_cutover", run["dag_run_id"],
                                 tasks["cutover_check"])


def test_a_no_go_cutover_run_fails_and_a_form_keeps_the_migrations_settings(
        live: Live, own_ledger: OwnLedger) -> None:
    """The cutover form asks for the name alone; with its defaults it keeps the migration's
    roll period (2m) and ledger, and its no-go (nothing replayed yet) fails the run, the
    report written all the same. A roll period that differs is refused at once, saying
    which and how to change it, and nothing changes."""
    name = own_ledger.name
    assert [d["replay"]["roll_period"] for d in own_ledger.definitions()] == [120_000]
    out = live.folder / "own_ledger_report.html"
    gate, tasks, said = cutover(live, name, report_path=str(out))
    assert (gate["state"], tasks["cutover_check"]["state"], tasks["report"]["state"],
            tasks["verdict"]["state"]) == ("failed", "failed", "success", "upstream_failed")
    assert f"cutover-check of migration '{name}': no-go: " in said, said
    assert "NO-GO" in out.read_text("utf-8")
    assert [d["replay"]["roll_period"] for d in own_ledger.definitions()] == [120_000]

    refused, tasks, said = cutover(live, name, roll_period="1h")
    assert (refused["state"], tasks["cutover_check"]["state"]) == ("failed", "failed")
    assert "replay.roll_period 120000 -> 3600000" in said and "change_settings" in said, said
    assert tasks["cutover_check"]["try_number"] == 1  # no retry can mend it
    assert [d["replay"]["roll_period"] for d in own_ledger.definitions()] == [120_000]


def test_the_schedules_keep_a_migration_on_its_own_ledger_in_step(
        live: Live, own_ledger: OwnLedger) -> None:
    """The watch's run with an empty form (as its schedule runs it) finds the migration in
    the ledger its start named, and the replay its event triggers levels the target."""
    stack, name = live.stack, own_ledger.name
    seen = {r["dag_run_id"] for r in runs(stack, "hbase_migrate_replay")}
    status, watch = trigger(stack, "hbase_migrate_wal_watch", form_conf(
        stack, "hbase_migrate_wal_watch", wait_seconds=20, poll_seconds=1))
    assert status == 200, watch
    _, mapped = watched(live, lambda r: r["dag_run_id"] == watch["dag_run_id"])
    assert mapped.get(name) == "success", mapped
    replayed = wait_run(live, "hbase_migrate_replay", lambda r: r["dag_run_id"] not in seen)
    assert replayed["state"] == "success", task_logs(live, "hbase_migrate_replay",
                                                     replayed["dag_run_id"])
    assert compare(live.source, live.target, own_ledger.table).equal
    with Ledger.open(own_ledger.ledger) as opened:
        record = opened.migration(name)
        assert record is not None
        ran = {s.run_id for s in opened.steps(record.id, "replay")}
    assert ran == {replayed["dag_run_id"]}


def test_a_setting_changes_when_the_form_says_so_and_the_run_says_what(
        live: Live, own_ledger: OwnLedger) -> None:
    _, _, said = cutover(live, own_ledger.name, roll_period="1h", change_settings=True)
    assert "this run changes its settings" in said, said
    assert "replay.roll_period 120000 -> 3600000" in said, said
    assert [d["replay"]["roll_period"] for d in own_ledger.definitions()] == [120_000,
                                                                              3_600_000]


def test_a_wal_event_triggers_the_replay_of_the_batch(live: Live) -> None:
    src, dst, folder = live.source, live.target, live.folder / "asset"
    folder.mkdir()
    run_workload(src, "orders", seed=31, ops=150)
    config = write_migration(folder, src, dst, "orders", name="asset_test")
    spec = load_config(config)
    lifecycle.prepare(spec)
    lifecycle.snapshot(spec)  # T0: what follows reaches the target by replay only
    run_workload(src, "orders", seed=32, ops=150)
    assert src.region_servers is not None
    src.region_servers.roll()  # new WAL files the ledger has never listed
    assert not compare(src, dst, "orders").equal

    seen = {r["dag_run_id"] for r in runs(live.stack, "hbase_migrate_replay")}
    status, watch = trigger(live.stack, "hbase_migrate_wal_watch",
                            {"config": str(config), "wait_seconds": 120, "poll_seconds": 1})
    assert status == 200, watch
    unpause(live.stack, "hbase_migrate_wal_watch")
    try:
        done = wait_run(live, "hbase_migrate_wal_watch",
                        lambda r: r["dag_run_id"] == watch["dag_run_id"])
    finally:  # no scheduled run of it while the next tests run
        live.stack.api("PATCH", "/dags/hbase_migrate_wal_watch", {"is_paused": True})
    assert done["state"] == "success", task_logs(live, "hbase_migrate_wal_watch",
                                                 watch["dag_run_id"])
    replayed = wait_run(live, "hbase_migrate_replay", lambda r: r["dag_run_id"] not in seen)
    assert replayed["run_type"] == "asset_triggered"
    assert replayed["state"] == "success", task_logs(live, "hbase_migrate_replay",
                                                     replayed["dag_run_id"])
    assert compare(src, dst, "orders").equal
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None
        recorded = ledger.steps(record.id)[2:]  # after prepare and snapshot
    steps = [(s.kind, s.status.value, s.dag_id, s.run_id, s.task_id) for s in recorded]
    # a part per region server's WAL chain, then the validation: its parts, then its judge
    run = ("succeeded", "hbase_migrate_replay", replayed["dag_run_id"])
    assert steps[:2] == [("replay", *run, "replay")] * 2
    for part in recorded[:2]:  # spark_default is auto: a small run replays in its task
        assert part.metrics["engine"]["engine"] == "in-process", part.metrics["engine"]
    assert steps[2:-1] and set(steps[2:-1]) == {("validate-part", *run, "validate_part")}
    assert steps[-1] == ("validate", *run, "validate")


def test_the_replay_maps_a_task_per_chain_and_retries_a_failed_one_alone(live: Live) -> None:
    """The grid of a replay run has one mapped ``replay`` task per WAL chain (the source's
    two region servers); a file of one chain that cannot be read fails that part alone, and
    its retry (the file readable again) finishes it while the other part ran once."""
    from hbase_migrate.lifecycle.replay import replay_parts
    from hbase_migrate.replay.ordering import chain_id

    src, dst, folder = live.source, live.target, live.folder / "parts"
    folder.mkdir()
    spec = edits_after_t0(folder, src, dst, "parts", name="parts_test", seed=41)
    parts = replay_parts(spec)
    servers = sorted(p.name for p in (src.hbase_root_dir / "WALs").iterdir())
    assert [c for part in parts for c in part] == servers  # one chain each, no move
    # the file the roll closed (and archived) of the second chain: unreadable until restored
    closed = sorted(f for f in (src.hbase_root_dir / "oldWALs").iterdir()
                    if chain_id(str(f)) == servers[1])
    victim = closed[-1]
    kept = victim.read_bytes()
    victim.write_bytes(b"not a WAL file at all")
    try:
        status, run = trigger(live.stack, "hbase_migrate_replay",
                              {"config": str(spec.path), "spark_conn_id": None})
        assert status == 200, run
        run_id = run["dag_run_id"]
        mapped = f"/dags/hbase_migrate_replay/dagRuns/{run_id}/taskInstances/replay/listMapped"
        deadline = time.monotonic() + 300
        while True:
            status, answer = live.stack.api("GET", mapped)
            states = {t["map_index"]: t["state"] for t in answer.get("task_instances", [])}
            if states.get(1) == "up_for_retry":
                break
            assert states.get(1) not in ("failed", "success"), states
            assert time.monotonic() < deadline, states
            time.sleep(0.5)
    finally:
        victim.write_bytes(kept)
    done = wait_run(live, "hbase_migrate_replay", lambda r: r["dag_run_id"] == run_id)
    assert done["state"] == "success", task_logs(live, "hbase_migrate_replay", run_id)
    status, answer = live.stack.api("GET", mapped)
    tries = {t["map_index"]: (t["state"], t["try_number"]) for t in answer["task_instances"]}
    assert tries == {0: ("success", 1), 1: ("success", 2)}  # one task per chain
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None
        ran = [(s.status.value, s.task_id) for s in ledger.steps(record.id, "replay")
               if s.run_id == run_id]
    # part 0 once; part 1 failed on the unreadable file, then succeeded
    assert sorted(ran) == [("failed", "replay"), ("succeeded", "replay"),
                           ("succeeded", "replay")]
    assert compare(src, dst, "parts").equal


def test_a_backfill_of_the_hour_in_progress_is_refused_and_cancelled_as_the_docs_say(
        live: Live) -> None:
    """``airflow backfill create`` over the hour in progress alone (no hour of it has
    ended) creates no run and says so, and Airflow keeps that empty backfill open, which
    would refuse the next one; cancelled over REST as the docs give it, the next create is
    taken."""
    now = datetime.now(UTC)
    if now.minute == 59:  # the hour must not end between here and the create
        time.sleep(61 - now.second)
    hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    made = shell(live, "airflow backfill create --dag-id hbase_migrate_backfill "
                 f"--from-date {hour.isoformat()} --to-date {hour.isoformat()}")
    assert made.returncode != 0 and "No runs to create" in made.stdout + made.stderr, made
    status, listed = live.stack.api("GET", "/backfills?dag_id=hbase_migrate_backfill")
    assert status == 200, listed
    left = [b for b in listed["backfills"] if b["completed_at"] is None]
    assert len(left) == 1, listed  # Airflow's, not ours: the docs say how to end it
    again = shell(live, "airflow backfill create --dag-id hbase_migrate_backfill "
                  f"--from-date {hour.isoformat()} --to-date {hour.isoformat()}")
    assert "AlreadyRunningBackfill" in again.stdout + again.stderr, again
    status, answer = live.stack.api("PUT", f"/backfills/{left[0]['id']}/cancel")
    assert status == 200 and answer["completed_at"], answer
    status, listed = live.stack.api("GET", "/backfills?dag_id=hbase_migrate_backfill")
    assert [b for b in listed["backfills"] if b["completed_at"] is None] == [], listed


def test_a_backfill_replays_exactly_each_hours_files(live: Live) -> None:
    """``airflow backfill create`` as the README gives it (no ``--dag-run-conf``) while the
    DAG is paused: its runs wait, queued, and start once it is unpaused; each replays its
    hour for every migration in progress, ``backfill_test`` among them (its ledger where
    the tasks look by default), exactly the WAL files with edits of that hour; the fourth
    hour holds none and its task ends skipped, saying so; the fifth holds edits of another
    table only, and its task, which wrote nothing, ends skipped too, saying why."""
    name = "backfill_test"
    folder = live.folder / "backfill"
    root = HBaseRoot(folder / "hbase")
    first = (datetime.now(UTC) - timedelta(hours=6)).replace(minute=0, second=0,
                                                             microsecond=0)
    h0 = int(first.timestamp() * 1000)
    minute = 60_000
    rs1 = ServerName("rs1.example.com", 16020, h0 - 10 * minute)
    rs2 = ServerName("rs2.example.com", 16020, h0 - 50 * minute)
    table = "events"
    # Each server rolls within the roll period (1 h), as HBase does, so the files cover
    # the windows; each file's three edits come 15 minutes after its creation. Some files
    # are created in the hour before the one their edits belong to; none holds an edit of
    # the fourth hour, which a file of the third is still looked at for.
    chains = {rs1: (-10, 45, 100, 155), rs2: (-50, 5, 60, 115)}
    files = {}
    for server, created in chains.items():
        for i, minutes in enumerate(created):
            written = h0 + (minutes + 15) * minute
            path = root.write(server, h0 + minutes * minute, table,
                              puts(f"{server.host}-{i}", i * 10, 3), write_time=written)
            files[path.name] = range(written, written + 3)
    # the fifth hour: edits of a table the migration leaves out, in rs1's next file (rolled
    # within the roll period after its last, so its chain has no hole)
    noise = h0 + 245 * minute
    path = root.write(rs1, h0 + 210 * minute, "noise", puts("noise", 0, 3), write_time=noise)
    files[path.name] = range(noise, noise + 3)
    with t2(live.target) as target:
        target.create_table(TableDescriptor(table, (FamilyDescriptor(b"d", max_versions=3),)))
    # in progress in the ledger the tasks find by themselves: <state dir>/<name>/ledger.db
    ledger_url = f"sqlite:///{live.folder / name / 'ledger.db'}"
    config = write_config(folder, source=source_endpoints("127.0.0.1:9", root=root.root),
                          target=live.target.endpoints, tables=[table], name=name)
    config.write_text(config.read_text().replace(f"sqlite:///{folder / 'ledger.db'}",
                                                 ledger_url))
    fix_watermark(load_config(config), h0 - HOUR)

    def backfilled() -> list[dict[str, Any]]:
        return [r for r in runs(live.stack, "hbase_migrate_backfill")
                if r["run_type"] == "backfill"]

    create_backfill(live, first, backfilled, hours=5)  # the DAG is paused
    assert [r["state"] for r in backfilled()] == ["queued"] * 5
    unpaused = unpaused_now(live.stack, "hbase_migrate_backfill")
    deadline = time.monotonic() + 600
    while not all(r["state"] in DONE for r in backfilled()):
        assert time.monotonic() < deadline, backfilled()
        time.sleep(1.0)
    windows, tasks = {}, {}
    for run in backfilled():
        assert run["state"] == "success", task_logs(live, "hbase_migrate_backfill",
                                                    run["dag_run_id"])
        assert started(run) >= unpaused, run
        start = int(datetime.fromisoformat(run["data_interval_start"]).timestamp() * 1000)
        windows[run["dag_run_id"]] = (start, start + HOUR)
        tasks[start] = next(t for t in tasks_of(live.stack, "hbase_migrate_backfill",
                                                run["dag_run_id"])
                            if t["rendered_map_index"] == name)
    assert sorted(windows.values()) == [(h0 + k * HOUR, h0 + (k + 1) * HOUR) for k in range(5)]
    assert [tasks[h0 + k * HOUR]["state"] for k in range(5)] == ["success"] * 3 + [
        "skipped"] * 2
    empty, other = tasks[h0 + 3 * HOUR], tasks[h0 + 4 * HOUR]
    said = task_log(live.stack, "hbase_migrate_backfill", empty["dag_run_id"], empty)
    assert f"no WAL edits of migration '{name}' in the window" in said, said
    said = task_log(live.stack, "hbase_migrate_backfill", other["dag_run_id"], other)
    assert (f"no WAL edits of migration '{name}' in the window" in said
            and "1 WAL file(s) hold edits of the window, none of its table(s) events" in said
            ), said

    with Ledger.open(ledger_url) as ledger:
        record = ledger.migration(name)
        assert record is not None
        recorded = ledger.steps(record.id, "backfill")
    # unpaused, the DAG also runs its own schedule (the last hour) for the migration
    steps = [s for s in recorded if s.run_id in windows]
    assert all((s.run_id or "").startswith("scheduled__") for s in recorded if s not in steps)
    assert sorted(s.run_id or "" for s in steps) == sorted(windows)
    for step in steps:
        assert step.dag_id == "hbase_migrate_backfill" and step.task_id == "replay_window"
        start, end = windows[step.run_id or ""]
        manifest = step.metrics["manifest"]
        assert (manifest["window"]["start"], manifest["window"]["end"]) == (start, end)
        selected = {Path(i["path"]).name for i in manifest["items"] if i["included"]}
        expected = {name for name, times in files.items()
                    if any(start <= t < end for t in times)}
        assert selected == expected, (step.run_id, selected, expected)
        assert manifest["items"], step.run_id  # the empty hour too had files looked at


def shell(live: Live, command: str) -> subprocess.CompletedProcess[str]:
    """``command`` in a bash with a bare environment, after the line the docs give:
    ``eval "$(hbase-migrate airflow env --dir D)"``."""
    cli = Path(sys.executable).parent / "hbase-migrate"
    script = f'eval "$({cli} airflow env --dir {live.folder})" && {command}'
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=300,
                          check=False, env={"HOME": os.environ.get("HOME", "/"),
                                            "PATH": "/usr/bin:/bin"})


def test_airflows_own_cli_works_in_a_shell_given_the_stacks_environment(live: Live) -> None:
    """``airflow dags list`` in a shell that has only what ``hbase-migrate airflow env``
    emits lists this stack's DAGs (their database, DAG and plugin folders)."""
    listed = shell(live, "airflow dags list -o plain")
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert set(DAGS) <= set(listed.stdout.split()), listed.stdout
    assert "Database migration required" not in listed.stdout + listed.stderr


def test_the_stack_leaves_the_engine_to_auto_unless_told(live: Live) -> None:
    """``spark_default`` is ``auto`` when the stack is started naming no master: a task
    runs in-process, Spark only for large work (never every task on local[2])."""
    status, conn = live.stack.api("GET", "/connections/spark_default")
    assert status == 200 and (conn["conn_type"], conn["host"]) == ("spark", "auto"), conn


def create_backfill(live: Live, first: datetime,
                    backfilled: Callable[[], list[dict[str, Any]]], hours: int) -> None:
    """``airflow backfill create`` over ``hours`` hours from ``first``, as the README gives
    it. On SQLite a write that meets the scheduler's can fail at once ("database is
    locked": no busy wait helps a deferred transaction's upgrade), and Airflow commits a
    backfill in steps: then the partial backfill is cancelled, the runs it made (a cancel
    fails the queued ones) deleted, and the create repeated (it makes no second run of an
    hour that has one)."""
    for _ in range(3):  # as the docs give it, in a shell with the stack's environment
        created = shell(live, "airflow backfill create --dag-id hbase_migrate_backfill "
                        f"--from-date {first.isoformat()} "
                        f"--to-date {(first + timedelta(hours=hours - 1)).isoformat()}")
        if created.returncode == 0:
            return
        assert "database is locked" in created.stderr, created.stderr[-2000:]
        _, listed = live.stack.api("GET", "/backfills?dag_id=hbase_migrate_backfill")
        for partial in listed["backfills"]:
            if partial.get("completed_at") is None:
                live.stack.api("PUT", f"/backfills/{partial['id']}/cancel")
        for run in backfilled():
            status, answer = live.stack.api("DELETE", run_path("hbase_migrate_backfill",
                                                              run["dag_run_id"]))
            assert status == 204, (status, answer)
    raise AssertionError(f"backfill create failed 3 times: {created.stderr[-2000:]}")


def test_the_trigger_form_shows_the_params_in_a_real_browser(live: Live) -> None:
    status, details = live.stack.api("GET", "/dags/hbase_migrate_start/details")
    assert status == 200, details
    titles = [p["schema"]["title"] for p in details["params"].values()]
    assert {"Watermark T0", "Parts", "Change the migration's settings"} <= set(titles)
    assert len(titles) == 12
    with browser() as page:
        page.open(f"{live.stack.url}/dags/hbase_migrate_start")
        page.wait_until("!!document.querySelector('button[aria-label=\"Trigger Dag\"]')")
        page.evaluate("document.querySelector('button[aria-label=\"Trigger Dag\"]').click()")
        form = page.wait_until(
            "Array.from(document.querySelectorAll('[role=dialog]')).map(d => d.innerText)"
            ".find(t => t.includes('Run Parameters') && t.includes('Watermark T0'))")
        png = page.screenshot(full_page=False)
    assert "Trigger Dag - hbase_migrate_start" in form
    assert [t for t in titles if t not in form] == []
    assert png_size(png) == (page.width, page.height)


SHOW_GRAPH = ("[...document.querySelectorAll('button')].find(b => "
              "(b.title + ' ' + b.getAttribute('aria-label')).includes('Show Graph'))")
GRAPH = ("(() => { const box = e => { const r = e.getBoundingClientRect();"
         " return {x: r.left, y: r.top, width: r.width, height: r.height}; };"
         " return {pane: box(document.querySelector('.react-flow')),"
         " edges: document.querySelectorAll('.react-flow__edge').length,"
         " nodes: [...document.querySelectorAll('.react-flow__node')].map(e =>"
         " ({id: e.dataset.id, text: e.innerText, ...box(e)}))}; })()")


def test_the_graph_view_shows_every_task_of_the_start_dag(live: Live) -> None:
    """The DAG page's graph view (the UI keeps the view chosen with its grid/graph toggle in
    the browser's local storage, not in the URL): one node per task, one edge per dependency,
    painted. With HBASE_MIGRATE_SCREENSHOTS=DIR, the page is saved as DIR/dag-graph.png."""
    status, answer = live.stack.api("GET", "/dags/hbase_migrate_start/tasks")
    assert status == 200, answer
    tasks = {t["task_id"]: set(t["downstream_task_ids"]) for t in answer["tasks"]}
    edges = sum(len(after) for after in tasks.values())
    assert tasks and edges
    with browser(width=1200, height=640) as page:
        page.open(f"{live.stack.url}/dags/hbase_migrate_start")
        page.wait_until(f"({SHOW_GRAPH}) !== undefined")
        page.evaluate(f"({SHOW_GRAPH}).click()")
        page.wait_until(f"document.querySelectorAll('.react-flow__node').length >= {len(tasks)}"
                        f" && document.querySelectorAll('.react-flow__edge').length >= {edges}")
        layout = page.wait_until(f"new Promise(done => {{ const now = () => {GRAPH};"
                                 " const first = JSON.stringify(now());"
                                 " setTimeout(() => done(JSON.stringify(now()) === first"
                                 " && now()), 500); })")  # until the fit-to-view has settled
        pane = layout["pane"]
        painted = colours(page.screenshot(scale=0.25, clip=pane))
        if folder := os.environ.get("HBASE_MIGRATE_SCREENSHOTS"):
            Path(folder).mkdir(parents=True, exist_ok=True)
            (Path(folder) / "dag-graph.png").write_bytes(page.screenshot(full_page=False,
                                                                         scale=0.75))
    nodes = {node["id"]: node for node in layout["nodes"]}
    assert set(nodes) == set(tasks) and layout["edges"] == edges, layout
    for mapped in ("snapshot_part", "validate_part"):
        assert nodes[mapped]["text"].startswith(f"{mapped} ["), nodes
    for task_id, node in nodes.items():
        assert node["text"].split("\n")[0].split(" [")[0] == task_id, node
        assert pane["x"] <= node["x"] and node["x"] + node["width"] <= pane["x"] + pane["width"]
        assert pane["y"] <= node["y"] and node["y"] + node["height"] <= pane["y"] + pane["height"]
    background = max(painted.values())
    assert len(painted) >= 4 and 1 - background / sum(painted.values()) > 0.05, painted


def test_it_listens_on_loopback_only_and_airflow_down_stops_it(live: Live) -> None:
    import psutil
    from click.testing import CliRunner

    from hbase_migrate.cli import cli

    started = {**live.stack.processes, **live.stack.backing}  # Airflow's and PostgreSQL
    groups = {p.pid for p in started.values()}
    members = [p for p in psutil.process_iter() if _group_of(p.pid) in groups]
    airflow = {p.pid for p in live.stack.processes.values()}
    # the scheduler's workers, the api-server's
    assert len([p for p in members if _group_of(p.pid) in airflow]) > len(airflow)
    listening = {(c.laddr.ip, c.laddr.port) for p in members for c in _sockets(p)
                 if c.status == psutil.CONN_LISTEN}
    # loopback only (a JVM of a Spark task lists it IPv4-mapped: ::ffff:127.0.0.1)
    assert listening and {loopback(ip) for ip, _ in listening} == {"127.0.0.1"}, listening
    assert ("127.0.0.1", live.stack.port) in listening

    result = CliRunner().invoke(cli, ["airflow", "down", "--dir", str(live.folder)])
    assert result.exit_code == 0, result.output
    assert set(result.output.removeprefix("stopped ").strip().split(", ")) == set(started)
    assert not [p for p in members if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


def loopback(ip: str) -> str:
    """``ip``, an IPv4-mapped IPv6 address as its IPv4 form."""
    import ipaddress

    address = ipaddress.ip_address(ip)
    mapped = getattr(address, "ipv4_mapped", None)
    return str(mapped or address)


def _group_of(pid: int) -> int | None:
    import os

    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def _sockets(process: Any) -> list[Any]:
    import psutil

    try:
        return list(process.net_connections(kind="inet"))
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return []
