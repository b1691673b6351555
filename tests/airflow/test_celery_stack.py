"""``airflow up --executor celery``: PostgreSQL, redis-server and two Celery workers, each in
its own folder and with its own host name, run a real migration (the start DAG's schema,
copy and live validation, then the validate DAG) against embedded clusters: the target
equals the source, and the ledger (on the stack's PostgreSQL) names both workers among the
hosts of its steps, and the UI's REST API shows the log of a task each worker ran;
everything started is gone afterwards."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path
from urllib.parse import quote

import pytest

from hbase_migrate.airflow_stack import STACK_FILE, AirflowStack, hbase_connection, start_airflow
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepStatus
from hbase_migrate.pgserver import find_pg_bin
from hbase_migrate.services import group_alive
from minihbase.airflow_demo import Dags
from minihbase.server import MiniHBase
from tests.replay.minicluster_util import compare, run_workload

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_two_celery_workers_run_a_migration(tmp_path: Path) -> None:
    if find_pg_bin() is None or shutil.which("redis-server") is None:
        pytest.skip("the Celery stack needs Debian's postgresql and redis-server "
                    "(scripts/system-deps.sh celery)")
    workers = {f"worker{n}@{socket.gethostname()}" for n in (1, 2)}
    with MiniHBase(tmp_path / "src", "source") as src, \
            MiniHBase(tmp_path / "dst", "target") as dst:
        run_workload(src, "orders", seed=41, ops=300)
        conns = [hbase_connection("hbase_source", src.endpoints),
                 hbase_connection("hbase_target", dst.endpoints)]
        with start_airflow(tmp_path, parallelism=2, connections=conns, executor="celery",
                           workers=2, databases=["ledger"]) as stack:
            assert stack.workers == ["worker1", "worker2"]
            pids = json.loads((stack.home / STACK_FILE).read_text())
            ledger = stack.database_url("ledger")
            dags = Dags(stack, {"migration": "orders", "source_conn_id": "hbase_source",
                                "target_conn_id": "hbase_target", "tables": ["orders"],
                                "ledger": ledger, "spark_conn_id": None})
            stack.wait_for_dags(["hbase_migrate_start", "hbase_migrate_validate"])
            for dag_id in ("hbase_migrate_start", "hbase_migrate_validate"):
                dags.unpause(dag_id)
                run_id = dags.trigger(dag_id)
                dags.require(dags.wait_run(dag_id, run_id), dag_id)
            assert dags.xcom("hbase_migrate_validate", run_id, "validate")["verdict"] == "match"
            assert compare(src, dst, "orders").equal
            with Ledger.open(ledger) as opened:
                record = opened.migration("orders")
                assert record is not None
                steps = opened.steps(record.id)
            shown = shown_logs(stack, "hbase_migrate_validate", run_id)
    kinds = [s.kind for s in steps]  # the copy and each validation: mapped parts, an end
    assert [k for k in kinds if not k.endswith("-part")] == [
        "prepare", "snapshot-plan", "snapshot", "validate", "validate"]
    assert kinds.count("validate-part") >= 2 and kinds.count("snapshot-part") >= 2, kinds
    assert all(s.status is StepStatus.SUCCEEDED and s.dag_id for s in steps)
    assert {s.host for s in steps} == workers, [(s.kind, s.host) for s in steps]
    # the UI shows the log of a task each worker ran (the workers write the stack's folder)
    assert set(shown) == workers, shown
    assert all("Filling up the DagBag" in text for text in shown.values()), shown
    assert not list(stack.home.glob("workers/*/logs"))
    running = [*pids["pids"].values(), *pids["backing"].values()]
    assert not [pid for pid in running if group_alive(pid)]
    assert not [p for p in pids["remove"] if Path(p).exists()]


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
