"""The ledgers the schedules look in besides the default ones.

A migration started from ``hbase_migrate_start`` with a ``ledger`` Param keeps its record
there; the scheduled runs (WAL watch, replay, backfill, validation), which name no
migration, find it only if they know that ledger. The start DAG's ``check`` remembers each
such ledger as an Airflow Variable (``hbase_migrate_ledger_<digest>``, one per URL, so two
starts never overwrite each other), which every worker reads; the form lets through only
URLs every run can open (:data:`~hbase_migrate_airflow.params.LEDGER`: no password in
them). Read and written only while a task runs.
"""

from __future__ import annotations

import hashlib

PREFIX = "hbase_migrate_ledger_"


def remember(url: str) -> None:
    """Make ``url`` one of the ledgers the schedules look in (idempotent)."""
    from airflow.sdk import Variable

    key = PREFIX + hashlib.sha256(url.encode()).hexdigest()[:16]
    if Variable.get(key, default=None) != url:
        Variable.set(key, url, description="a ledger of a migration started from "
                                           "hbase_migrate_start: the schedules look in it")


def remembered() -> list[str]:
    """Every ledger :func:`remember` was given, sorted."""
    from airflow.sdk import Variable

    return sorted(str(Variable.get(key)) for key in Variable.keys(prefix=PREFIX))
