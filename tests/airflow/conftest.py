"""Fixtures of the Airflow tests: a migrated metadata database made once per run and copied
(``airflow db migrate`` costs seconds), the in-process Airflow for ``dag.test()``, and the
embedded clusters."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hbase_migrate.airflow_stack import airflow_env
from hbase_migrate.services import free_port
from tests.airflow_home import configure

DB_FILE = configure()


def migrated(path: Path) -> bool:
    if not path.exists():
        return False
    with sqlite3.connect(path) as db:
        return db.execute("select count(*) from sqlite_master where name = 'alembic_version'"
                          ).fetchone()[0] == 1


@pytest.fixture(scope="session")
def airflow_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A freshly migrated Airflow metadata database to copy."""
    folder = tmp_path_factory.mktemp("airflow-template")
    (folder / "airflow").mkdir()
    done = subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"],
                          env=airflow_env(folder, free_port()), capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return folder / "airflow" / "airflow.db"


@pytest.fixture(scope="session")
def airflow_db(airflow_template: Path) -> Path:
    """The in-process Airflow's database, migrated (for ``dag.test()``)."""
    if not migrated(DB_FILE):
        shutil.copyfile(airflow_template, DB_FILE)
    return DB_FILE


@pytest.fixture(scope="session")
def dag_bag(airflow_db: Path) -> Iterator[object]:
    """The project's DAGs, parsed once."""
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(Path(__file__).resolve().parents[2] / "dags"),
                 safe_mode=False)
    assert not bag.import_errors, bag.import_errors
    yield bag
