"""Where a local Airflow's configuration, DAG folder and plugins folder come from: a
checkout's own, or for an installed package (no such folders beside it) the configuration
its wheel ships and the DAG files written into the stack's home."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate import airflow_stack
from hbase_migrate.airflow_dags import DAGS, dag_file_text
from hbase_migrate.airflow_stack import AirflowStackError, airflow_env, airflow_files

REPO = Path(__file__).resolve().parents[1]


def test_a_checkout_uses_its_own_folders(tmp_path: Path) -> None:
    assert airflow_files(REPO, tmp_path / "home") == (
        REPO / "airflow.cfg", REPO / "dags", REPO / "plugins")
    assert not (tmp_path / "home").exists()  # nothing written


def test_an_installed_package_writes_its_dag_files(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = tmp_path / "site" / "hbase_migrate" / "_airflow" / "airflow.cfg"
    shipped.parent.mkdir(parents=True)
    shipped.write_text("[core]\n")
    monkeypatch.setattr(airflow_stack, "PACKAGED_CONFIG", shipped)
    home = tmp_path / "state" / "airflow"
    config, dags, plugins = airflow_files(tmp_path / "site", home)
    assert (config, dags, plugins) == (shipped, home / "dags", home / "plugins")
    assert sorted(p.name for p in dags.iterdir()) == sorted(f"{d}.py" for d in DAGS)
    assert (dags / "hbase_migrate_cutover.py").read_text() == dag_file_text(
        "hbase_migrate_cutover")
    assert plugins.is_dir() and not any(plugins.iterdir())
    env = airflow_env(tmp_path / "state", 8080, project=tmp_path / "site")
    assert (env["AIRFLOW_CONFIG"], env["AIRFLOW__CORE__DAGS_FOLDER"]) == (
        str(shipped), str(home / "dags"))


def test_neither_is_an_error_naming_what_is_missing(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(airflow_stack, "PACKAGED_CONFIG", tmp_path / "nowhere.cfg")
    with pytest.raises(AirflowStackError, match=r"airflow\.cfg.*reinstall hbase-migrate"):
        airflow_files(tmp_path, tmp_path / "home")
