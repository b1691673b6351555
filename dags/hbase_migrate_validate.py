"""The Airflow DAG hbase_migrate_validate of hbase-migrate,
declared in hbase_migrate_airflow.dags.validate."""

from hbase_migrate_airflow.dags.validate import dag

__all__ = ["dag"]
