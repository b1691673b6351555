"""The in-process Airflow of the test run: a throw-away home, this project's DAGs and
plugins. Set before Airflow is first imported (by the conftests that need it); nothing
touches the user's Airflow."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DB_URL = "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"


def configure() -> Path:
    """Point Airflow at a temporary home (once per process), put the plugins folder on the
    import path; returns the database file."""
    if "HBASE_MIGRATE_TEST_AIRFLOW_HOME" not in os.environ:
        home = tempfile.mkdtemp(prefix="airflow-home-")
        atexit.register(shutil.rmtree, home, ignore_errors=True)
        os.environ["HBASE_MIGRATE_TEST_AIRFLOW_HOME"] = home
        os.environ.setdefault("AIRFLOW_HOME", home)
        os.environ.setdefault("AIRFLOW__CORE__DAGS_FOLDER", str(REPO / "dags"))
        os.environ.setdefault("AIRFLOW__CORE__PLUGINS_FOLDER", str(REPO / "plugins"))
        os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
        os.environ.setdefault(DB_URL, f"sqlite:///{home}/airflow.db")
    if str(REPO / "plugins") not in sys.path:  # as Airflow's own processes have it
        sys.path.append(str(REPO / "plugins"))
    return Path(os.environ[DB_URL].removeprefix("sqlite:///"))
