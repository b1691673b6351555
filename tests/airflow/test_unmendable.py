"""Errors no retry can mend fail a task at its first try, the one-line reason in its log;
an outage keeps the task's retries (issue 44, item 6). Under ``dag.test()`` against
embedded clusters named by ``hbase`` connections."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.airflow_stack import hbase_connection
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.services import free_port
from minihbase.zookeeper import ZooKeeperServer
from tests.support.airflow import connected
from tests.support.minicluster import run_workload, t2

pytestmark = pytest.mark.integration
TABLE = "orders"


def tries(run: Any) -> dict[str, tuple[str, int]]:
    return {ti.task_id: (ti.state, ti.try_number) for ti in run.get_task_instances()}


def test_an_unknown_connection_fails_the_backfill_at_once(
        dag_bag: Any, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """The typo of the issue: the spec's connection is looked up before the step runs."""
    run = dag_bag.get_dag("hbase_migrate_backfill").test(run_conf={
        "migration": "typo", "source_conn_id": "hbase_sourse", "target_conn_id": "hbase_t",
        "tables": [TABLE], "ledger": f"sqlite:///{tmp_path / 'ledger.db'}", "config": None,
        "spark_conn_id": None})
    assert tries(run) == {"migrations": ("success", 1), "replay_window": ("failed", 1)}
    assert "replay: The conn_id `hbase_sourse` isn't defined" in capfd.readouterr().out


def test_the_start_checks_its_tables_before_its_first_write(
        dag_bag: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capfd: pytest.CaptureFixture[str], zookeeper: ZooKeeperServer) -> None:
    """A table the source does not have fails ``check`` at its first try; nothing is
    written: no target table, no ledger."""
    ledger = tmp_path / "ledger.db"
    with connected(tmp_path, monkeypatch, zookeeper) as (src, dst):
        run_workload(src, TABLE, seed=3, ops=20)
        run = dag_bag.get_dag("hbase_migrate_start").test(run_conf={
            "migration": "missing", "source_conn_id": "test_source",
            "target_conn_id": "test_target", "tables": [TABLE, "nosuch"],
            "ledger": f"sqlite:///{ledger}", "spark_conn_id": None})
        with t2(dst) as target:
            assert not target.table_exists(TABLE)
    states = tries(run)
    assert states["check"] == ("failed", 1)
    assert {s for t, (s, _) in states.items() if t != "check"} == {"upstream_failed"}
    assert "check: migration 'missing': the source has no table nosuch" in \
        capfd.readouterr().out
    if ledger.exists():
        with Ledger.open(f"sqlite:///{ledger}") as opened:
            assert opened.migration("missing") is None


def test_a_zookeeper_that_never_answered_fails_check_at_once(
        dag_bag: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capfd: pytest.CaptureFixture[str]) -> None:
    """A port typo in the connections' ZooKeeper (nothing listens there): its error class
    fails at once (``ZooKeeperNeverAnsweredError``), so ``check`` fails at its first try
    instead of being retried twice, its one line in the log (issue 71, item 11)."""
    closed = free_port()  # nothing listens on it
    for conn_id in ("typo_source", "typo_target"):
        body = hbase_connection(conn_id, ClusterEndpoints(
            name=conn_id, zookeeper=f"127.0.0.1:{closed}", client="native"))
        del body["connection_id"]
        monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", json.dumps(body))
    run = dag_bag.get_dag("hbase_migrate_start").test(run_conf={
        "migration": "typo", "source_conn_id": "typo_source", "target_conn_id": "typo_target",
        "tables": [TABLE], "ledger": f"sqlite:///{tmp_path / 'ledger.db'}",
        "spark_conn_id": None})
    states = tries(run)
    assert states["check"] == ("failed", 1)
    assert {s for t, (s, _) in states.items() if t != "check"} == {"upstream_failed"}
    assert f"ZooKeeper quorum 127.0.0.1:{closed}" in capfd.readouterr().out
