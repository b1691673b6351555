"""Which engine a step's range work runs on, and why.

A master named by the caller (``--master``, an Airflow ``spark`` connection, spark-submit's
session) or in ``[spark] master`` is used as it is. With ``master = "auto"`` (the default)
the step's work is estimated before anything starts: the cells the planned key ranges held
when they were planned (kept in the ledger by the pass that planned them; for the copy, what
that pass copied on the way included). Under ``auto_cells`` the ranges run in-process, where
a Spark session would cost more to start than it saves; from there on they run on
``large_master`` when it is a cluster (``spark://``, ``yarn``, ``k8s://``: more hosts' cores).

``auto`` never picks a local Spark (``local[*]``, the default ``large_master``): its Python
workers share this machine's cores with the in-process engine's threads, so it only adds a
session's start-up and the tasks' serialisation. Measured on 2 cores beside both clusters
(issue 56): the copy of 2,000,000 cells took 106.8 s on ``local[*]`` against 15.3 s
in-process, the replay 95.0 s against 68.6 s, and 300,000 cells were slower on local Spark
too. A local master named outright (``master = "local[4]"``, ``--master``) still runs.
The choice and its reason go into the step's metrics and its output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hbase_migrate.config import AUTO, IN_PROCESS, EngineSettings
from hbase_migrate.errors import ConfigError
from hbase_migrate.spark.errors import is_local_master


@dataclass(frozen=True)
class EngineChoice:
    """The engine a step runs on (``master``: IN_PROCESS or a Spark master URL) and why;
    ``executors`` says what ran its tasks there (set once a Spark session started)."""

    master: str
    reason: str
    estimated_cells: int
    executors: str = ""
    yarn: dict[str, Any] | None = None  # YARN: the application, queue, containers' tasks

    def to_metrics(self) -> dict[str, Any]:
        found: dict[str, Any] = {"engine": self.master, "engine_reason": self.reason,
                                 "estimated_cells": self.estimated_cells}
        if self.executors:
            found["executors"] = self.executors
        return {**found, "yarn": self.yarn} if self.yarn else found


def only_in_process(asked: str | None, settings: EngineSettings) -> bool:
    """Whether work under ``asked`` (None: the configured master) runs in-process whatever
    its size: named so, or ``auto`` with a ``large_master`` on this machine."""
    master = asked or settings.spark_master
    return master == IN_PROCESS or (master == AUTO and is_local_master(settings.large_master))


def check_master(asked: str | None, settings: EngineSettings) -> None:
    """Raise ConfigError when the caller asks for a Spark master (``asked``) where the
    migration runs in-process only (``settings.in_process_only`` says why): each step
    checks this before it starts."""
    if settings.in_process_only and asked not in (None, AUTO, IN_PROCESS):
        raise ConfigError(f"Spark master {asked!r} (asked for by the caller): "
                          f"{settings.in_process_only}; run the step without one (no "
                          "--master, no spark_conn_id)")


def choose_engine(asked: str | None, settings: EngineSettings,
                  estimated_cells: int) -> EngineChoice:
    """The engine for work of ``estimated_cells`` cells: ``asked`` (the caller's master,
    None for the configured one) unless it is AUTO, then by ``settings.auto_cells`` and
    whether ``settings.large_master`` is a cluster (see :func:`check_master`)."""
    check_master(asked, settings)
    master = asked or settings.spark_master
    if master != AUTO:
        source = "asked for by the caller" if asked else "[spark] master"
        return EngineChoice(master, f"{source}: {master}", estimated_cells)
    if estimated_cells < settings.auto_cells:
        return EngineChoice(IN_PROCESS, f"auto: about {estimated_cells} cells, under "
                            f"auto_cells = {settings.auto_cells}: in-process",
                            estimated_cells)
    if is_local_master(settings.large_master):
        return EngineChoice(IN_PROCESS, f"auto: about {estimated_cells} cells, but "
                            f"large_master = {settings.large_master} is this machine, where "
                            "Spark only adds start-up: in-process", estimated_cells)
    return EngineChoice(settings.large_master, f"auto: about {estimated_cells} cells, "
                        f"auto_cells = {settings.auto_cells} or more: Spark on "
                        f"{settings.large_master}", estimated_cells)
