"""What a shell needs so that Airflow's own command line (``airflow dags list``, ``airflow
backfill create``...) works on a stack :func:`hbase_migrate.airflow_stack.start_airflow`
started: the stack's ``AIRFLOW*`` and ``HBASE_MIGRATE_*`` variables (its home, configuration,
DAG and plugin folders, metadata database, Execution API) and the ``bin`` folder of the
Python that runs it on ``PATH``. The API server's signing secrets stay out.

The stack writes them to ``<folder>/airflow/shell.env`` (readable by its owner alone: on
a stack on PostgreSQL the database URL holds a password; removed when the stack stops);
``hbase-migrate airflow env`` prints them as ``export`` lines for ``eval``.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

SHELL_FILE = "shell.env"  # what a shell needs for Airflow's own CLI (mode 0600)
SECRETS = ("AIRFLOW__API_AUTH__JWT_SECRET", "AIRFLOW__API__SECRET_KEY")
PREFIXES = ("AIRFLOW", "HBASE_MIGRATE_")


def shell_variables(env: Mapping[str, str]) -> dict[str, str]:
    """The variables of a stack's environment ``env`` that a shell needs, sorted."""
    return {k: env[k] for k in sorted(env) if k.startswith(PREFIXES) and k not in SECRETS}


class Stack(Protocol):
    """What :func:`write_shell_env` reads of a stack (an ``airflow_stack.AirflowStack``)."""

    @property
    def home(self) -> Path: ...

    @property
    def env(self) -> dict[str, str]: ...


def write_shell_env(stack: Stack) -> Path:
    """Write the stack's shell variables and its ``bin`` folder to its ``shell.env``."""
    path = stack.home / SHELL_FILE
    path.unlink(missing_ok=True)
    bindir = stack.env["PATH"].split(os.pathsep, 1)[0]
    data = {"bin": bindir, "variables": shell_variables(stack.env)}
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as out:
        json.dump(data, out, indent=2)
    return path


def exports(path: Path) -> list[str]:
    """The ``export`` lines of a ``shell.env`` file: ``PATH`` first, then each variable."""
    data = json.loads(path.read_text())
    lines = [f'export PATH={shlex.quote(data["bin"])}"{os.pathsep}$PATH"']
    lines += [f"export {k}={shlex.quote(v)}" for k, v in data["variables"].items()]
    return lines
