"""One migration for Airflow and the command line: a migration an Airflow run started (its
clusters by hbase connections) is accepted from a config naming the same clusters by
cluster.json, and ``hbase-migrate config show`` prints a config every command takes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hbase_migrate.airflow_stack import hbase_connection
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cli import cli
from hbase_migrate.cluster.endpoints import load_cluster_json
from hbase_migrate.config import load_config
from tests.airflow_home import configure

configure()
pytestmark = pytest.mark.integration


def cluster_json(folder: Path, name: str, port: int) -> Path:
    """A cluster.json as the embedded cluster writes it (with keys of its own)."""
    (folder / name).mkdir()
    path = folder / name / "cluster.json"
    path.write_text(json.dumps({
        "name": name, "thrift": f"127.0.0.1:{port}", "thrift2": f"127.0.0.1:{port + 1}",
        "webhdfs": f"http://127.0.0.1:{port + 2}", "zookeeper": "127.0.0.1:2181",
        "znode_parent": f"/{name}", "hbase_root": "/hbase", "pid": 4242,
        "dir": str(folder / name)}))
    return path


def test_a_migration_started_in_airflow_is_driven_by_its_shown_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hbase_migrate_airflow.migration import migration_spec

    source, target = cluster_json(tmp_path, "source", 33445), cluster_json(tmp_path, "target",
                                                                          43445)
    for conn_id, path in (("hbase_src", source), ("hbase_dst", target)):
        body = hbase_connection(conn_id, load_cluster_json(path))
        monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}",
                           json.dumps({k: v for k, v in body.items() if k != "connection_id"}))
    url = f"sqlite:///{tmp_path}/ledger.db"
    started = migration_spec({"migration": "notable", "source_conn_id": "hbase_src",
                              "target_conn_id": "hbase_dst", "tables": ["orders=orders_v2"],
                              "roll_period": "30m", "margin": "2m", "ledger": url})
    with Ledger.open(url) as ledger:  # the start DAG's steps: the copy is made
        record = ledger.ensure_spec(started)
        with ledger.step(record.id, "snapshot"):
            pass

    shown = CliRunner().invoke(cli, ["config", "show", "notable", "--ledger", url])
    assert shown.exit_code == 0, shown.output
    assert shown.output.startswith(f"# migration 'notable' as ledger {url} recorded it;")
    saved = tmp_path / "shown.toml"
    saved.write_text(shown.output)
    assert load_config(saved).to_dict() == started.to_dict()

    status = CliRunner().invoke(cli, ["status", "--config", str(saved), "--json"])
    assert status.exit_code == 0, status.output
    assert [m["name"] for m in json.loads(status.output)["migrations"]] == ["notable"]
    limits = CliRunner().invoke(cli, ["limits", "set", "--config", str(saved),
                                      "copy_cells_per_second=500"])
    assert limits.exit_code == 0, limits.output
    with Ledger.open(url) as ledger:
        assert [m.name for m in ledger.migrations()] == ["notable"]
        assert [change for _, _, change in ledger.definitions(record.id)] == [None]

    # The user's own config names the clusters by their cluster.json: the same migration.
    own = tmp_path / "own.toml"
    own.write_text(f'[migration]\nname = "notable"\nledger = "{url}"\n[source]\n'
                   f'cluster_json = "{source}"\n[target]\ncluster_json = "{target}"\n'
                   '[[tables]]\nsource = "orders"\ntarget = "orders_v2"\n')
    with Ledger.open(url) as ledger:
        assert ledger.ensure_spec(load_config(own)).id == record.id
        assert [change for _, _, change in ledger.definitions(record.id)] == [
            None, "replay.margin 120000 -> 300000; replay.roll_period 1800000 -> 3600000"]

