"""``hbase_migrate_start`` under ``dag.test()`` with its copy and validation on a Spark
standalone cluster whose two workers are as good as other hosts (``tests/spark/standalone``:
a plain Python with pyspark alone, the project, this environment and the driver's folder
hidden): the run names a ``spark`` connection made from the URI ``spark://127.0.0.1:PORT``,
whose extra carries a Spark setting. Every copy and validation part ran on both workers
(their JSON answers say so), the target equals the source cell for cell, the ledger is
complete, each step's metrics say what the executors ran and its XCom which master it
used and why."""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import quote

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.spark.archive import CACHE_ENV
from minihbase.zookeeper import ZooKeeperServer
from tests.spark.standalone import Cluster, apps, executors_of, finished_tasks, other_hosts
from tests.support.airflow import connected
from tests.support.minicluster import compare, run_workload

pytestmark = [pytest.mark.own_stack, pytest.mark.integration, pytest.mark.slow]
TABLE = "orders"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    yield from other_hosts(tmp_path_factory)


def test_the_start_dag_copies_and_validates_on_a_cluster_named_by_a_uri_connection(
        dag_bag: object, cluster: Cluster, monkeypatch: pytest.MonkeyPatch,
        zookeeper: ZooKeeperServer) -> None:
    extra = json.dumps({"conf": {"spark.executor.memory": "640m"}})
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CLUSTER", f"{cluster.url}?__extra__={quote(extra)}")
    monkeypatch.setenv(CACHE_ENV, str(cluster.driver / "cache"))
    dag = dag_bag.get_dag("hbase_migrate_start")  # type: ignore[attr-defined]
    ledger = f"sqlite:///{cluster.driver / 'ledger.db'}"
    with connected(cluster.driver, monkeypatch, zookeeper) as (src, dst):
        run_workload(src, TABLE, seed=66, ops=400)
        conf = {"migration": "on_cluster", "source_conn_id": "test_source",
                "target_conn_id": "test_target", "tables": [TABLE], "ledger": ledger,
                "spark_conn_id": "spark_cluster", "snapshot_method": "scan", "parts": 2}
        run = dag.test(run_conf=conf)
        states = {(ti.task_id, ti.map_index): ti.state for ti in run.get_task_instances()}
        assert set(states.values()) == {"success"}, states
        assert compare(src, dst, TABLE).equal
        said = [ti.xcom_pull(task_ids=ti.task_id, map_indexes=ti.map_index)
                for ti in run.get_task_instances()]
    # which master the run used, and why, is in each Spark step's XCom (the UI shows it)
    masters = [x["spark_master"] for x in said if isinstance(x, dict) and "spark_master" in x]
    assert len(masters) >= 4, said  # the copy's and the validation's parts at least
    assert all(cluster.url in m and "'spark_cluster'" in m for m in masters), masters

    with Ledger.open(ledger) as opened:
        record = opened.migration("on_cluster")
        assert record is not None and record.state == "validated"
        ranges = opened.key_ranges(record.id, TABLE)
        assert ranges and all(r.copied_cells is not None for r in ranges)
        parts = [s for s in opened.steps(record.id) if s.kind in ("snapshot-part",
                                                                  "validate-part")]
    assert len(parts) == 4
    for step in parts:
        assert step.metrics["engine"] == cluster.url, step.metrics
        assert "shipped as spark.archives" in step.metrics["executors"]
        assert "pre-flight passed on executor " in step.metrics["executors"]
    ended = apps(cluster)
    ours = [app for name, app in ended if name.endswith(" on_cluster")]
    assert len(ours) == 4, ended  # a Spark application per part
    for app in ours:
        executors = executors_of(cluster, app)
        # Spark's master places the executors (one per worker of one core, usually both;
        # once, on a loaded machine, one worker took all four applications' executors)
        assert executors and {n for n, _, _ in executors} <= {0, 1}, (app, executors)
        assert {m for _, _, m in executors} == {640}  # the connection's extra conf
        assert sum(finished_tasks(f) for _, f, _ in executors) > 0
