"""``hbase_migrate_cdc`` under ``dag.test()``: the source's WAL edits reach the topic of a
real Kafka broker named by a ``kafka`` connection, and the ledger's ``cdc`` step carries this
run's ids."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger, now_ms
from hbase_migrate.lifecycle.cdc import CDC_STREAM
from realstack.kafka import KafkaBroker
from tests.support.airflow import env_connection
from tests.support.cdc import consume, create_topic, expected_messages, identity, plain
from tests.support.minicluster import EmbeddedClusters, run_workload

pytestmark = pytest.mark.integration
TABLE = "orders"


def test_cdc_streams_the_wal_edits_with_this_runs_ids(
        dag_bag: object, kafka_broker: KafkaBroker, tmp_path: Path, make_embedded: EmbeddedClusters,
        monkeypatch: pytest.MonkeyPatch) -> None:
    dag = dag_bag.get_dag("hbase_migrate_cdc")  # type: ignore[attr-defined]
    ledger = f"sqlite:///{tmp_path / 'ledger.db'}"
    topic = create_topic(kafka_broker.bootstrap)
    monkeypatch.setenv("AIRFLOW_CONN_TEST_KAFKA", json.dumps(
        {"conn_type": "kafka", "extra": {"bootstrap.servers": kafka_broker.bootstrap,
                                         "client.id": "cdc-dag-test"}}))
    start = now_ms() - 1_000
    src, dst = make_embedded.pair()
    run_workload(src, TABLE, seed=3, ops=100)
    env_connection(monkeypatch, "test_source", src)
    env_connection(monkeypatch, "test_target", dst)
    conf = {"migration": "cdc_test", "source_conn_id": "test_source",
            "target_conn_id": "test_target", "tables": [TABLE], "ledger": ledger,
            "spark_conn_id": None, "kafka_conn_id": "test_kafka", "cdc_topic": topic,
            "start": datetime.fromtimestamp(start / 1000, UTC).isoformat()}
    run = dag.test(run_conf=conf)
    assert {ti.task_id: ti.state for ti in run.get_task_instances()} == {
        "migrations": "success", "cdc": "success"}
    with Ledger.open(ledger) as opened:
        record = opened.migration("cdc_test")
        assert record is not None
        steps = opened.steps(record.id)
        paths = [r.path for r in opened.wal_files(record.id, CDC_STREAM)]
    expected = expected_messages(paths, TABLE, start)

    assert [(s.kind, s.dag_id, s.run_id, s.task_id) for s in steps] == [
        ("cdc", "hbase_migrate_cdc", run.run_id, "cdc")]
    got = consume(kafka_broker.bootstrap, topic)
    assert expected and sorted(map(plain, got), key=identity) == sorted(expected, key=identity)


def test_cdc_skips_saying_why_until_a_kafka_connection_exists(
        dag_bag: object, tmp_path: Path,
        make_embedded: EmbeddedClusters, monkeypatch: pytest.MonkeyPatch,
        capfd: pytest.CaptureFixture[str]) -> None:
    """What a new user's first WAL events meet: no ``kafka_default`` connection and no
    ``[cdc]`` in the migration; the run is green, its task skipped with the reason."""
    monkeypatch.delenv("AIRFLOW_CONN_KAFKA_DEFAULT", raising=False)
    dag = dag_bag.get_dag("hbase_migrate_cdc")  # type: ignore[attr-defined]
    src, dst = make_embedded.pair()
    env_connection(monkeypatch, "test_source", src)
    env_connection(monkeypatch, "test_target", dst)
    run = dag.test(run_conf={"migration": "cdc_skip", "source_conn_id": "test_source",
                             "target_conn_id": "test_target", "tables": [TABLE],
                             "ledger": f"sqlite:///{tmp_path / 'ledger.db'}",
                             "spark_conn_id": None, "kafka_conn_id": "kafka_default"})
    assert {ti.task_id: ti.state for ti in run.get_task_instances()} == {
        "migrations": "success", "cdc": "skipped"}
    assert run.state == "success"
    assert "no Kafka connection 'kafka_default' is configured" in capfd.readouterr().out


SKIPPED_VALIDATION = {"plan_validation": "skipped", "validate_part": "skipped",
                      "validate": "skipped"}


@pytest.mark.parametrize(("dag_id", "tasks"), [
    ("hbase_migrate_cdc", {"migrations": "skipped", "cdc": "skipped"}),
    ("hbase_migrate_replay", {"migrations": "skipped", "plan": "skipped", "replay": "skipped",
                              **SKIPPED_VALIDATION}),
    ("hbase_migrate_wal_watch", {"migrations": "skipped", "new_wal_files": "skipped",
                                 "announce": "skipped"}),
    ("hbase_migrate_validate", {"migrations": "skipped", **SKIPPED_VALIDATION}),
    ("hbase_migrate_backfill", {"migrations": "skipped", "replay_window": "skipped"}),
])
def test_a_run_with_no_migration_in_progress_is_skipped_saying_why(
        dag_bag: object, dag_id: str, tasks: dict[str, str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    """A run Airflow starts by itself, with the form's defaults (given here as such:
    ``dag.test()`` keeps an earlier test's conf in the shared DAG), while no ledger holds a
    migration in progress: green, its tasks skipped, the reason in the first one's log."""
    from hbase_migrate_airflow.migration import NAMING_KEYS

    monkeypatch.setenv("HBASE_MIGRATE_STATE_DIR", str(tmp_path))
    monkeypatch.delenv("HBASE_MIGRATE_LEDGER", raising=False)
    none = dict.fromkeys(NAMING_KEYS)  # an earlier test's ledger Param too: it names one
    run = dag_bag.get_dag(dag_id).test(run_conf=none)  # type: ignore[attr-defined]
    assert {ti.task_id: ti.state for ti in run.get_task_instances()} == tasks
    assert run.state == "success"
    assert f"{dag_id}: no migration in progress in the ledgers" in capfd.readouterr().out


def test_a_bad_envelope_is_refused_before_the_run(dag_bag: object) -> None:
    from airflow.sdk.definitions.param import ParamValidationError

    with pytest.raises(ParamValidationError, match="param envelope"):
        dag_bag.get_dag("hbase_migrate_cdc").test(  # type: ignore[attr-defined]
            run_conf={"envelope": "avro"})
