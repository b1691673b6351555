"""``airflow up --executor celery``: PostgreSQL, redis-server and two Celery workers, each in
its own folder and with its own host name, run a real migration (the start DAG's schema,
copy and live validation, then the validate DAG) against embedded clusters, with no ledger
in the Params: the target equals the source, and the stack's shared ledger (on its
PostgreSQL, every task's default) holds every step, naming both workers among their hosts;
the UI's REST API shows the log of a task each worker ran; the server's password is in no
process's arguments and no log. A run forced onto a SQLite ledger is refused at its first
task, at once, in one line, and writes nothing. Everything started is gone afterwards."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from hbase_migrate.airflow_stack import STACK_FILE, AirflowStack, hbase_connection, start_airflow
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepStatus
from hbase_migrate.pgserver import find_pg_bin
from hbase_migrate.services import group_alive
from minihbase.airflow_demo import Dags
from tests.support.minicluster import EmbeddedClusters, compare, run_workload

pytestmark = [pytest.mark.own_stack, pytest.mark.integration, pytest.mark.slow]


def test_two_celery_workers_run_a_migration(tmp_path: Path,
make_embedded: EmbeddedClusters) -> None:
    if find_pg_bin() is None or shutil.which("redis-server") is None:
        pytest.skip("the Celery stack needs Debian's postgresql and redis-server "
                    "(scripts/system-deps.sh celery)")
    workers = {f"worker{n}@{socket.gethostname()}" for n in (1, 2)}
    src, dst = make_embedded.pair()
    run_workload(src, "orders", seed=41, ops=300)
    conns = [hbase_connection("hbase_source", src.endpoints),
             hbase_connection("hbase_target", dst.endpoints)]
    # spark_default auto: the runs Airflow starts itself (the validate DAG's schedule)
    # work in their tasks for this small table, as the triggered ones do
    with start_airflow(tmp_path, parallelism=2, connections=conns, executor="celery",
                       workers=2, spark_master="auto") as stack:
        assert stack.workers == ["worker1", "worker2"]
        pids = json.loads((stack.home / STACK_FILE).read_text())
        ledger = stack.ledger_url
        assert ledger == stack.database_url("ledger")
        assert stack.postgres is not None
        password = stack.postgres.password
        assert (stack.home / "ledger.url").read_text() == ledger
        assert (stack.home / "ledger.url").stat().st_mode & 0o077 == 0
        dags = Dags(stack, {"migration": "orders", "source_conn_id": "hbase_source",
                            "target_conn_id": "hbase_target", "tables": ["orders"],
                            "spark_conn_id": None})
        stack.wait_for_dags(["hbase_migrate_start", "hbase_migrate_validate"])
        for dag_id in ("hbase_migrate_start", "hbase_migrate_validate"):
            dags.unpause(dag_id)
            run_id = dags.trigger(dag_id)
            dags.require(dags.wait_run(dag_id, run_id), dag_id)
        judged = dags.call("GET", f"/dags/hbase_migrate_validate/dagRuns/{quote(run_id)}/"
                           "taskInstances/validate/xcomEntries/return_value?map_index=0"
                           "&deserialize=true&stringify=false")  # one per migration
        assert judged["value"]["verdict"] == "match"
        assert compare(src, dst, "orders").equal
        with Ledger.open(ledger) as opened:
            record = opened.migration("orders")
            assert record is not None
            steps = opened.steps(record.id)
        shown = shown_logs(stack, "hbase_migrate_validate", run_id)
        refused = forced_onto_sqlite(dags, tmp_path / "forced" / "ledger.db")
        showing = [pid for pid in stack_pids(pids) if password in cmdline(pid)]
    kinds = [s.kind for s in steps]  # the copy and each validation: mapped parts, an end
    ends = [k for k in kinds if not k.endswith("-part")]
    assert ends[:3] == ["prepare", "snapshot-plan", "snapshot"] and \
        set(ends[3:]) == {"validate"}, ends
    # the start's live validation and the triggered run's; the validate DAG's scheduled run,
    # due once it is unpaused, may validate the migration in progress too
    validated = {(s.dag_id, s.run_id) for s in steps if s.kind == "validate"}
    assert ("hbase_migrate_validate", run_id) in validated, validated
    assert {d for d, _ in validated} == {"hbase_migrate_start", "hbase_migrate_validate"}
    assert kinds.count("validate-part") >= 2 and kinds.count("snapshot-part") >= 2, kinds
    assert all(s.status is StepStatus.SUCCEEDED and s.dag_id for s in steps)
    assert {s.host for s in steps} == workers, [(s.kind, s.host) for s in steps]
    # the UI shows the log of a task each worker ran (the workers write the stack's folder)
    assert set(shown) == workers, shown
    assert all("Filling up the DagBag" in text for text in shown.values()), shown
    assert not list(stack.home.glob("workers/*/logs"))
    # no worker made its own SQLite default: the tasks used the shared ledger (the
    # validation's GX results stay on the worker that ran it, as the README says)
    assert not list(stack.home.glob("workers/*/state/**/ledger.db"))
    assert list(stack.home.glob("workers/*/state/orders/artifacts"))
    assert not showing, "the PostgreSQL password shows in the arguments of processes"
    assert not [str(p) for p in tmp_path.rglob("*") if p.is_file() and
                password.encode() in p.read_bytes()], "the password is written to a file"
    reason = (f"check: migration 'orders': its ledger sqlite:///{tmp_path}/forced/ledger.db "
              "is a SQLite file on this worker, and under CeleryExecutor each worker would "
              "write its own file (a step would not see the steps other workers recorded); "
              "set a shared ledger (a PostgreSQL URL) in HBASE_MIGRATE_LEDGER on every "
              "worker, the ledger Param or [migration] ledger")
    assert reason in refused, refused
    assert not (tmp_path / "forced").exists()
    running = [*pids["pids"].values(), *pids["backing"].values()]
    assert not [pid for pid in running if group_alive(pid)]
    assert not [p for p in pids["remove"] if Path(p).exists()]


def forced_onto_sqlite(dags: Dags, path: Path) -> str:
    """Trigger the start DAG with a SQLite ``ledger`` Param; returns the log of its first
    task (``check``), which failed once, without a retry (each line of it one line here)."""
    dag_id = "hbase_migrate_start"
    run_id = dags.trigger(dag_id, ledger=f"sqlite:///{path}")
    assert dags.wait_run(dag_id, run_id)["state"] == "failed"
    path_ti = f"/dags/{dag_id}/dagRuns/{quote(run_id)}/taskInstances/check"
    ti = dags.call("GET", path_ti)
    assert (ti["state"], ti["try_number"]) == ("failed", 1), ti
    content = dags.call("GET", f"{path_ti}/logs/1")["content"]
    return "\n".join(json.dumps(line) if isinstance(line, dict) else str(line)
                     for line in content)


def stack_pids(described: dict[str, Any]) -> list[int]:
    """Every live process of the stack's process groups (the workers' forks too)."""
    groups = {*described["pids"].values(), *described["backing"].values()}
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getpgid(int(entry.name)) in groups:
                    found.append(int(entry.name))
            except ProcessLookupError:
                continue
    return found


def cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def shown_logs(stack: AirflowStack, dag_id: str, run_id: str) -> dict[str, str]:
    """Per worker host, the log text the REST API (the UI's source) gives for one of the
    run's tasks that host ran."""
    status, answer = stack.api("GET", f"/dags/{dag_id}/dagRuns/{quote(run_id)}/taskInstances")
    assert status == 200, answer
    shown: dict[str, str] = {}
    for ti in answer["task_instances"]:
        if ti["hostname"] in shown or ti["state"] != "success":
            continue
        status, log = stack.api("GET", f"/dags/{dag_id}/dagRuns/{quote(run_id)}/taskInstances/"
                                       f"{ti['task_id']}/logs/{ti['try_number']}"
                                       f"?map_index={ti['map_index']}")
        assert status == 200, log
        shown[ti["hostname"]] = "\n".join(str(line.get("event", line)) if isinstance(line, dict)
                                          else str(line) for line in log["content"])
    return shown
