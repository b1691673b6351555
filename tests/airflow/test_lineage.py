"""OpenLineage events of the start, replay, validate and WAL watch DAGs under
``dag.test()``, as Airflow's OpenLineage provider writes them to its file transport: each
task's input and output datasets are the HBase tables (``hbase://<cluster id>``,
``<namespace>:<table>``) and, for replay and the watch, the WAL files it read or found; the
cluster ids are those the clusters keep."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.audit.ledger import Ledger
from minihbase.regionserver import WalSettings
from minihbase.server import cluster_id
from tests.airflow_home import lineage_events
from tests.support.airflow import env_connection
from tests.support.minicluster import EmbeddedClusters, run_workload

pytestmark = pytest.mark.integration
TABLE = "orders"


def datasets(events: list[dict[str, Any]], run_id: str) -> dict[str, tuple[set[str], set[str]]]:
    """Per task of the DAG run ``run_id``: (inputs, outputs) of its COMPLETE events (of every
    map index of a mapped task), each dataset as ``namespace/name``."""
    found: dict[str, tuple[set[str], set[str]]] = {}
    for event in events:
        facets = event["run"].get("facets", {})
        run = facets.get("airflow", {}).get("dagRun", {}) or facets.get("airflow", {}).get(
            "dag_run", {})
        if event["eventType"] != "COMPLETE" or run.get("run_id") != run_id:
            continue
        inputs, outputs = found.setdefault(event["job"]["name"].split(".", 1)[1], (set(), set()))
        inputs.update(f"{d['namespace']}/{d['name']}" for d in event.get("inputs", []))
        outputs.update(f"{d['namespace']}/{d['name']}" for d in event.get("outputs", []))
    return found


def test_start_replay_and_validate_report_their_datasets(
        dag_bag: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        make_embedded: EmbeddedClusters) -> None:
    ledger = f"sqlite:///{tmp_path / 'ledger.db'}"
    src, dst = make_embedded.pair("native", wal=WalSettings(region_servers=2))
    run_workload(src, TABLE, seed=7, ops=100)
    env_connection(monkeypatch, "lineage_source", src)
    env_connection(monkeypatch, "lineage_target", dst)
    conf = {"migration": "lineage_test", "source_conn_id": "lineage_source",
            "target_conn_id": "lineage_target", "tables": [TABLE], "ledger": ledger,
            "spark_conn_id": None}
    runs = {}
    for dag_id in ("hbase_migrate_start", "hbase_migrate_replay", "hbase_migrate_validate"):
        if dag_id == "hbase_migrate_replay":
            run_workload(src, TABLE, seed=8, ops=100)  # after T0: for replay
            assert src.region_servers is not None
            src.region_servers.roll()
        run = dag_bag.get_dag(dag_id).test(run_conf=conf)  # type: ignore[attr-defined]
        assert run.state == "success", dag_id
        runs[dag_id] = run.run_id
    # the WAL watch's sensor: the files no step has listed yet are its inputs
    src.region_servers.roll()
    with Ledger.open(ledger) as opened:
        record = opened.migration("lineage_test")
        assert record is not None
        known = {Path(f.path).name for f in opened.wal_files(record.id, "source")}
    on_disk = {p.name for p in src.hbase_root_dir.glob("*WALs/**/*") if p.is_file()}
    watch = dag_bag.get_dag("hbase_migrate_wal_watch").test(  # type: ignore[attr-defined]
        run_conf={**conf, "wait_seconds": 30, "poll_seconds": 1})
    assert watch.state == "success"
    runs["hbase_migrate_wal_watch"] = watch.run_id
    src_id, dst_id = cluster_id(src.hbase_root_dir), cluster_id(dst.hbase_root_dir)
    source, target = f"hbase://{src_id}/default:{TABLE}", f"hbase://{dst_id}/default:{TABLE}"
    with Ledger.open(ledger) as opened:
        record = opened.migration("lineage_test")
        assert record is not None
        replayed = [s for s in opened.steps(record.id, "replay")]
        wals = {f"hbase://{src_id}/WALs/{Path(f.path).name}"
                for f in opened.wal_files(record.id, "source") if f.offset_reached > 0}
    assert source != target and len(replayed) == 2 and wals  # a part per region server

    events = lineage_events()
    validation = {"plan_validation": (set(), set()),  # the parts of a validation, mapped
                  "validate_part": ({source, target}, set()),
                  "validate": ({source, target}, set())}
    assert datasets(events, runs["hbase_migrate_start"]) == {
        "check": ({source, target}, set()),  # it reads both clusters' tables, writes nothing
        "prepare": ({source}, {target}), "plan_snapshot": (set(), set()),  # the copy's
        "snapshot_part": ({source}, {target}), "snapshot": ({source}, {target}), **validation}
    replay = datasets(events, runs["hbase_migrate_replay"])
    assert replay["plan"] == (set(), set())
    assert replay["replay"] == (wals, {target})
    # the replay's validation is its round: no part planned, the judge reads both tables
    rounds = {k: v for k, v in validation.items() if k != "validate_part"}
    assert {k: replay[k] for k in rounds} == rounds and "validate_part" not in replay
    # the scheduled DAGs' first task lists the migrations to act on: no dataset
    assert datasets(events, runs["hbase_migrate_validate"]) == {
        "migrations": (set(), set()), **validation}
    new = {f"hbase://{src_id}/WALs/{name}" for name in on_disk - known}
    assert new and datasets(events, runs["hbase_migrate_wal_watch"])["new_wal_files"] == (
        new, set())
