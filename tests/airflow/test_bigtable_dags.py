"""The start DAG with a Bigtable target, under ``dag.test()``: the source an embedded
cluster named by an ``hbase`` connection, the target the Bigtable emulator named by a
``bigtable`` connection; ``hbase_migrate_start`` checks, prepares (the pre-flight report in
its ledger step), copies and validates; Bigtable read with Google's client holds what the
source returns. (The replay, validate and cutover DAGs' operators call the same core steps
with the same spec: tests/bigtable runs those steps on a Bigtable target.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hbase_migrate.airflow_stack import hbase_connection
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.bigtable.emulator import Emulator
from hbase_migrate.cluster.thrift.thrift2 import Thrift2Client
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from minihbase.workload import Workload, WorkloadSpec
from tests.bigtable.conftest import bigtable_emulator
from tests.bigtable.test_both_stacks import bigtable_as_hbase_reads

__all__ = ["bigtable_emulator"]  # the fixture, for the tests here
pytestmark = [pytest.mark.integration,
              pytest.mark.filterwarnings("ignore:Connecting to Bigtable emulator")]
TABLE = "orders"


def test_the_start_dag_migrates_to_bigtable(
        dag_bag: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        bigtable_emulator: Emulator) -> None:
    ledger = f"sqlite:///{tmp_path / 'ledger.db'}"
    monkeypatch.setenv("AIRFLOW_CONN_BT_TARGET", json.dumps({
        "conn_type": "bigtable", "extra": json.dumps(
            {"project": "proj", "instance": "airflow-dags",
             "emulator_host": bigtable_emulator.host})}))
    conf = {"migration": "to_bigtable", "source_conn_id": "bt_source",
            "target_conn_id": "bt_target", "tables": [TABLE], "ledger": ledger,
            "spark_conn_id": None, "parts": 1}  # one validation task: GX's start-up each
    with MiniHBase(tmp_path / "src", "source", wal=WalSettings(region_servers=2)) as src:
        body = hbase_connection("bt_source", src.endpoints)
        del body["connection_id"]
        monkeypatch.setenv("AIRFLOW_CONN_BT_SOURCE", json.dumps(body))
        workload = Workload(src.endpoints, WorkloadSpec(TABLE, 7, 120))
        try:
            workload.ensure_table()
            workload.run()
        finally:
            workload.close()
        start = dag_bag.get_dag("hbase_migrate_start").test(  # type: ignore[attr-defined]
            run_conf={**conf, "snapshot_method": "scan"})
        states = {ti.task_id: ti.state for ti in start.get_task_instances()}
        assert set(states.values()) == {"success"}, states
        with Thrift2Client(src.endpoints.thrift2 or "") as source:
            versions = {f.name: f.max_versions for f in source.table_descriptor(TABLE).families}
            expected = {(c.row, c.family, c.qualifier, c.timestamp, c.value)
                        for piece in source.scan(TABLE) for c in piece}
        config = tmp_path / "read.toml"  # how the judge finds the instance
        config.write_text(
            f'[migration]\nname = "read"\n[source]\nthrift = "unused:1"\n[[tables]]\n'
            f'source = "{TABLE}"\n[target]\nkind = "bigtable"\nproject = "proj"\n'
            f'instance = "airflow-dags"\nemulator_host = "{bigtable_emulator.host}"\n',
            encoding="utf-8")
        assert expected and bigtable_as_hbase_reads(config, TABLE, versions) == expected
    with Ledger.open(ledger) as opened:
        record = opened.migration("to_bigtable")
        assert record is not None
        steps = {s.kind: s for s in opened.steps(record.id)}
    assert steps["prepare"].metrics["preflight"]["refused"] == []
    assert steps["prepare"].dag_id == "hbase_migrate_start"
    assert steps["snapshot"].metrics["bigtable"]["known_losses"] == {}
    assert record.state == "validated"
