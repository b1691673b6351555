"""The Python processes the project starts import the ``hbase_migrate`` their parent
imported, not one in their working folder (issue 71): run from inside another checkout, whose
``hbase_migrate/__init__.py`` is here a decoy that raises on import, a child started with
``-m`` or ``-c`` (which put the working folder first on ``sys.path``) must not reach it. The
children: Airflow's processes and task runners (:func:`airflow_env`), the demo's
miniclusters (:func:`stackprocs.process.spawn_child`), the Great Expectations process
(:func:`python_env`) and Spark's local Python workers (:func:`executor_setup`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

import hbase_migrate
from hbase_migrate.airflow_stack import airflow_env
from hbase_migrate.services import free_port, python_env
from minihbase.stack import MiniclusterProcess
from stackprocs.process import spawn_child

OURS = str(Path(hbase_migrate.__file__).resolve())
SHOW = "import hbase_migrate, pathlib; print(pathlib.Path(hbase_migrate.__file__).resolve())"


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """Another checkout's folder: its ``hbase_migrate`` raises when imported."""
    folder = tmp_path / "other-checkout"
    (folder / "hbase_migrate").mkdir(parents=True)
    (folder / "hbase_migrate" / "__init__.py").write_text(
        "raise ImportError('the hbase_migrate of the working folder was imported')\n")
    return folder


def imported(env: Mapping[str, str], cwd: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *flags, "-c", SHOW], env=dict(env), cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


def bare_env() -> dict[str, str]:
    """This process's environment without what would keep the working folder off the path."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONSAFEPATH", "PYTHONPATH")}


def test_the_decoy_is_what_a_plain_child_imports(checkout: Path) -> None:
    """The premise: a child started with ``-c`` in that folder, as it was before, imports
    the decoy."""
    done = imported(bare_env(), checkout)
    assert done.returncode == 1 and "of the working folder was imported" in done.stderr


@pytest.mark.parametrize("build", ["python_env", "airflow_env"])
def test_a_child_of_the_built_environment_imports_this_package(
        checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, build: str) -> None:
    """The environment a GX process or a minicluster gets, and an Airflow process's (its
    scheduler, api-server, workers and the task runners they fork)."""
    for name in ("PYTHONSAFEPATH", "PYTHONPATH"):
        monkeypatch.delenv(name, raising=False)
    env = python_env() if build == "python_env" else airflow_env(tmp_path, free_port())
    done = imported(env, checkout)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == OURS


def test_a_user_pythonpath_is_kept_after_this_package(checkout: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    (extra / "mine").mkdir(parents=True)
    (extra / "mine" / "__init__.py").write_text("NAME = 'mine'\n")
    env = python_env({**bare_env(), "PYTHONPATH": str(extra)})
    done = subprocess.run([sys.executable, "-c", f"import mine; {SHOW}"], env=env,
                          cwd=checkout, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == OURS


def test_a_spawned_child_imports_this_package(checkout: Path, tmp_path: Path) -> None:
    """minihbase's ``spawn_child``, which starts the demo's miniclusters and the soak's
    replays, in that folder."""
    log = tmp_path / "child.log"
    proc = spawn_child([sys.executable, "-c", SHOW], str(log), cwd=str(checkout))
    assert proc.wait(120) == 0, log.read_text()
    assert log.read_text().strip() == OURS


@pytest.mark.integration
def test_the_demos_minicluster_starts_from_another_checkout(
        checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``python -m hbase_migrate minicluster start``, as the demo starts it, with the
    command run from inside that checkout."""
    monkeypatch.chdir(checkout)
    cluster = MiniclusterProcess("source", tmp_path / "source")
    try:
        endpoints = cluster.start(timeout=120)
        assert endpoints.name == "source"
    finally:
        cluster.stop()


SPARK_PROBE = """
import json, pathlib
from hbase_migrate.ranges.engine import spark_session
with spark_session("local[1]") as session:
    found = session.spark.sparkContext.parallelize([0], 1).map(
        lambda _: str(pathlib.Path(__import__("hbase_migrate").__file__).resolve())).collect()
print(json.dumps(found))
"""


@pytest.mark.integration
@pytest.mark.slow
def test_spark_local_workers_import_this_package(checkout: Path) -> None:
    """A step's Spark ``local`` session started from inside that checkout: its Python
    workers (``python -m pyspark.daemon`` in the driver's folder) import this package. The
    driver runs with ``-P``, as the ``hbase-migrate`` script does (its folder is ``bin``)."""
    pytest.importorskip("pyspark")
    done = subprocess.run([sys.executable, "-P", "-c", SPARK_PROBE], env=bare_env(),
                          cwd=checkout, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [OURS]

