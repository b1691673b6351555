"""What a Spark session's executors run, and how they got it.

On a local master (``local[N]``) tasks are Python workers of this machine: this Python,
importing the ``hbase_migrate`` this process imported, whatever the working folder
(:func:`hbase_migrate.services.python_path_vars`, as ``spark.executorEnv``).
On a cluster master (``spark://``, ``yarn``, ``k8s://``...) executors are other hosts and
never get this driver's paths: they run ``[spark] python`` (an interpreter with
``hbase-migrate[executor]`` installed, an image's), or, when none is named, their own
``python3`` (``spark.pyspark.python`` in ``[spark] conf`` names another) with the project
and its task-side dependencies shipped as a Spark archive
(:mod:`hbase_migrate.spark.archive`) on their ``PYTHONPATH``. ``[spark] conf`` goes to the
session as it is, under these.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from hbase_migrate.config import EngineSettings
from hbase_migrate.services import python_path_vars
from hbase_migrate.spark.archive import UNPACKED, ExecutorArchive, executor_archive
from hbase_migrate.spark.errors import is_local_master

PYTHON_KEY = "spark.pyspark.python"


@dataclass(frozen=True)
class ExecutorSetup:
    """A session's settings (``conf``), the executors' Python (``python``: what Spark starts
    on them) and one line saying what executors run and how they got it."""

    conf: tuple[tuple[str, str], ...]
    python: str
    description: str
    archive: ExecutorArchive | None = None


def executor_setup(master: str, engine: EngineSettings) -> ExecutorSetup:
    """The setup of a session on ``master`` for a migration's ``[spark]`` settings."""
    conf = dict(engine.conf)
    if is_local_master(master):
        python = engine.python or conf.get(PYTHON_KEY) or sys.executable
        found = python_path_vars(conf.get("spark.executorEnv.PYTHONPATH"))
        conf.update({f"spark.executorEnv.{k}": v for k, v in found.items() if v})
        return ExecutorSetup(tuple(sorted(conf.items())), python,
                             f"executors: Python workers of this machine ({python})")
    if engine.python:
        conf[PYTHON_KEY] = engine.python
        return ExecutorSetup(tuple(sorted(conf.items())), engine.python,
                             f"executors run {engine.python} ([spark] python), with the "
                             "project installed there (hbase-migrate[executor])")
    archive = executor_archive()
    python = conf.setdefault(PYTHON_KEY, "python3")
    conf["spark.archives"] = ",".join(
        a for a in (conf.get("spark.archives"), archive.spark_archive) if a)
    path = conf.get("spark.executorEnv.PYTHONPATH")
    conf["spark.executorEnv.PYTHONPATH"] = f"{UNPACKED}:{path}" if path else UNPACKED
    project = dict(archive.versions).get("hbase-migrate", "?")
    return ExecutorSetup(tuple(sorted(conf.items())), python, (
        f"executors run their own {python} with hbase-migrate {project} and "
        f"{len(archive.versions) - 1} task-side packages shipped as spark.archives "
        f"{archive.path.name} ({'built now' if archive.built else 'from the cache'})"),
        archive)
