"""The crash harness's run as asked (:class:`CrashSpec`) and what it found
(:class:`CrashResult`): the kills' outcomes, each invariant's violations, the end's
verdicts, and the summary printed and kept as ``summary.json``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hbase_migrate.soak.crash_plan import CDC_STEPS, STEPS, Kill, kill_schedule, per_step
from minihbase.crash_dags import DagCrashResult

INVARIANTS = ("wal_files_missing", "steps_left_running", "duplicate_rows", "gate_go_while_broken",
              "reruns_failed")
CDC_INVARIANT = "cdc_edits_missing"  # with --cdc: every edit since T0 in the topic


@dataclass(frozen=True)
class CrashSpec:
    root: Path
    kills: int = 50
    seed: int = 1
    rate: float = 20.0  # linked-list writes per second
    preload: float = 8.0  # seconds the writer writes before the first step
    steps: tuple[str, ...] = STEPS
    cdc: bool = False  # the CDC stream killed too (on a Kafka broker; left out without one)
    kafka: str | None = None  # that broker's bootstrap address (None: start one)
    airflow: tuple[str, ...] = ()  # executors whose DAG tasks are killed after the commands
    stack: str = "embedded"  # or "real": a real HBase pair (minihbase.crash_clusters)

    def plan(self) -> list[Kill]:
        return kill_schedule(self.seed, self.kills, self.steps)


@dataclass
class CrashResult:
    spec: CrashSpec
    kills: list[dict[str, Any]] = field(default_factory=list)
    invariants: dict[str, list[str]] = field(
        default_factory=lambda: {name: [] for name in INVARIANTS})
    end: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    airflow: list[DagCrashResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (not self.problems and not any(self.invariants.values())
                and all(run.ok for run in self.airflow))

    def summary(self) -> dict[str, Any]:
        totals: dict[str, int] = {}
        cdc_kills = [k for k in self.kills if k["step"] in CDC_STEPS]
        for kill in self.kills:
            for key, value in kill.get("redo", {}).items():
                totals[key] = totals.get(key, 0) + value
        converge = [k["seconds_to_converge"] for k in self.kills]
        return {
            "seed": self.spec.seed, "kills": len(self.kills), "seconds": round(self.seconds, 1),
            "kills_per_step": per_step(self.spec.plan()[:len(self.kills)]),
            "kills_hit": sum(k["hit"] for k in self.kills),
            "redo_total": totals,
            "seconds_to_converge": {"max": max(converge, default=0.0),
                                    "mean": round(sum(converge) / len(converge), 2)
                                    if converge else 0.0},
            "invariants": {name: {"holds": not found, "violations": found[:20],
                                  "count": len(found)}
                           for name, found in self.invariants.items()},
            "end": self.end, "problems": self.problems, "ok": self.ok,
            "per_kill": self.kills,
            **({"cdc": {"kills": len(cdc_kills), "kills_hit": sum(k["hit"] for k in cdc_kills),
                        "messages_redone": [k["redo"].get("cdc_messages_redone", 0)
                                            for k in cdc_kills],
                        "seconds_to_converge": [k["seconds_to_converge"] for k in cdc_kills]}}
               if CDC_INVARIANT in self.invariants else {}),
            **({"airflow": [run.summary() for run in self.airflow]} if self.airflow else {}),
        }
