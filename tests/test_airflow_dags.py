"""The DAG files of the repository's dags/ are the one-line files ``hbase-migrate airflow
dags DIR`` writes into a user's DAG folder, one per DAG module of the package."""

from __future__ import annotations

import ast
import pkgutil
from pathlib import Path

from click.testing import CliRunner

import hbase_migrate_airflow.dags
from hbase_migrate.airflow_dags import DAGS, dag_file_text, write_dag_files
from hbase_migrate.cli import cli

REPO = Path(__file__).resolve().parents[1]


def test_each_dag_module_of_the_package_has_a_file_in_dags() -> None:
    modules = {m.name for m in pkgutil.iter_modules(hbase_migrate_airflow.dags.__path__)}
    files = {p.stem for p in (REPO / "dags").glob("*.py")}
    assert files == {f"hbase_migrate_{m}" for m in modules} == set(DAGS)


def test_the_repository_files_are_the_written_ones() -> None:
    for path in sorted((REPO / "dags").glob("*.py")):
        assert path.read_text() == dag_file_text(path.stem), path.name


def test_a_file_imports_its_module_dag_and_nothing_else() -> None:
    tree = ast.parse(dag_file_text("hbase_migrate_wal_watch"))
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    assert [(i.module, [a.name for a in i.names]) for i in imports  # type: ignore[union-attr]
            ] == [("hbase_migrate_airflow.dags.wal_watch", ["dag"])]
    # Airflow's safe mode parses only files that name both words
    assert {"airflow", "dag"} <= set(dag_file_text("hbase_migrate_cdc").lower().split())


def test_the_command_writes_them_and_leaves_other_files_alone(tmp_path: Path) -> None:
    folder = tmp_path / "dags"
    folder.mkdir()
    (folder / "theirs.py").write_text("x = 1\n")
    (folder / "hbase_migrate_start.py").write_text("stale\n")
    done = CliRunner().invoke(cli, ["airflow", "dags", str(folder)])
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["theirs.py", *(f"{d}.py" for d in DAGS)])
    assert (folder / "theirs.py").read_text() == "x = 1\n"
    assert (folder / "hbase_migrate_start.py").read_text() == dag_file_text(
        "hbase_migrate_start")
    assert done.output.count("wrote ") == len(DAGS)
    assert write_dag_files(folder) == [folder / f"{d}.py" for d in DAGS]
