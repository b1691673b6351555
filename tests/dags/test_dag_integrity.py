"""Every DAG file in dags/ imports cleanly, defines a DAG, and does no work at parse time.

The harness is checked too: DAG files that query the database, look up a Connection or a
Variable, fail to import or define nothing must be reported.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dags.integrity import DAG_FILES, parse_dag_file

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("path", DAG_FILES, ids=[p.name for p in DAG_FILES])
def test_dag_file_is_a_clean_declaration(path: Path) -> None:
    report = parse_dag_file(path)
    assert report.problems == []


GOOD = """
from airflow.sdk import dag, task

@dag(schedule=None, tags=["check"])
def good():
    @task
    def hello():
        return 1
    hello()

good()
"""

CASES = {
    "connection_lookup": (
        "from airflow.sdk import Connection\nConnection.get('source_hbase')\n" + GOOD,
        "Connection.get('source_hbase') at parse time",
    ),
    "hook_connection_lookup": (
        "from airflow.sdk.bases.hook import BaseHook\nBaseHook.get_connection('zk')\n" + GOOD,
        "BaseHook.get_connection('zk') at parse time",
    ),
    "variable_lookup": (
        "from airflow.sdk import Variable\nVariable.get('watermark')\n" + GOOD,
        "Variable.get('watermark') at parse time",
    ),
    "database_query": (
        "import sqlalchemy\n"
        "sqlalchemy.create_engine('sqlite://').connect().exec_driver_sql('select 1')\n" + GOOD,
        "metadata-database query at parse time: select 1",
    ),
    "import_error": ("import no_such_module_anywhere\n" + GOOD, "import failed: ModuleNotFound"),
    "no_dag": ("x = 1\n", "defines no DAG"),
}


def test_harness_accepts_a_clean_dag(tmp_path: Path) -> None:
    path = tmp_path / "good.py"
    path.write_text(GOOD)
    report = parse_dag_file(path)
    assert report.problems == []
    assert report.dag_ids == ["good"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_harness_reports_parse_time_work(tmp_path: Path, name: str) -> None:
    source, expected = CASES[name]
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    problems = parse_dag_file(path).problems
    assert any(p.startswith(expected) for p in problems), problems
