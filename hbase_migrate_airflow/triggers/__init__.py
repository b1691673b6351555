"""Triggers: async waits that run in the triggerer."""

from hbase_migrate_airflow.triggers.wal import NewWalFilesTrigger

__all__ = ["NewWalFilesTrigger"]
