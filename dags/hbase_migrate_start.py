"""The Airflow DAG hbase_migrate_start of hbase-migrate,
declared in hbase_migrate_airflow.dags.start."""

from hbase_migrate_airflow.dags.start import dag

__all__ = ["dag"]
