"""The Airflow DAG hbase_migrate_wal_watch of hbase-migrate,
declared in hbase_migrate_airflow.dags.wal_watch."""

from hbase_migrate_airflow.dags.wal_watch import dag

__all__ = ["dag"]
