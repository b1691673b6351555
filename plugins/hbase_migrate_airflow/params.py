"""The Params forms of the DAGs: typed, with enums, patterns and date-time formats, so that a
bad value is refused when a run is triggered, before any task starts. Building them is cheap
(no Connection, Variable or database access)."""

from __future__ import annotations

from typing import Any

from airflow.sdk import Param

NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
TABLE = r"^([A-Za-z0-9_][A-Za-z0-9_.-]*:)?[A-Za-z0-9_][A-Za-z0-9_.-]*" \
        r"(=([A-Za-z0-9_][A-Za-z0-9_.-]*:)?[A-Za-z0-9_][A-Za-z0-9_.-]*)?$"
DURATION = r"^[0-9]+(\.[0-9]+)?(ms|s|m|h|d)$"
OPTIONAL_STRING: list[str] = ["null", "string"]


# The fields that say which migration a run works on: never defaulted, so that a person
# pressing Trigger is asked for them instead of starting someone else's migration.
IDENTITY = ("migration", "source_conn_id", "target_conn_id", "tables")


def migration_params(*, required: bool) -> dict[str, Param]:
    """What every DAG needs to know which migration it works on. ``required``: the
    identifying fields must be filled in (a DAG only a person starts); otherwise they may
    stay empty (a DAG Airflow also starts by itself, which must have valid defaults: a run
    that names no migration is skipped, saying so) and ``config`` may name a migration file
    instead."""
    def identity(title: str, **schema: Any) -> Param:
        if required:
            return Param(title=title, **schema)
        kind = schema.pop("type")
        return Param(None, type=["null", kind], title=title, **schema)

    found = {
        "migration": identity("Migration name", type="string", pattern=NAME,
                              description="Its record in the ledger."),
        "source_conn_id": identity("Source cluster (hbase connection id)", type="string",
                                   pattern=NAME),
        "target_conn_id": identity("Target cluster (hbase connection id)", type="string",
                                   pattern=NAME),
        "tables": identity("Tables", type="array", minItems=1, uniqueItems=True,
                           items={"type": "string", "pattern": TABLE},
                           description="source, or source=target; ns:table names allowed"),
        "roll_period": Param("1h", type="string", pattern=DURATION,
                             title="WAL roll period",
                             description="The source's hbase.regionserver.logroll.period."),
        "margin": Param("5m", type="string", pattern=DURATION, title="Replay margin"),
        "ledger": Param(None, type=OPTIONAL_STRING,
                        pattern=r"^(sqlite|postgresql(\+psycopg)?)://",
                        title="Ledger URL",
                        description="Default: <state dir>/<migration>/ledger.db"),
    }
    if not required:
        found["config"] = Param(None, type=OPTIONAL_STRING, pattern=r"\.toml$",
                                title="Migration file",
                                description="A migration TOML file; when given, it replaces "
                                            "the fields above.")
    return found


def spark_params() -> dict[str, Param]:
    """Where the Spark work runs."""
    return {
        "spark_conn_id": Param("spark_default", type=OPTIONAL_STRING, pattern=NAME,
                               title="Spark connection",
                               description="Its host is the master URL (or auto); empty: "
                                           "the migration's [spark] master (auto by default)."),
    }


def parts_param() -> dict[str, Param]:
    """How many mapped tasks a copy or a validation is split into."""
    return {
        "parts": Param(None, type=["null", "integer"], minimum=1, title="Parts",
                       description="Groups of key ranges a copy or a validation is split "
                                   "into, one mapped task each (never more than the ranges); "
                                   "empty: the migration's [ranges] parts."),
    }


def params(*, required: bool = False, parts: bool = False, **more: Param) -> dict[str, Any]:
    """The migration's Params (see :func:`migration_params`), the Spark connection, with
    ``parts`` the parts of its copy and validations (:func:`parts_param`), and ``more``."""
    return {**migration_params(required=required), **spark_params(),
            **(parts_param() if parts else {}), **more}
