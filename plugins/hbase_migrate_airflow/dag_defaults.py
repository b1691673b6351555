"""What the DAG files share: default task arguments, tags, the start date, the WAL Asset."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from airflow.sdk import Asset

TAGS = ["hbase-migrate"]
START_DATE = datetime(2026, 1, 1, tzinfo=UTC)
DEFAULT_ARGS: dict[str, Any] = {
    "owner": "hbase-migrate",
    "retries": 2,  # every step is idempotent: a retry moves on from what was acknowledged
    "retry_delay": timedelta(seconds=30),
    "retry_exponential_backoff": True,
}

# One event per batch of new WAL files; the event's extra names the migration (its Params)
# and the batch, so the replay run knows what it works on.
WAL_ASSET = Asset(name="hbase_migrate_wal", uri="hbase://source/tables/wal",
                  group="hbase-migrate")
