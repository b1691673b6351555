"""Which engine a step's range work runs on, and why.

A master named by the caller (``--master``, an Airflow ``spark`` connection, spark-submit's
session) or in ``[spark] master`` is used as it is. With ``master = "auto"`` (the default)
the step's work is estimated before anything starts: the cells the planned key ranges held
when they were planned (kept in the ledger by the pass that planned them; for the copy, what
that pass copied on the way included). Under ``auto_cells`` the ranges run in-process, where
a Spark session would cost more to start than it saves; from there on they run on
``large_master`` (``local[*]`` unless the config names a cluster). The choice and its reason
go into the step's metrics and its output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hbase_migrate.config import AUTO, IN_PROCESS, EngineSettings


@dataclass(frozen=True)
class EngineChoice:
    """The engine a step runs on (``master``: IN_PROCESS or a Spark master URL) and why."""

    master: str
    reason: str
    estimated_cells: int

    def to_metrics(self) -> dict[str, Any]:
        return {"engine": self.master, "engine_reason": self.reason,
                "estimated_cells": self.estimated_cells}


def choose_engine(asked: str | None, settings: EngineSettings,
                  estimated_cells: int) -> EngineChoice:
    """The engine for work of ``estimated_cells`` cells: ``asked`` (the caller's master,
    None for the configured one) unless it is AUTO, then by ``settings.auto_cells``."""
    master = asked or settings.spark_master
    if master != AUTO:
        source = "asked for by the caller" if asked else "[spark] master"
        return EngineChoice(master, f"{source}: {master}", estimated_cells)
    if estimated_cells < settings.auto_cells:
        return EngineChoice(IN_PROCESS, f"auto: about {estimated_cells} cells, under "
                            f"auto_cells = {settings.auto_cells}: in-process",
                            estimated_cells)
    return EngineChoice(settings.large_master, f"auto: about {estimated_cells} cells, "
                        f"auto_cells = {settings.auto_cells} or more: Spark on "
                        f"{settings.large_master}", estimated_cells)
