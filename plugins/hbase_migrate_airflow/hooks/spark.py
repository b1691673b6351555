"""The Spark master URL from a ``spark`` connection, as the Spark provider stores it: the
host is the master (``local[2]``, ``spark://host``, ``yarn``, ``k8s://https://host``), the
port is appended when given."""

from __future__ import annotations

from airflow.sdk import BaseHook


def spark_master(conn_id: str) -> str:
    """The master URL of the connection ``conn_id``."""
    from hbase_migrate.errors import ConfigError

    conn = BaseHook.get_connection(conn_id)
    host = (conn.host or "").strip()
    if not host:
        raise ConfigError(f"connection {conn_id!r}: no Spark master in its host (expected "
                          "local[*], spark://host, yarn or k8s://...)")
    return f"{host}:{conn.port}" if conn.port else host
