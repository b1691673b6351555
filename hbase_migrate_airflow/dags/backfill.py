"""
### Backfill: replay one hour of WAL edits

Each run replays the WAL edits written in its data interval
`[data_interval_start, data_interval_end)` for every migration in progress (copy started,
not cut over; `migrations` lists them from the ledgers), one mapped `replay_window` task
each, or for the one migration its Params name: files are selected by name time minus the
roll period and margin, then by their entries' write times, and the manifest (which file,
why in or out) is kept in the ledger step. A window that holds no WAL edit of a migration
ends skipped, saying so. Re-replay any past window with
`airflow backfill create --dag-id hbase_migrate_backfill --from-date ... --to-date ...`
(or `hbase-migrate backfill` without Airflow).
"""

from airflow.sdk import DAG, CronDataIntervalTimetable, Param

from hbase_migrate_airflow.dag_defaults import DEFAULT_ARGS, START_DATE, TAGS
from hbase_migrate_airflow.operators import ReplayOperator
from hbase_migrate_airflow.operators.migrations import per_migration
from hbase_migrate_airflow.params import params

with DAG(
    "hbase_migrate_backfill",
    schedule=CronDataIntervalTimetable("0 * * * *", timezone="UTC"),
    start_date=START_DATE,
    catchup=False,
    max_active_runs=3,
    doc_md=__doc__,
    tags=[*TAGS, "replay", "backfill"],
    default_args=DEFAULT_ARGS,
    params=params(
        gateway=Param("thrift2", type="string", enum=["thrift2", "thrift1"],
                      title="Write gateway"),
    ),
) as dag:
    per_migration(ReplayOperator, "replay_window", window="data_interval")
