"""``hbase_migrate_start`` under ``dag.test()`` against embedded clusters named by ``hbase``
connections: the target gets the table, the copy (in mapped parts) validates (in mapped
parts), and the ledger's steps carry this run's ids; the ``hbase`` copy method, asked by
Param, has no parts and is refused on them. A bad Param is refused before the run
starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from minihbase.zookeeper import ZooKeeperServer
from tests.support.airflow import connected
from tests.support.minicluster import compare, run_workload, t2

pytestmark = pytest.mark.integration
TABLE = "orders"


def test_start_copies_and_validates_with_this_runs_ids(
        dag_bag: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        zookeeper: ZooKeeperServer) -> None:
    dag = dag_bag.get_dag("hbase_migrate_start")  # type: ignore[attr-defined]
    ledger = f"sqlite:///{tmp_path / 'ledger.db'}"
    with connected(tmp_path, monkeypatch, zookeeper) as (src, dst):
        written = run_workload(src, TABLE, seed=5, ops=200)
        conf = {"migration": "start_test", "source_conn_id": "test_source",
                "target_conn_id": "test_target", "tables": [TABLE], "ledger": ledger,
                "spark_conn_id": None}
        run = dag.test(run_conf={**conf, "snapshot_method": "scan", "parts": 2})
        states = {(ti.task_id, ti.map_index): ti.state for ti in run.get_task_instances()}
        with Ledger.open(ledger) as opened:
            planned = len(opened.key_ranges(1))
        mapped = sorted(i for task, i in states if task == "validate_part")
        assert mapped == list(range(min(2, planned)))  # the validation, one task per part
        assert sorted(i for task, i in states if task == "snapshot_part") == mapped  # the copy
        assert set(states.values()) == {"success"} and {t for t, _ in states} == {
            "check", "prepare", "plan_snapshot", "snapshot_part", "snapshot", "plan_validation",
            "validate_part", "validate"}
        with t2(dst) as target:
            assert target.table_exists(TABLE)
        assert sum(written.ops.values()) > 0 and compare(src, dst, TABLE).equal

        # No replay yet: the gate says no-go, the report is written all the same, and the
        # run ends failed: its state is the verdict.
        out = tmp_path / "gate" / "report.html"
        gate = dag_bag.get_dag("hbase_migrate_cutover").test(  # type: ignore[attr-defined]
            run_conf={**conf, "report_path": str(out)})
        tis = {ti.task_id: ti for ti in gate.get_task_instances()}
        assert (gate.state, tis["cutover_check"].state, tis["report"].state) == (
            "failed", "failed", "success")
        assert tis["verdict"].state == "upstream_failed"
        assert tis["report"].xcom_pull(task_ids="report")["path"] == str(out)
        page = out.read_text("utf-8")
        assert "replay has not run" in page and "NO-GO" in page

    with Ledger.open(ledger) as opened:
        record = opened.migration("start_test")
        assert record is not None and record.state == "validated"
        steps = opened.steps(record.id)
    parts = len(mapped)
    ours = 4 + 2 * parts  # prepare; the copy: its plan, parts, end; the validation: parts, judge
    assert [(s.kind, s.status.value, s.dag_id, s.run_id, s.task_id)
            for s in steps[:ours]] == [
        (kind, "succeeded", "hbase_migrate_start", run.run_id, task)
        for kind, task in [("prepare", "prepare"), ("snapshot-plan", "plan_snapshot"),
                           *[("snapshot-part", "snapshot_part")] * parts,
                           ("snapshot", "snapshot"),
                           *[("validate-part", "validate_part")] * parts,
                           ("validate", "validate")]]
    plan, copy = steps[1], steps[2 + parts]
    assert plan.metrics["method"] == "scan"  # the Param, passed to the plan
    assert plan.metrics["parts"] == [[i, parts] for i in range(1, parts + 1)]
    assert {s.metrics["watermark"] for s in steps[2:3 + parts]} == {plan.metrics["watermark"]}
    assert sorted(p["part"] for p in copy.metrics["parts"]) == [
        f"{i}/{parts}" for i in range(1, parts + 1)]
    assert copy.metrics["ranges"] == planned and copy.metrics["cells"] > 0
    judge = steps[ours - 1]
    assert judge.metrics["mode"] == "live"  # the start DAG's validation is in flight
    # the mapped parts ran no Great Expectations; the judge ran it once, over every range
    assert [s.metrics["gx"]["result"] for s in steps if s.kind == "validate-part"] == [
        None] * parts
    result = Path(judge.metrics["gx"]["result"])
    assert result.is_file() and judge.metrics["gx"]["success"] is True
    assert judge.metrics["tables"][0]["ranges"] == planned
    assert [p["part"] for p in judge.metrics["parts"]] == [f"{i}/{parts}"
                                                          for i in range(1, parts + 1)]
    assert (steps[ours].kind, steps[ours].status.value,
            steps[ours].dag_id, steps[ours].run_id) == (
        "cutover-check", "failed", "hbase_migrate_cutover", gate.run_id)


def test_the_hbase_method_param_has_no_parts_and_is_refused_on_the_embedded_cluster(
        dag_bag: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        zookeeper: ZooKeeperServer) -> None:
    dag = dag_bag.get_dag("hbase_migrate_start")  # type: ignore[attr-defined]
    ledger = f"sqlite:///{tmp_path / 'ledger.db'}"
    with connected(tmp_path, monkeypatch, zookeeper) as (src, _):
        run_workload(src, TABLE, seed=6, ops=20)
        run = dag.test(run_conf={
            "migration": "start_hbase", "source_conn_id": "test_source",
            "target_conn_id": "test_target", "tables": [TABLE], "ledger": ledger,
            "spark_conn_id": None, "snapshot_method": "hbase"})
        states = {ti.task_id: ti.state for ti in run.get_task_instances()}
        assert (states["prepare"], states["plan_snapshot"], states["snapshot_part"],
                states["snapshot"]) == ("success", "success", "skipped", "failed")
    with Ledger.open(ledger) as opened:
        record = opened.migration("start_hbase")
        assert record is not None and record.state == "schema_ready"  # refused: nothing done
        plan, = opened.steps(record.id, "snapshot-plan")
        assert plan.metrics["parts"] == [] and record.watermark is None
        copy, = opened.steps(record.id, "snapshot")
        assert copy.status.value == "failed" and "no hbase.version under its HBase root" in (
            copy.error or "")


NAMED = {"migration": "m", "source_conn_id": "a", "target_conn_id": "b", "tables": ["t"]}


BAD = [
    ({**NAMED, "tables": []}, "tables"),
    ({**NAMED, "migration": "a/b"}, "migration"),
    ({k: v for k, v in NAMED.items() if k != "source_conn_id"}, "source_conn_id"),
    ({}, "migration"),  # no default migration: the form asks for it
]


@pytest.mark.parametrize(("dag_id", "conf", "named"), [
    ("hbase_migrate_start", {**NAMED, "watermark": "yesterday"}, "watermark"),
    ("hbase_migrate_start", {**NAMED, "snapshot_method": "distcp"}, "snapshot_method"),
    *[("hbase_migrate_start", *case) for case in BAD],
    *[("hbase_migrate_cutover", *case) for case in BAD if case[1] == "migration"]])
def test_bad_params_are_refused_before_the_run(dag_bag: object, dag_id: str,
                                               conf: dict[str, object], named: str) -> None:
    from airflow.sdk.definitions.param import ParamValidationError

    dag = dag_bag.get_dag(dag_id)  # type: ignore[attr-defined]
    with pytest.raises(ParamValidationError, match=f"param {named}"):
        dag.test(run_conf=conf)


def test_the_forms_identifying_fields_have_no_default(dag_bag: object) -> None:
    """The start DAG requires them; the cutover DAG only the migration's name (it knows its
    clusters and tables); those Airflow also starts by itself leave them empty (a run naming
    no migration skips, see test_cdc_dag)."""
    from airflow.sdk.definitions._internal.types import is_arg_set

    from hbase_migrate_airflow.params import IDENTITY

    for dag_id in dag_bag.dag_ids:  # type: ignore[attr-defined]
        params = dag_bag.get_dag(dag_id).params  # type: ignore[attr-defined]
        for key in IDENTITY:
            value = params.get_param(key).value
            asked = dag_id == "hbase_migrate_start" or (
                dag_id == "hbase_migrate_cutover" and key == "migration")
            assert not is_arg_set(value) if asked else value is None, (dag_id, key, value)


def test_only_the_scheduled_dags_are_paused_at_creation(dag_bag: object) -> None:
    """A DAG run by hand only (start, cutover) is not paused when Airflow first sees it, so a
    trigger right after ``airflow up`` runs (issue 71); those on an Asset are not paused
    either (a paused consumer would not even be queued); those on a clock wait for the
    user's unpause (docs/airflow.md, step 3): ``None``, airflow.cfg's paused default."""
    paused = {dag_id: dag_bag.get_dag(dag_id).is_paused_upon_creation  # type: ignore[attr-defined]
              for dag_id in dag_bag.dag_ids}  # type: ignore[attr-defined]
    assert paused == {
        "hbase_migrate_start": False, "hbase_migrate_cutover": False,
        "hbase_migrate_replay": False, "hbase_migrate_cdc": False,
        "hbase_migrate_wal_watch": None, "hbase_migrate_backfill": None,
        "hbase_migrate_validate": None}
