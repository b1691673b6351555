"""
### Cutover gate

Go only when every source WAL file is replayed (or skipped with a reason), no gap is open,
the replay lag is below `max_lag`, and a validation after the last catch-up matched on every
range. A no-go fails the run and lists the reasons; the verdict is a ledger step either way.
"""

from airflow.sdk import DAG, Param
from hbase_migrate_airflow.dag_defaults import DEFAULT_ARGS, START_DATE, TAGS
from hbase_migrate_airflow.operators import CutoverCheckOperator
from hbase_migrate_airflow.params import DURATION, params

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
        max_lag=Param("1m", type="string", pattern=DURATION, title="Largest replay lag"),
    ),
):
    CutoverCheckOperator(task_id="cutover_check")
