"""
### Validate the target

Compares every table of the migration, source against target, and records the verdict per
range in the ledger; with `repair`, ranges that still differ after the recompare are
rewritten from the source; with `compact` (the default) a repaired cell that a newer delete
marker on the target still hides is got past by a major compaction of its regions, without
it such cells are listed with the hbase shell command that fixes them. Runs daily and on
demand, for every migration in progress (`migrations` lists them from the ledgers) or the
one its Params name, in parts: `plan_validation` splits each one's planned key ranges into
groups (the `parts` Param, default `[ranges] parts`), `validate_part` is mapped over them
all (each checksums, recompares and repairs its own ranges and records their digests; a
retry redoes one), and `validate` (one per migration) judges each migration's parts as a
whole with Great Expectations, once (it fails on a mismatch, or when a part of its own
failed, naming its ranges; another migration's failure does not hold it back).
"""

from airflow.sdk import DAG, CronTriggerTimetable, Param

from hbase_migrate_airflow.dag_defaults import DEFAULT_ARGS, START_DATE, TAGS
from hbase_migrate_airflow.operators.migrations import MigrationsOperator
from hbase_migrate_airflow.operators.parts import validation_tasks
from hbase_migrate_airflow.params import params

with DAG(
    "hbase_migrate_validate",
    schedule=CronTriggerTimetable("0 2 * * *", timezone="UTC"),
    start_date=START_DATE,
    catchup=False,
    max_active_runs=1,
    doc_md=__doc__,
    tags=[*TAGS, "validate"],
    default_args=DEFAULT_ARGS,
    params=params(
        parts=True,
        repair=Param(False, type="boolean", title="Repair ranges that differ"),
        compact=Param(True, type="boolean",
                      title="Major-compact where delete markers hide repaired cells"),
        read_from=Param(None, type=["null", "string"], enum=[None, "live", "snapshot"],
                        title="Read from",
                        description="live: scans of both clusters; snapshot: HBase "
                                    "snapshots' files (no scan of either where both are "
                                    "real HBase); empty: the migration's [validate] from."),
    ),
) as dag:
    migrations = MigrationsOperator(task_id="migrations")
    validation_tasks(migrations=migrations.output)
