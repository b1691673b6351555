"""No per-worker ledger: a task on a distributed executor refuses a SQLite ledger.

A SQLite ledger is a file on the host that runs the task. Under the LocalExecutor every task
of a migration runs on one host and finds the same file; under Celery, Kubernetes or any
other executor that spreads tasks over workers, each worker would write its own file, and a
step would not see the one before it ("run prepare first" right after prepare succeeded
elsewhere). :func:`shared_ledger_only` wraps the function that builds a task's spec and
refuses such a spec with a ``ConfigError`` (which the operators fail at once, no retry)
before the task writes anything. The executor is read when the task runs, never while a DAG
file is parsed: the task's own ``executor`` when it names one, else the first of
``[core] executor``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, ParamSpec

if TYPE_CHECKING:
    from hbase_migrate.config import MigrationSpec

# Executors that run every task on the scheduler's host (Airflow 3 has LocalExecutor; the
# other two are names older configurations still carry).
LOCAL_EXECUTORS = frozenset({"LocalExecutor", "SequentialExecutor", "DebugExecutor"})
P = ParamSpec("P")
SHARED_LEDGER_SETTINGS = ("HBASE_MIGRATE_LEDGER on every worker, the ledger Param or "
                          "[migration] ledger")


def class_name(entry: str) -> str:
    """The class an entry of ``[core] executor`` names (``CeleryExecutor``,
    ``alias:module.path.Class``, ``module.path.Class``)."""
    return entry.strip().rpartition(":")[2].rpartition(".")[2]


def configured_executor(configured: str, wanted: str | None = None) -> str:
    """The class name of the executor that runs a task: the entry of ``configured`` (the
    value of ``[core] executor``) whose alias, path or class is ``wanted`` (the task's own
    ``executor``), else the first, team-less one."""
    entries = [e.strip() for group in configured.split(";") for e in
               group.rpartition("=")[2].split(",") if e.strip()]
    if not entries:
        return "LocalExecutor"
    for entry in entries if wanted else ():
        alias, _, path = entry.rpartition(":")
        if wanted in (alias, path, class_name(entry)):
            return class_name(entry)
    return class_name(wanted or entries[0])


def refusal(spec: MigrationSpec, executor: str) -> str | None:
    """Why ``spec`` cannot run under ``executor`` (one line), or None when it can."""
    if executor in LOCAL_EXECUTORS or not spec.ledger_url.startswith("sqlite"):
        return None
    return (f"migration {spec.name!r}: its ledger {spec.ledger_url} is a SQLite file on this "
            f"worker, and under {executor} each worker would write its own file (a step "
            f"would not see the steps other workers recorded); set a shared ledger (a "
            f"PostgreSQL URL) in {SHARED_LEDGER_SETTINGS}")


def task_executor() -> str:
    """The class name of the executor that runs the current task."""
    from airflow.sdk import get_current_context
    from airflow.sdk.configuration import conf

    try:
        wanted = get_current_context()["ti"].task.executor
    except (RuntimeError, KeyError, AttributeError):  # no task context: the default one
        wanted = None
    return configured_executor(str(conf.get("core", "executor")), wanted)


def check_shared_ledger(spec: MigrationSpec) -> MigrationSpec:
    """``spec``, or a ``ConfigError`` when its ledger is a file on a distributed executor's
    worker (see :func:`refusal`)."""
    from hbase_migrate.errors import ConfigError

    reason = refusal(spec, task_executor())
    if reason is not None:
        raise ConfigError(reason)
    return spec


def shared_ledger_only(build: Callable[P, MigrationSpec]) -> Callable[P, MigrationSpec]:
    """``build`` (a function returning a task's spec), its spec checked by
    :func:`check_shared_ledger`."""

    @functools.wraps(build)
    def checked(*args: P.args, **kwargs: P.kwargs) -> MigrationSpec:
        return check_shared_ledger(build(*args, **kwargs))

    return checked

