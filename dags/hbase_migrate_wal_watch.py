"""
### Watch the source's WAL files

A deferrable sensor lists the source's `WALs/` and `oldWALs/` (WebHDFS or a local HBase
root) until a file appears that the ledger has never listed, or until `wait_seconds` pass
(then the run is skipped). Each batch of new files becomes **one** event of the
`hbase_migrate_wal` Asset, whose extra carries the migration's Params and the batch: it
triggers `hbase_migrate_replay`.
"""

from datetime import timedelta
from typing import Any

from airflow.sdk import DAG, Param, task
from hbase_migrate_airflow.dag_defaults import DEFAULT_ARGS, START_DATE, TAGS, WAL_ASSET
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
):
    # One quick retry: a trigger that fires before the executor has reported the deferral
    # makes the scheduler fail the try (it finds the task queued again); the retry lists the
    # same new files at once.
    new_files = NewWalFilesSensor(task_id="new_wal_files", soft_fail=True, retries=1,
                                  retry_delay=timedelta(seconds=2),
                                  retry_exponential_backoff=False)

    @task(outlets=[WAL_ASSET])
    def announce(files: list[dict[str, Any]], **context: Any) -> dict[str, Any]:
        """One Asset event for the whole batch."""
        from hbase_migrate_airflow.migration import MIGRATION_KEYS

        carried = {k: context["params"].get(k) for k in MIGRATION_KEYS}
        batch = [f["path"] for f in files]
        context["outlet_events"][WAL_ASSET].extra = {"params": carried, "files": batch}
        return {"files": len(batch)}

    announce(new_files.output)  # type: ignore[arg-type]  # an XComArg, resolved at run time
