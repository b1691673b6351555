"""
### Replay new WAL files

Runs on every event of the `hbase_migrate_wal` Asset: the migration comes from the event
(its Params), and a catch-up replay on Spark (one task per WAL file) applies every edit since
the watermark that the target has not acknowledged yet (the event's batch included), then a
validation compares source and target in live mode (the source is still written): verdicts
recorded, ranges still differing listed, the run not failed for them; the next replay's
validation compares them again. Retries are safe: replay records only acknowledged offsets.
"""

from airflow.sdk import DAG, Param
from hbase_migrate_airflow.dag_defaults import DEFAULT_ARGS, START_DATE, TAGS, WAL_ASSET
from hbase_migrate_airflow.operators import ReplayOperator, ValidateOperator
from hbase_migrate_airflow.params import params

with DAG(
    "hbase_migrate_replay",
    schedule=[WAL_ASSET],
    start_date=START_DATE,
    catchup=False,
    max_active_runs=1,
    is_paused_upon_creation=False,  # a paused consumer would not even be queued
    doc_md=__doc__,
    tags=[*TAGS, "replay"],
    default_args=DEFAULT_ARGS,
    params=params(
        gateway=Param("thrift2", type="string", enum=["thrift2", "thrift1"],
                      title="Write gateway",
                      description="thrift1 loses delete fidelity (see the README)."),
    ),
):
    ReplayOperator(task_id="replay") >> ValidateOperator(task_id="validate", live=True)
