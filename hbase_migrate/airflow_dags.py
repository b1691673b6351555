"""The files of an Airflow DAG folder that hold this project's DAGs.

The DAGs are declared in the package ``hbase_migrate_airflow.dags``, one module each, whose
``dag`` is the DAG. Airflow finds DAGs in the files of its DAG folder only, so that folder
holds one short file per DAG importing it: the repository's ``dags/`` is made of them, and
:func:`write_dag_files` writes them into any folder (``hbase-migrate airflow dags DIR``, for
an Airflow the package is installed into). Plain text: nothing here imports Airflow.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = "hbase_migrate_airflow.dags"
# DAG id -> its module in PACKAGE
DAGS: dict[str, str] = {
    f"hbase_migrate_{name}": name
    for name in ("backfill", "cdc", "cutover", "replay", "start", "validate", "wal_watch")
}


def dag_file_text(dag_id: str) -> str:
    """The DAG file of ``dag_id`` (a key of :data:`DAGS`)."""
    module = f"{PACKAGE}.{DAGS[dag_id]}"
    return (f'"""The Airflow DAG {dag_id} of hbase-migrate,\ndeclared in {module}."""\n\n'
            f"from {module} import dag\n\n"
            '__all__ = ["dag"]\n')


def write_dag_files(folder: Path) -> list[Path]:
    """Write (or rewrite) the file of every DAG into ``folder``; returns them. A file of
    another content under the same name is replaced: the name is this project's."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for dag_id in DAGS:
        path = folder / f"{dag_id}.py"
        text = dag_file_text(dag_id)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        written.append(path)
    return written
