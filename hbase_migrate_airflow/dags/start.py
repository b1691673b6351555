"""
### Start a migration

Checks the connections, that both clusters answer and that the source tables exist (`check`:
a wrong connection id or a missing table fails at once, before anything is written; with a
Bigtable target it also runs the pre-flight report, every cell, row, key or timestamp Bigtable
cannot take listed in its log and XCom, and fails unless each is accepted by name), then
creates the target tables (the source's column families and split points), fixes the
watermark **T0** and copies every cell version written before it (on Spark when the Spark
engine is configured; or, with the `hbase` copy method, as an HBase snapshot whose files are
exported and cloned on the target), then validates the copy. The source stays live, so that
validation runs in live mode: it records every range's verdict and lists the ranges that
still differ (the writes since T0, until replay applies them) without failing the run.

The copy and the validation run in parts, groups of the planned key ranges (the `parts`
Param, default `[ranges] parts`, never more than the ranges), one mapped task each: the
grid shows each part, and a retry redoes that part alone.

* `plan_snapshot` fixes T0 and the key ranges once (recorded in the ledger); each
  `snapshot_part` copies its group at that same T0, skipping ranges already copied (a
  part retried hours later still copies at T0: replay starts from T0 less the margin, so
  the source must keep its WAL files since T0 until replay reads them); `snapshot` moves
  the migration to copied once every planned range is copied, and fails naming the missing
  parts otherwise. With the `hbase` method the plan lists no parts (`snapshot_part` is
  skipped) and `snapshot` makes the whole copy, one task (its files are exported in
  parallel on the range engine).
* `plan_validation`, `validate_part` (mapped: each records its ranges' digests) and
  `validate`, which judges the run as a whole with Great Expectations, once.

Each task is one lifecycle step recorded in the ledger with this run's ids; rerunning the
DAG changes nothing that is done. Next: unpause `hbase_migrate_wal_watch` (and
`hbase_migrate_backfill`, `hbase_migrate_validate`): their scheduled runs act on every
migration in progress, this one included, until its cutover.
"""

from airflow.sdk import DAG, Param

from hbase_migrate_airflow.dag_defaults import DEFAULT_ARGS, START_DATE, TAGS
from hbase_migrate_airflow.operators import CheckOperator, PrepareOperator
from hbase_migrate_airflow.operators.parts import snapshot_tasks, validation_tasks
from hbase_migrate_airflow.params import OPTIONAL_STRING, params

with DAG(
    "hbase_migrate_start",
    schedule=None,
    is_paused_upon_creation=False,  # no schedule: paused, a triggered run would wait queued
    start_date=START_DATE,
    catchup=False,
    max_active_runs=1,
    doc_md=__doc__,
    tags=[*TAGS, "snapshot"],
    default_args=DEFAULT_ARGS,
    params=params(
        parts=True,
        required=True,  # a person triggers it: which migration is asked, never assumed
        watermark=Param(None, type=OPTIONAL_STRING, format="date-time", title="Watermark T0",
                        description="RFC 3339 date-time; empty: now. Ignored once recorded."),
        snapshot_method=Param(None, type=OPTIONAL_STRING,
                              enum=[None, "auto", "scan", "hbase", "bulk"],
                              title="Copy method",
                              description="auto: hbase when both clusters allow the file "
                                          "copy, else bulk with [snapshot] auto_bulk where "
                                          "the target takes a bulk load, else scan (the "
                                          "plan's log says why); scan: range tasks over each "
                                          "cluster's client; hbase: an HBase snapshot "
                                          "exported file by file and cloned (real clusters); "
                                          "bulk: the scan copy's ranges bulk-loaded as "
                                          "HFiles. Empty: the config's [snapshot] method."),
    ),
) as dag:
    copy_plan, copied = snapshot_tasks()
    check_plan, _ = validation_tasks(live=True)
    # before the first write: connections, clusters, source tables (no retry mends those)
    CheckOperator(task_id="check") >> PrepareOperator(task_id="prepare") >> copy_plan
    copied >> check_plan
