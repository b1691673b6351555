"""
### Replay new WAL files

Runs on every event of the `hbase_migrate_wal` Asset: `migrations` lists the migrations the
events carry (the watch announces each migration in progress), or, triggered by hand, the
one its Params name, else every one in progress. `plan` splits each one's catch-up into
parts, one per WAL chain of its source (a region server and its WAL group; chains a region
move ties together stay in one part), and `replay` is mapped over them all: the grid shows
one task per part, and a retry (or a clear of one map index) redoes only that part. Each
part applies every edit of its chains since the watermark that the target has not
acknowledged yet, on Spark (one task per WAL chain) when configured; the parts run one at a
time (they share the migration's lock). Then a validation compares source and target in live
mode (the source is still written), in parts as well: `plan_validation` splits the planned
key ranges into groups (the `parts` Param, default `[ranges] parts`), `validate_part` is
mapped over them (each records its ranges' digests), and `validate` judges the parts of each
migration as a whole with Great Expectations, once (one `validate` per migration):
verdicts recorded, ranges still differing listed, the run not failed for them; the next
replay's validation compares them again. One migration's failure does not hold back
another's work. Retries are safe: replay records only acknowledged
offsets.
"""

from airflow.sdk import DAG, Param, TriggerRule

from hbase_migrate_airflow.dag_defaults import DEFAULT_ARGS, START_DATE, TAGS, WAL_ASSET
from hbase_migrate_airflow.operators import ReplayOperator, ReplayPartsOperator
from hbase_migrate_airflow.operators.migrations import LABEL, MigrationsOperator
from hbase_migrate_airflow.operators.parts import validation_tasks
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
        parts=True,
        gateway=Param("thrift2", type="string", enum=["thrift2", "thrift1"],
                      title="Write gateway",
                      description="thrift1 loses delete fidelity (see the README)."),
    ),
) as dag:
    migrations = MigrationsOperator(task_id="migrations")
    parts = ReplayPartsOperator(task_id="plan", migrations=migrations.output)
    replayed = ReplayOperator.partial(task_id="replay", max_active_tis_per_dagrun=1,
                                      map_index_template=LABEL).expand_kwargs(parts.output)
    # validated also when no part was left to replay, or another migration's part failed
    plan, _ = validation_tasks(live=True, rounds=True, migrations=migrations.output,
                               trigger_rule=TriggerRule.ALL_DONE)
    replayed >> plan
