"""Hooks: the only code that reads an Airflow Connection."""

from hbase_migrate_airflow.hooks.hbase import HBaseHook
from hbase_migrate_airflow.hooks.spark import spark_master

__all__ = ["HBaseHook", "spark_master"]
