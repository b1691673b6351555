"""The Airflow DAG hbase_migrate_cutover of hbase-migrate,
declared in hbase_migrate_airflow.dags.cutover."""

from hbase_migrate_airflow.dags.cutover import dag

__all__ = ["dag"]
