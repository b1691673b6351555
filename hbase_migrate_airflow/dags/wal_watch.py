"""
### Watch the source's WAL files

For every migration in progress (copy started, not cut over; `migrations` lists them from
the ledgers), or the one the run's Params name, a deferrable sensor (`new_wal_files`, one
mapped task each) lists the source's `WALs/` and `oldWALs/` (WebHDFS or a local HBase root)
until a file appears that the ledger has never listed, or until `wait_seconds` pass (then
that task is skipped). The new files of the whole run become **one** event of the
`hbase_migrate_wal` Asset, whose extra carries each migration's ref and its batch: it
triggers `hbase_migrate_replay`. With no migration in progress `migrations` is skipped,
saying so.
"""

from datetime import timedelta
from typing import Any

from airflow.sdk import DAG, Param, TriggerRule, task

from hbase_migrate_airflow.dag_defaults import DEFAULT_ARGS, START_DATE, TAGS, WAL_ASSET
from hbase_migrate_airflow.operators.migrations import per_migration
from hbase_migrate_airflow.params import params
from hbase_migrate_airflow.sensors import NewWalFilesSensor

with DAG(
    "hbase_migrate_wal_watch",
    schedule=timedelta(minutes=10),
    start_date=START_DATE,
    catchup=False,
    max_active_runs=1,
    doc_md=__doc__,
    tags=[*TAGS, "wal"],
    default_args=DEFAULT_ARGS,
    params=params(
        wait_seconds=Param(540, type="integer", minimum=1, maximum=86_400,
                           title="Wait at most (s)"),
        poll_seconds=Param(5, type="integer", minimum=1, maximum=3_600,
                           title="List every (s)"),
    ),
) as dag:
    # One quick retry: a trigger that fires before the executor has reported the deferral
    # makes the scheduler fail the try (it finds the task queued again); the retry lists the
    # same new files at once.
    _, new_files = per_migration(NewWalFilesSensor, "new_wal_files", soft_fail=True,
                                 retries=1, retry_delay=timedelta(seconds=2),
                                 retry_exponential_backoff=False)

    # once every sensor is done: the migrations with new files (a failed one is red apart)
    @task(outlets=[WAL_ASSET], trigger_rule=TriggerRule.ALL_DONE_MIN_ONE_SUCCESS)
    def announce(found: list[dict[str, Any]], **context: Any) -> dict[str, Any]:
        """One Asset event for the whole run: each migration's ref and new files."""
        batches = [{"params": f["migration"], "files": [x["path"] for x in f["files"]]}
                   for f in found if f]
        context["outlet_events"][WAL_ASSET].extra = {"migrations": batches}
        return {"files": sum(len(b["files"]) for b in batches)}

    announce(new_files.output)
