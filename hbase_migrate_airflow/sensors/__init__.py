"""Sensors: deferrable waits for the source's WAL files."""

from hbase_migrate_airflow.sensors.wal import NewWalFilesSensor

__all__ = ["NewWalFilesSensor"]
