"""The last task of the cutover DAG: the run's state is the gate's verdict.

The audit report is written go or no-go (``report`` runs on ``ALL_DONE``), so the report
alone would end a no-go run green. :class:`VerdictOperator` follows both the gate and the
report with the default trigger rule: after a no-go (or a failed report) it is
``upstream_failed`` and Airflow fails the run; after a go it logs the verdict and where the
report is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperator

if TYPE_CHECKING:
    from airflow.sdk import Context


class VerdictOperator(BaseOperator):
    """Ends a cutover run: green only on a go with its report written."""

    ui_color = "#f0ece3"

    def __init__(self, *, gate: str, report: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.gate, self.report = gate, report

    def execute(self, context: Context) -> dict[str, Any]:
        ti = context["ti"]
        gate = ti.xcom_pull(task_ids=self.gate) or {}
        report = (ti.xcom_pull(task_ids=self.report) or {}).get("path")
        self.log.info("cutover gate of migration %r: go; report: %s", gate.get("migration"),
                      report)
        return {"verdict": "go", "report": report}
