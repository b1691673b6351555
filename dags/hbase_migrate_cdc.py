"""The Airflow DAG hbase_migrate_cdc of hbase-migrate,
declared in hbase_migrate_airflow.dags.cdc."""

from hbase_migrate_airflow.dags.cdc import dag

__all__ = ["dag"]
