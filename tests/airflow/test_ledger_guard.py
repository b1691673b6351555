"""A task on a distributed executor refuses a SQLite ledger (each worker would have its own
file) in one line saying what to set, before anything is written; the LocalExecutor, and a
shared ledger from ``$HBASE_MIGRATE_LEDGER``, pass (issue 38, item 3). The spec is built by
the plugin's ``migration_spec`` from a config file, the executor read from Airflow's
configuration as a running task reads it. The Celery stack's own run of it is in
``test_celery_stack.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.errors import ConfigError
from hbase_migrate_airflow.ledger_guard import configured_executor
from hbase_migrate_airflow.migration import migration_spec
from tests.support.config_files import MINIMAL

CONFIG = MINIMAL  # migration 'users', naming no ledger
KUBERNETES = "airflow.providers.cncf.kubernetes.executors.kubernetes_executor.KubernetesExecutor"


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A migration naming no ledger, the state folder under ``tmp_path``."""
    monkeypatch.delenv("HBASE_MIGRATE_LEDGER", raising=False)
    monkeypatch.setenv("HBASE_MIGRATE_STATE_DIR", str(tmp_path / "state"))
    path = tmp_path / "m.toml"
    path.write_text(CONFIG)
    return path


@pytest.mark.parametrize(("configured", "shown"), [
    ("CeleryExecutor", "CeleryExecutor"),
    (f"k8s:{KUBERNETES}", "KubernetesExecutor"),
    ("CeleryExecutor,LocalExecutor", "CeleryExecutor"),
])
def test_a_distributed_executor_refuses_a_sqlite_ledger(
        config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, configured: str,
        shown: str) -> None:
    monkeypatch.setenv("AIRFLOW__CORE__EXECUTOR", configured)
    with pytest.raises(ConfigError) as refused:
        migration_spec({"config": str(config)})
    assert str(refused.value) == (
        f"migration 'users': its ledger sqlite:///{tmp_path}/state/users/ledger.db is a "
        f"SQLite file on this worker, and under {shown} each worker would write its own file "
        "(a step would not see the steps other workers recorded); set a shared ledger (a "
        "PostgreSQL URL) in HBASE_MIGRATE_LEDGER on every worker, the ledger Param or "
        "[migration] ledger")
    assert not (tmp_path / "state").exists()


@pytest.mark.parametrize("configured", ["LocalExecutor", "LocalExecutor,CeleryExecutor",
                                        "fast:LocalExecutor"])
def test_the_local_executor_keeps_its_sqlite_ledger(
        config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, configured: str) -> None:
    monkeypatch.setenv("AIRFLOW__CORE__EXECUTOR", configured)
    assert migration_spec({"config": str(config)}).ledger_url == \
        f"sqlite:///{tmp_path}/state/users/ledger.db"


def test_a_shared_ledger_runs_on_celery(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW__CORE__EXECUTOR", "CeleryExecutor")
    monkeypatch.setenv("HBASE_MIGRATE_LEDGER", "postgresql://ledger.example/ledger")
    assert migration_spec({"config": str(config)}).ledger_url == \
        "postgresql://ledger.example/ledger"


@pytest.mark.parametrize(("configured", "wanted", "expected"), [
    ("LocalExecutor", None, "LocalExecutor"),
    (" CeleryExecutor , LocalExecutor", None, "CeleryExecutor"),
    ("LocalExecutor,CeleryExecutor", "CeleryExecutor", "CeleryExecutor"),
    (f"LocalExecutor,k8s:{KUBERNETES}", "k8s", "KubernetesExecutor"),
    (f"LocalExecutor,{KUBERNETES}", KUBERNETES, "KubernetesExecutor"),
    ("LocalExecutor;team1=CeleryExecutor", None, "LocalExecutor"),
    ("my.pkg.HostExecutor", None, "HostExecutor"),
])
def test_the_executor_of_a_task(configured: str, wanted: str | None, expected: str) -> None:
    """The task's own ``executor`` by alias, path or class, else the first configured."""
    assert configured_executor(configured, wanted) == expected
