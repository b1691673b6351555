"""What the DAG files share: default task arguments (retries, and the retry policy that
fails at once what no retry can mend), tags, the start date, the WAL Asset."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from airflow.sdk import Asset
from airflow.sdk.definitions.retry_policy import ExceptionRetryPolicy, RetryAction, RetryRule

TAGS = ["hbase-migrate"]
START_DATE = datetime(2026, 1, 1, tzinfo=UTC)
# Errors no retry can mend: a wrong configuration (a missing table or family, a refused
# step, a bad definition: ConfigError and its kinds) and an unknown connection. Outages
# (ServiceUnreachableError) and every other error keep the task's retries. By dotted path:
# nothing of the core is imported while a DAG is parsed.
UNMENDABLE = ExceptionRetryPolicy(rules=[RetryRule(
    exception=["hbase_migrate.errors.ConfigError",
               "airflow.sdk.exceptions.AirflowNotFoundException"],
    action=RetryAction.FAIL, reason="no retry can mend a configuration error")])
DEFAULT_ARGS: dict[str, Any] = {
    "owner": "hbase-migrate",
    "retries": 2,  # every step is idempotent: a retry moves on from what was acknowledged
    "retry_delay": timedelta(seconds=30),
    "retry_exponential_backoff": True,
    "retry_policy": UNMENDABLE,
}

# One event per batch of new WAL files; the event's extra names the migration (its Params)
# and the batch, so the replay run knows what it works on.
WAL_ASSET = Asset(name="hbase_migrate_wal", uri="hbase://source/tables/wal",
                  group="hbase-migrate")
