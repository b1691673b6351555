"""The migrations a DAG run works on, as small references its tasks hand on through XCom.

A reference (*ref*) is a dict of the Params that name one migration:

* a run whose Params name a migration (``config``, or ``migration`` with its clusters by
  connection ids, ``hbase``, or ``bigtable`` for a Bigtable target, and its tables) acts on
  that one: its ref is those Params;
* a run the WAL Asset's events triggered acts on the migrations the events carry;
* any other run (a scheduled run, a backfill, a Trigger with an empty form) acts on every
  migration in progress (copy started, not cut over) in the ledgers
  (:func:`hbase_migrate.lifecycle.migrations.in_progress`; the ``ledger`` Param adds one):
  its refs are ``{"migration": name}`` (with ``"ledger"`` only when the migration's ledger
  is not its default one, :func:`hbase_migrate.config.default_ledger_url`) and the spec is
  the one the ledger recorded. With none in progress the task says so and is skipped
  (:class:`NoMigration`).

A ref travels through XCom and Asset events, so it never holds a ledger's password: a
ledger URL with one is carried masked (:func:`hbase_migrate.audit.engine.redact`), and a task
takes the real URL back from its run's ``ledger`` Param; a shared ledger with a password is
best given by environment (``$HBASE_MIGRATE_LEDGER`` on every worker: then it is the default
and no ref names it).

:func:`migration_spec` turns a ref (over the run's other Params) into the ``MigrationSpec``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook

from hbase_migrate_airflow.hooks.bigtable import BigtableHook
from hbase_migrate_airflow.hooks.hbase import HBaseHook
from hbase_migrate_airflow.ledger_guard import shared_ledger_only
from hbase_migrate_airflow.params import IDENTITY

if TYPE_CHECKING:
    from hbase_migrate.cluster.endpoints import ClusterEndpoints
    from hbase_migrate.config import MigrationSpec


# The Params that say which migration a run works on (what a WAL event carries).
MIGRATION_KEYS = ("migration", "source_conn_id", "target_conn_id", "tables", "roll_period",
                  "margin", "change_settings", "ledger", "config", "spark_conn_id")
# The ones a ref replaces as a whole (a ref by name must not mix with the run's own).
NAMING_KEYS = (*IDENTITY, "config", "ledger")


class NoMigration(Exception):  # not an error: a run with nothing to do
    """Nothing to act on: the task is skipped with this reason."""

    def __init__(self, dag_id: str, where: str = "the ledgers") -> None:
        super().__init__(
            f"{dag_id}: no migration in progress in {where} (none has started its copy, or "
            "every one is cut over), and this run names none: nothing to do; start one "
            "with hbase_migrate_start, or trigger this DAG with a migration's Params")


def named(params: Mapping[str, Any]) -> bool:
    """Whether the Params name a migration (a config file or an identifying field)."""
    return bool(params.get("config")) or any(params.get(k) for k in IDENTITY)


def ref_of(params: Mapping[str, Any]) -> dict[str, Any]:
    """The ref of the migration ``params`` name: their non-empty :data:`MIGRATION_KEYS`
    (the ledger's password masked)."""
    from hbase_migrate.audit.engine import redact

    ref = {k: params[k] for k in MIGRATION_KEYS if params.get(k) not in (None, "", [])}
    if ref.get("ledger"):
        ref["ledger"] = redact(ref["ledger"])
    return ref


def ref_name(ref: Mapping[str, Any]) -> str:
    """A ref's migration, as the grid labels its mapped tasks."""
    return str(ref.get("migration") or ref.get("config") or "?")


def event_refs(context: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The refs the triggering WAL Asset events carry (``{"migrations": [{"params": ref,
    "files": [...]}]}``, or one ``{"params": ref}``), each migration once."""
    found: dict[str, dict[str, Any]] = {}
    for events in (context.get("triggering_asset_events") or {}).values():
        for event in events:
            extra = event.extra or {}
            batches = extra.get("migrations") or ([extra] if extra.get("params") else [])
            for batch in batches:
                ref = dict(batch["params"])
                found[ref_name(ref)] = ref
    return list(found.values())


def run_params(context: Mapping[str, Any]) -> dict[str, Any]:
    """``context["params"]``, overridden by the ref of the triggering WAL events (an
    asset-triggered run has only the defaults of its own Params). Events of several
    migrations are refused here: a DAG that takes them lists them with
    :func:`run_migrations` and maps its work over them."""
    params = dict(context["params"])
    carried = event_refs(context)
    if len(carried) > 1:
        from hbase_migrate.errors import ConfigError

        raise ConfigError(f"WAL events of several migrations triggered one run "
                          f"({', '.join(sorted(map(ref_name, carried)))}): this task takes one")
    if carried:
        params.update(carried[0])
    return params


def run_migrations(context: Mapping[str, Any], dag_id: str) -> list[dict[str, Any]]:
    """The refs of the migrations a run acts on (see the module's docstring); raises
    :class:`NoMigration` when there is none."""
    carried = event_refs(context)
    if carried:
        return carried
    params = context["params"]
    if named(params):
        return [ref_of(params)]
    from hbase_migrate.lifecycle.migrations import in_progress
    from hbase_migrate_airflow.ledgers import remembered

    ledger = params.get("ledger")
    found = in_progress([*remembered(), *([ledger] if ledger else [])])
    if not found:
        from hbase_migrate.audit.engine import redact

        raise NoMigration(dag_id, redact(ledger) if ledger else "the ledgers")
    return [name_ref(spec.name, spec.ledger_url) for spec in found]


def name_ref(name: str, ledger_url: str) -> dict[str, Any]:
    """The ref of migration ``name`` by name, as its ledger recorded it: the ledger only
    when it is not the default one, masked when it holds a password."""
    from hbase_migrate.audit.engine import redact
    from hbase_migrate.config import default_ledger_url

    if ledger_url == default_ledger_url(name):
        return {"migration": name}
    return {"migration": name, "ledger": redact(ledger_url)}


def with_ref(params: Mapping[str, Any], ref: Mapping[str, Any] | None) -> dict[str, Any]:
    """The run's Params with the migration ``ref`` names in place of their own; a masked
    ledger URL of the ref is the run's own ``ledger`` Param when that is the same URL."""
    if not ref:
        return dict(params)
    found = {**params, **dict.fromkeys(NAMING_KEYS), **ref}
    own = params.get("ledger")
    if ref.get("ledger") and own and ref["ledger"] != own:
        from hbase_migrate.audit.engine import redact

        if redact(own) == ref["ledger"]:
            found["ledger"] = own
    return found


@shared_ledger_only  # a per-worker SQLite ledger is refused on a distributed executor
def migration_spec(params: Mapping[str, Any], dag_id: str = "this DAG") -> MigrationSpec:
    """The spec of a run's Params (see :mod:`hbase_migrate_airflow.params`) or of a ref:
    ``config``; or ``migration`` alone (and ``ledger``), the spec the ledger recorded; or
    every identifying field. Raises :class:`NoMigration` when they name none, a
    ``ConfigError`` when they name one only in part or the ledger has no such migration."""
    from hbase_migrate.config import MigrationSpec, load_config
    from hbase_migrate.errors import ConfigError

    if params.get("config"):  # a file the user wrote: its settings are the ones wanted
        return load_config(params["config"])
    if "***" in (params.get("ledger") or ""):
        raise ConfigError(f"{dag_id}: the ledger {params['ledger']} is named without its "
                          "password (a password never travels in XCom or an Asset event): "
                          "give that ledger by environment ($HBASE_MIGRATE_LEDGER on every "
                          "worker) or in this run's ledger Param")
    missing = [k for k in IDENTITY if not params.get(k)]
    if len(missing) == len(IDENTITY):
        raise NoMigration(dag_id)
    if missing == [k for k in IDENTITY if k != "migration"]:
        spec = _recorded(params["migration"], params.get("ledger") or None)
    elif missing:
        raise ConfigError(f"{dag_id}: Params {', '.join(missing)} are empty; a migration needs "
                          f"all of {', '.join(IDENTITY)}, the name alone of one in its "
                          "ledger, or a config file")
    else:
        spec = MigrationSpec.from_dict(_tree(params))
    return _settled(spec, params)


SETTINGS = {"roll_period": "replay.roll_period", "margin": "replay.margin"}


def _tree(params: Mapping[str, Any]) -> dict[str, Any]:
    """The config tree of a migration every identifying Param names."""
    migration: dict[str, Any] = {"name": params["migration"]}
    if params.get("ledger"):
        migration["ledger"] = params["ledger"]
    tables = []
    for name in params["tables"]:
        source, _, target = str(name).partition("=")
        tables.append({"source": source, "target": target or source})
    return {
        "migration": migration,
        "source": _section(HBaseHook(params["source_conn_id"]).endpoints()),
        "target": _target(params["target_conn_id"]),
        "tables": tables,
        "replay": {k: params[k] for k in SETTINGS if params.get(k)},
    }


def _recorded(name: str, ledger: str | None) -> MigrationSpec:
    """Migration ``name`` as its ledger recorded it: ``ledger``, else the default one, else
    a ledger a start run remembered (:mod:`hbase_migrate_airflow.ledgers`)."""
    from hbase_migrate.config import default_ledger_url
    from hbase_migrate.lifecycle.migrations import holding, recorded_spec
    from hbase_migrate_airflow.ledgers import remembered

    if ledger is None and holding(name, [default_ledger_url(name)]) is None:
        ledger = holding(name, remembered())
    return recorded_spec(name, ledger)


def _settled(spec: MigrationSpec, params: Mapping[str, Any]) -> MigrationSpec:
    """``spec`` with its migration's recorded settings; a setting Param given that differs
    changes them only with ``change_settings`` (the step's task says so), else is
    refused."""
    from hbase_migrate.lifecycle.settings import settled_spec

    given = {dotted: params[key] for key, dotted in SETTINGS.items() if params.get(key)}
    return settled_spec(spec, given, change=bool(params.get("change_settings")),
                        how_to_change="turn on change_settings (\"Change the migration's "
                                      "settings\") to change them").spec


def _target(conn_id: str) -> dict[str, Any]:
    """The ``[target]`` section of connection ``conn_id``: an HBase cluster (``hbase``) or
    a Bigtable instance (``bigtable``)."""
    if BaseHook.get_connection(conn_id).conn_type == BigtableHook.conn_type:
        return BigtableHook(conn_id).section()
    return _section(HBaseHook(conn_id).endpoints())


def _section(endpoints: ClusterEndpoints) -> dict[str, Any]:
    from hbase_migrate.config import ENDPOINT_KEYS

    data = endpoints.to_json()
    return {k: data[k] for k in ENDPOINT_KEYS if data.get(k)}
