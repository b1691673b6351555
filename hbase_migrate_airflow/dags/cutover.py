"""
### Cutover gate

Go only when every source WAL file is replayed (or skipped with a reason), no gap is open,
the replay lag is below `max_lag`, and a validation after the last catch-up matched on every
range. The verdict is a ledger step either way. Then, go or no-go, the audit report is written
from the ledger (`report_path`, default `report.html` in the migration's folder; its path is
the `report` task's XCom). The run's state is the verdict: a no-go fails `cutover_check`
with the reasons and no retry, and the run ends failed (`verdict` is then
`upstream_failed`); a go ends green, `verdict` naming the report. A gate task whose process
died is retried.
"""

from airflow.sdk import DAG, Param, TriggerRule

from hbase_migrate_airflow.dag_defaults import DEFAULT_ARGS, START_DATE, TAGS
from hbase_migrate_airflow.operators import CutoverCheckOperator, ReportOperator
from hbase_migrate_airflow.operators.verdict import VerdictOperator
from hbase_migrate_airflow.params import DURATION, OPTIONAL_STRING, params

with DAG(
    "hbase_migrate_cutover",
    schedule=None,
    is_paused_upon_creation=False,  # no schedule: paused, a triggered run would wait queued
    start_date=START_DATE,
    catchup=False,
    max_active_runs=1,
    doc_md=__doc__,
    tags=[*TAGS, "cutover"],
    # a no-go is an answer and fails the gate at once; a gate whose process died (killed,
    # out of memory, its pod evicted) is retried as every other task
    default_args=DEFAULT_ARGS,
    params=params(
        # a person triggers it: which migration is asked, never assumed; its clusters,
        # tables and settings are the migration's own (the form may leave them empty)
        required=("migration",),
        max_lag=Param("1m", type="string", pattern=DURATION, title="Largest replay lag"),
        report_path=Param(None, type=OPTIONAL_STRING, pattern=r"\.html?$",
                          title="Report file",
                          description="Where to write the audit report; empty: report.html "
                                      "in the migration's folder."),
    ),
) as dag:
    gate = CutoverCheckOperator(task_id="cutover_check")
    report = ReportOperator(task_id="report", trigger_rule=TriggerRule.ALL_DONE)
    # the leaf: upstream_failed after a no-go, so the run fails (the report is still written)
    gate >> report
    [gate, report] >> VerdictOperator(task_id="verdict", gate="cutover_check",
                                      report="report")
