"""What a lifecycle step returns: :class:`StepResult` (replay and the CDC stream return their
run's :class:`~hbase_migrate.replay.summary.RunSummary`). Callers decide on its typed fields
(``verdict``, ``passed``) and show or hand on its JSON form (``to_json``: the command's
``--json``, an Airflow task's XCom)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hbase_migrate.audit.records import NEGATIVE_VERDICTS, GateVerdict, MigrationState, Verdict


@dataclass(frozen=True)
class StepResult:
    """A step's outcome: the migration, the ledger step (None for the report, which records
    none), the migration's state after it, and the step's metrics (JSON-safe)."""

    migration: str
    step_id: int | None
    state: MigrationState | None
    metrics: Mapping[str, Any] = field(default_factory=dict)

    @property
    def verdict(self) -> Verdict | GateVerdict | None:
        """The step's verdict: a validation's match or mismatch, the gate's go or no-go."""
        value = str(self.metrics.get("verdict"))
        for kind in (Verdict, GateVerdict):
            if value in kind._value2member_map_:
                return kind(value)
        return None

    @property
    def passed(self) -> bool:
        """No negative verdict and no non-zero exit code."""
        return self.verdict not in NEGATIVE_VERDICTS and not self.metrics.get("exit_code")

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StepResult:
        """Back from :meth:`to_json` (e.g. an Airflow task's XCom)."""
        metrics = {k: v for k, v in data.items() if k not in ("migration", "step_id", "state")}
        state = data.get("state")
        return cls(str(data["migration"]), data.get("step_id"),
                   MigrationState(state) if state else None, metrics)

    def to_json(self) -> dict[str, Any]:
        """The JSON form: ``migration``, ``step_id``, ``state`` and the metrics."""
        head: dict[str, Any] = {"migration": self.migration}
        if self.step_id is not None:
            head.update(step_id=self.step_id,
                        state=self.state.value if self.state is not None else None)
        return {**head, **self.metrics}
