"""The deferrable WAL sensor of ``hbase_migrate_wal_watch`` under ``dag.test()`` (its trigger
runs inline): it defers when the ledger knows every WAL file, fires when the source rolls a
WAL and returns exactly the new file, announced as one Asset event; with nothing new it
ends at its own deadline (the run is skipped) with a message saying so."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.config import load_config
from hbase_migrate.replay.discovery import open_wal_store, reconcile
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from tests.support.minicluster import EmbeddedClusters, run_workload, write_migration

pytestmark = pytest.mark.integration
TABLE = "orders"


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MiniHBase, Path]]:
    """A source that rolls only when told, its migration config, and a ledger that has
    listed every WAL file it holds."""
    folder = tmp_path_factory.mktemp("sensor")
    with EmbeddedClusters(folder) as clusters:
        src = clusters("source", folder=folder / "src", wal=WalSettings(region_servers=2))
        run_workload(src, TABLE, seed=3, ops=50)
        config = write_migration(folder, src, src, TABLE, name="sensor_test")
        spec = load_config(config)
        with Ledger.open(spec.ledger_url) as ledger:
            reconcile(ledger, ledger.ensure_spec(spec).id, open_wal_store(spec.source))
        yield src, config


def asset_events(run_id: str) -> list[Any]:
    from airflow.models.asset import AssetEvent
    from airflow.utils.session import create_session

    with create_session() as session:
        events = session.query(AssetEvent).filter(AssetEvent.source_run_id == run_id).all()
        session.expunge_all()
    return events


def listed(config: Path) -> set[str]:
    return {f.name for f in open_wal_store(load_config(config).source).list_wal_files()}


def watch(dag_bag: Any, config: Path, wait: int) -> Any:
    dag = dag_bag.get_dag("hbase_migrate_wal_watch")
    return dag.test(run_conf={"config": str(config), "wait_seconds": wait, "poll_seconds": 1})


def test_it_defers_and_fires_with_the_rolled_wal(dag_bag: Any,
                                                 source: tuple[MiniHBase, Path]) -> None:
    src, config = source
    before = listed(config)
    assert src.region_servers is not None
    roller = threading.Timer(3.0, src.region_servers.roll, args=(0,))
    roller.start()  # after the sensor found nothing and deferred
    began = time.monotonic()
    run = watch(dag_bag, config, 120)
    roller.join()
    tis = {ti.task_id: ti for ti in run.get_task_instances()}
    assert {k: ti.state for k, ti in tis.items()} == {
        "migrations": "success", "new_wal_files": "success", "announce": "success"}
    assert time.monotonic() - began >= 3.0  # it waited for the roll
    new = listed(config) - before
    assert len(new) == 1  # the server's next WAL file
    found, = tis["announce"].xcom_pull(task_ids="new_wal_files")  # one mapped sensor
    assert found["migration"]["config"] == str(config)
    assert [f["name"] for f in found["files"]] == sorted(new)
    assert found["files"][0]["state"] == "live"
    event, = asset_events(run.run_id)
    batch, = event.extra["migrations"]
    assert [Path(p).name for p in batch["files"]] == sorted(new)
    assert batch["params"]["config"] == str(config)


def test_with_nothing_new_it_ends_at_its_deadline(dag_bag: Any,
                                                  source: tuple[MiniHBase, Path],
                                                  capfd: pytest.CaptureFixture[str]) -> None:
    _, config = source
    with Ledger.open(load_config(config).ledger_url) as ledger:  # the rolled file too
        spec = load_config(config)
        reconcile(ledger, ledger.ensure_spec(spec).id, open_wal_store(spec.source))
    began = time.monotonic()
    run = watch(dag_bag, config, 3)
    took = time.monotonic() - began
    states = {ti.task_id: ti.state for ti in run.get_task_instances()}
    assert states == {"migrations": "success", "new_wal_files": "skipped",
                      "announce": "skipped"}
    assert 3.0 <= took < 60  # its own deadline, not the backstop
    assert asset_events(run.run_id) == []
    assert "no new WAL file in the source's WALs/ or oldWALs/ for migration " \
           f"{config} within 3 s" in "".join(capfd.readouterr())
