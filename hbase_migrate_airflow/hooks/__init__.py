"""Hooks: the only code that reads an Airflow Connection, one module per connection type,
each named here once (every module is; ``tests/test_package_docs.py`` keeps the list true):
``hbase`` and ``bigtable``, this project's types; ``kafka``, the Apache Kafka provider's;
``spark``, the Spark provider's.
"""

from hbase_migrate_airflow.hooks.bigtable import BigtableHook
from hbase_migrate_airflow.hooks.hbase import HBaseHook
from hbase_migrate_airflow.hooks.kafka import cdc_settings
from hbase_migrate_airflow.hooks.spark import spark_master

__all__ = ["BigtableHook", "HBaseHook", "cdc_settings", "spark_master"]
