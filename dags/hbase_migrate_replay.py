"""The Airflow DAG hbase_migrate_replay of hbase-migrate,
declared in hbase_migrate_airflow.dags.replay."""

from hbase_migrate_airflow.dags.replay import dag

__all__ = ["dag"]
