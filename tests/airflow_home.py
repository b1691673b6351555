"""The in-process Airflow of the test run: a throw-away home, this project's DAGs and
plugins. Set before Airflow is first imported (by the conftests that need it); nothing
touches the user's Airflow."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DB_URL = "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"
LINEAGE_FILE = "openlineage.jsonl"  # in the home: the OpenLineage events of the test run


def configure() -> Path:
    """Point Airflow at a temporary home (once per process), its OpenLineage events to a
    file there (:func:`lineage_events`); returns the database file. The Airflow layer,
    ``hbase_migrate_airflow``, is a package of the project, imported like the core."""
    if "HBASE_MIGRATE_TEST_AIRFLOW_HOME" not in os.environ:
        home = tempfile.mkdtemp(prefix="airflow-home-")
        atexit.register(shutil.rmtree, home, ignore_errors=True)
        os.environ["HBASE_MIGRATE_TEST_AIRFLOW_HOME"] = home
        os.environ.setdefault("AIRFLOW_HOME", home)
        os.environ.setdefault("AIRFLOW__CORE__DAGS_FOLDER", str(REPO / "dags"))
        os.environ.setdefault("AIRFLOW__CORE__PLUGINS_FOLDER", str(REPO / "plugins"))
        os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
        os.environ.setdefault(DB_URL, f"sqlite:///{home}/airflow.db")
        os.environ.setdefault("AIRFLOW__OPENLINEAGE__TRANSPORT", json.dumps(
            {"type": "file", "log_file_path": f"{home}/{LINEAGE_FILE}", "append": True}))
    return Path(os.environ[DB_URL].removeprefix("sqlite:///"))


def lineage_events() -> list[dict[str, object]]:
    """The OpenLineage events the in-process Airflow wrote so far, in order."""
    path = Path(os.environ["HBASE_MIGRATE_TEST_AIRFLOW_HOME"]) / LINEAGE_FILE
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
