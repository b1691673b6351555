"""
### Cutover gate

Go only when every source WAL file is replayed (or skipped with a reason), no gap is open,
the replay lag is below `max_lag`, and a validation after the last catch-up matched on every
range. A no-go fails the run and lists the reasons; the verdict is a ledger step either way.
Then, go or no-go, the audit report is written from the ledger (`report_path`, default
`report.html` in the migration's folder; its path is the `report` task's XCom).
"""

from airflow.sdk import DAG, Param, TriggerRule
from hbase_migrate_airflow.dag_defaults import DEFAULT_ARGS, START_DATE, TAGS
from hbase_migrate_airflow.operators import CutoverCheckOperator, ReportOperator
from hbase_migrate_airflow.params import DURATION, OPTIONAL_STRING, params

with DAG(
    "hbase_migrate_cutover",
    schedule=None,
    start_date=START_DATE,
    catchup=False,
    max_active_runs=1,
    doc_md=__doc__,
    tags=[*TAGS, "cutover"],
    default_args={**DEFAULT_ARGS, "retries": 0},  # a no-go is an answer, not a fault
    params=params(
        required=True,  # a person triggers it: which migration is asked, never assumed
        max_lag=Param("1m", type="string", pattern=DURATION, title="Largest replay lag"),
        report_path=Param(None, type=OPTIONAL_STRING, pattern=r"\.html?$",
                          title="Report file",
                          description="Where to write the audit report; empty: report.html "
                                      "in the migration's folder."),
    ),
):
    CutoverCheckOperator(task_id="cutover_check") \
        >> ReportOperator(task_id="report", trigger_rule=TriggerRule.ALL_DONE)
