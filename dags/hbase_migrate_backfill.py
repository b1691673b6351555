"""The Airflow DAG hbase_migrate_backfill of hbase-migrate,
declared in hbase_migrate_airflow.dags.backfill."""

from hbase_migrate_airflow.dags.backfill import dag

__all__ = ["dag"]
