"""The migration a DAG run works on, built from the run's Params inside a task (or from
the Params that the WAL Asset events which triggered the run carry).

Either ``config`` names a migration file (TOML, as the command line takes), or the Params
name the migration, its clusters by ``hbase`` connection ids, its tables and its replay
settings; the ledger URL is ``ledger`` or the default under ``$HBASE_MIGRATE_STATE_DIR``.
A run that names no migration at all (a scheduled run of a DAG whose form has no defaults
for it) raises :class:`NoMigration`, which the tasks turn into a skip with its reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hbase_migrate_airflow.hooks.hbase import HBaseHook
from hbase_migrate_airflow.params import IDENTITY

if TYPE_CHECKING:
    from hbase_migrate.cluster.endpoints import ClusterEndpoints
    from hbase_migrate.config import MigrationSpec


# The Params that say which migration a run works on (what a WAL event carries).
MIGRATION_KEYS = ("migration", "source_conn_id", "target_conn_id", "tables", "roll_period",
                  "margin", "ledger", "config", "spark_conn_id")


class NoMigration(Exception):  # not an error: a run with nothing to do
    """The run's Params name no migration: nothing to do (the task is skipped)."""

    def __init__(self, dag_id: str) -> None:
        super().__init__(
            f"{dag_id}: this run names no migration (its Params {', '.join(IDENTITY)} are "
            "empty and no config file is given), so there is nothing to do; trigger it with "
            "the migration's Params, or let the WAL watch's events carry them")


def run_params(context: Mapping[str, Any]) -> dict[str, Any]:
    """``context["params"]``, overridden by the ``params`` of the triggering WAL events (an
    asset-triggered run has only the defaults of its own Params). Events of two different
    migrations in one run are refused: each needs its own replay."""
    params = dict(context["params"])
    carried = [dict(event.extra["params"])
               for events in (context.get("triggering_asset_events") or {}).values()
               for event in events if (event.extra or {}).get("params")]
    names = sorted({str(p.get("config") or p.get("migration")) for p in carried})
    if len(names) > 1:
        from hbase_migrate.errors import ConfigError

        raise ConfigError(f"WAL events of several migrations triggered one run "
                          f"({', '.join(names)}): trigger one replay per migration")
    if carried:
        params.update(carried[-1])
    return params


def migration_spec(params: Mapping[str, Any], dag_id: str = "this DAG") -> MigrationSpec:
    """The spec of a run's Params (see :mod:`hbase_migrate_airflow.params`); raises
    :class:`NoMigration` when they name none, a ``ConfigError`` when they name one only in
    part."""
    from hbase_migrate.config import MigrationSpec, load_config
    from hbase_migrate.errors import ConfigError

    if params.get("config"):
        return load_config(params["config"])
    missing = [k for k in IDENTITY if not params.get(k)]
    if len(missing) == len(IDENTITY):
        raise NoMigration(dag_id)
    if missing:
        raise ConfigError(f"{dag_id}: Params {', '.join(missing)} are empty; a migration needs "
                          f"all of {', '.join(IDENTITY)} (or a config file)")
    migration: dict[str, Any] = {"name": params["migration"]}
    if params.get("ledger"):
        migration["ledger"] = params["ledger"]
    tables = []
    for name in params["tables"]:
        source, _, target = str(name).partition("=")
        tables.append({"source": source, "target": target or source})
    return MigrationSpec.from_dict({
        "migration": migration,
        "source": _section(HBaseHook(params["source_conn_id"]).endpoints()),
        "target": _section(HBaseHook(params["target_conn_id"]).endpoints()),
        "tables": tables,
        "replay": {"roll_period": params["roll_period"], "margin": params["margin"]},
    })


def _section(endpoints: ClusterEndpoints) -> dict[str, Any]:
    from hbase_migrate.config import ENDPOINT_KEYS

    data = endpoints.to_json()
    return {k: data[k] for k in ENDPOINT_KEYS if data.get(k)}
