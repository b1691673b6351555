"""The start DAG with a Bigtable target, under ``dag.test()``: the source an embedded
cluster named by an ``hbase`` connection, the target the Bigtable emulator named by a
``bigtable`` connection; ``hbase_migrate_start`` checks (the pre-flight report in its XCom,
a finding not accepted failing it before any write, listed in its log), prepares (the
report again, in its ledger step), copies and validates; Bigtable read with Google's client
holds what the source returns. (The replay, validate and cutover DAGs' operators call the
same core steps with the same spec: tests/bigtable runs those steps on a Bigtable
target.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hbase_migrate.airflow_stack import hbase_connection
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.bigtable.emulator import Emulator
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from minihbase.workload import Workload, WorkloadSpec
from tests.bigtable.classic import bigtable_as_hbase_reads
from tests.bigtable.conftest import bigtable_emulator
from tests.bigtable.loss_names import key_name
from tests.support.minicluster import EmbeddedClusters

__all__ = ["bigtable_emulator"]  # the fixture, for the tests here
pytestmark = [pytest.mark.integration,
              pytest.mark.filterwarnings("ignore:Connecting to Bigtable emulator")]
TABLE = "orders"


def bigtable_connection(monkeypatch: pytest.MonkeyPatch, emulator: Emulator,
                        instance: str) -> None:
    """``bt_target``: a ``bigtable`` connection to ``instance`` on the emulator."""
    monkeypatch.setenv("AIRFLOW_CONN_BT_TARGET", json.dumps({
        "conn_type": "bigtable", "extra": json.dumps(
            {"project": "proj", "instance": instance, "emulator_host": emulator.host})}))


def hbase_source(monkeypatch: pytest.MonkeyPatch, src: MiniHBase) -> None:
    """``bt_source``: an ``hbase`` connection to the embedded cluster ``src``."""
    body = hbase_connection("bt_source", src.endpoints)
    del body["connection_id"]
    monkeypatch.setenv("AIRFLOW_CONN_BT_SOURCE", json.dumps(body))


def test_the_start_dag_migrates_to_bigtable(
        dag_bag: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        bigtable_emulator: Emulator, make_embedded: EmbeddedClusters) -> None:
    ledger = f"sqlite:///{tmp_path / 'ledger.db'}"
    bigtable_connection(monkeypatch, bigtable_emulator, "airflow-dags")
    conf = {"migration": "to_bigtable", "source_conn_id": "bt_source",
            "target_conn_id": "bt_target", "tables": [TABLE], "ledger": ledger,
            "spark_conn_id": None, "parts": 1}  # one validation task: GX's start-up each
    src = make_embedded("source", folder=tmp_path / "src", wal=WalSettings(region_servers=2))
    hbase_source(monkeypatch, src)
    workload = Workload(src.endpoints, WorkloadSpec(TABLE, 7, 120))
    try:
        workload.ensure_table()
        workload.run()
    finally:
        workload.close()
    start = dag_bag.get_dag("hbase_migrate_start").test(  # type: ignore[attr-defined]
        run_conf={**conf, "snapshot_method": "scan"})
    tis = {ti.task_id: ti for ti in start.get_task_instances()}
    assert {ti.state for ti in tis.values()} == {"success"}, tis
    checked = tis["check"].xcom_pull(task_ids="check")["preflight"]
    assert (checked["refused"], checked["findings"]) == ([], [])
    assert checked["rows_sampled"] == len({c.row for c in workload_cells(src)})
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


def workload_cells(src: MiniHBase) -> list[Cell]:
    with Thrift2Client(src.endpoints.thrift2 or "") as source:
        return [c for piece in source.scan(TABLE) for c in piece]


def test_the_start_dags_check_lists_what_bigtable_cannot_take_and_refuses_before_a_write(
        dag_bag: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture,
        bigtable_emulator: Emulator, make_embedded: EmbeddedClusters) -> None:
    """A row key over Bigtable's 4 KiB: ``check`` fails at its first try, the finding and
    the refusal in its log; no table on Bigtable, no migration in the ledger."""
    from google.cloud import bigtable

    ledger = tmp_path / "ledger.db"
    bigtable_connection(monkeypatch, bigtable_emulator, "refused-dags")
    long_key = b"k" * 5000
    src = make_embedded("source", folder=tmp_path / "src")
    hbase_source(monkeypatch, src)
    with Thrift2Client(src.endpoints.thrift2 or "") as client:
        client.create_table(TableDescriptor(TABLE, (FamilyDescriptor(b"f"),)))
        client.write_cells(TABLE, [Cell(key, b"f", b"q", 1000, CellType.PUT, b"v")
                                   for key in (b"a", long_key)])
    run = dag_bag.get_dag("hbase_migrate_start").test(run_conf={  # type: ignore[attr-defined]
        "migration": "too_long", "source_conn_id": "bt_source",
        "target_conn_id": "bt_target", "tables": [TABLE], "ledger": f"sqlite:///{ledger}",
        "spark_conn_id": None})
    states = {ti.task_id: (ti.state, ti.try_number) for ti in run.get_task_instances()}
    assert states.pop("check") == ("failed", 1)
    assert {state for state, _ in states.values()} == {"upstream_failed"}
    name = key_name(TABLE, long_key)  # the whole key's digest names it
    failed = capfd.readouterr().out  # the task's failure
    log = caplog.text  # what the check logged
    assert (f"refused: {name}: a row key of 5000 bytes (at most 4096) (met 2 time(s) in the "
            "sampled rows and the WAL cells)") in log  # the one cell in each
    assert (f"check: table {TABLE}: {name.split(' ', 2)[2]}: a row key of 5000 bytes "
            "(at most 4096): "
            f"Bigtable cannot take it; nothing was written") in failed
    monkeypatch.setenv("BIGTABLE_EMULATOR_HOST", bigtable_emulator.host)  # Google's client
    instance = bigtable.Client(project="proj", admin=True).instance("refused-dags")
    assert instance.list_tables() == []
    if ledger.exists():
        with Ledger.open(f"sqlite:///{ledger}") as opened:
            assert opened.migration("too_long") is None
