"""The Spark master of a run, from a ``spark`` connection, and which master a run uses.

A connection keeps the master in its host as the Spark provider stores it (``local[2]``,
``spark://host``, ``yarn``, ``k8s://https://host``; the port is appended when given). A
connection made from a URI (``spark://host:7077``) keeps the scheme as its type and the
bare host: such a host is a standalone master, ``spark://host:port``.

Which master a run uses: the connection it names, over the migration's ``[spark] master``;
but the stock ``spark_default`` (the Params' default, ``local[2]`` in a fresh Airflow) never
overrides a master the migration names itself, only its ``auto``. The operators log the
choice (:func:`run_master`). A connection's extra may hold Spark settings, ``{"conf":
{"spark.executor.memory": "4g"}}``: they go over the migration's ``[spark] conf`` when the
run uses the connection's master.
"""

from __future__ import annotations

from dataclasses import replace

from airflow.sdk import BaseHook

from hbase_migrate.config import AUTO, MigrationSpec

STOCK = "spark_default"
_AS_IS = ("local", "yarn", AUTO, "in-process")


def spark_master(conn_id: str) -> str:
    """The master URL of the connection ``conn_id``."""
    from hbase_migrate.errors import ConfigError

    conn = BaseHook.get_connection(conn_id)
    host = (conn.host or "").strip()
    if not host:
        raise ConfigError(f"connection {conn_id!r}: no Spark master in its host (expected "
                          "local[*], spark://host, yarn or k8s://...)")
    master = f"{host}:{conn.port}" if conn.port else host
    if "://" in host or host.split("[", 1)[0] in _AS_IS:
        return master
    return f"spark://{master}"  # a URI's bare host: a standalone master


def connection_conf(conn_id: str) -> tuple[tuple[str, str], ...]:
    """The Spark settings in the connection's extra (``conf``), checked."""
    from hbase_migrate.errors import ConfigError

    conf = BaseHook.get_connection(conn_id).extra_dejson.get("conf", {})
    if not isinstance(conf, dict) or not all(
            isinstance(k, str) and k.startswith("spark.") and
            isinstance(v, (str, int, float, bool)) for k, v in conf.items()):
        raise ConfigError(f"connection {conn_id!r}: extra conf: expected an object of Spark "
                          f"settings ({{\"spark.executor.memory\": \"4g\"}}), got {conf!r}")
    return tuple((k, str(v).lower() if isinstance(v, bool) else str(v))
                 for k, v in sorted(conf.items()))


def with_connection_conf(conn_id: str | None, spec: MigrationSpec) -> MigrationSpec:
    """``spec`` with the connection's Spark settings when the run uses its master."""
    if not conn_id or run_master(conn_id, spec)[0] is None:
        return spec
    conf = connection_conf(conn_id)
    return replace(spec, engine=spec.engine.with_conf(conf)) if conf else spec


def run_master(conn_id: str | None, spec: MigrationSpec) -> tuple[str | None, str]:
    """The master a step of ``spec`` runs on for a run naming the connection ``conn_id``
    (None: the migration's ``[spark] master``) and the sentence that says why."""
    own = spec.engine.spark_master
    if not conn_id:
        return None, f"Spark master: {own}, the migration's [spark] master (no connection)"
    if conn_id == STOCK and spec.engine.in_process_only:
        return None, (f"Spark master: none, the stock connection {STOCK} is not used: "
                      f"{spec.engine.in_process_only}")
    master = spark_master(conn_id)
    if conn_id == STOCK and own != AUTO:
        return None, (f"Spark master: {own}, the migration's [spark] master (the stock "
                      f"connection {STOCK}, {master}, overrides only a migration's auto)")
    return master, (f"Spark master: {master}, from connection {conn_id!r} (over the "
                    f"migration's [spark] master {own})")
