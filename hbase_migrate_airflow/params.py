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


# A ledger every later run can open, whichever task runs it: an absolute SQLite file or a
# PostgreSQL URL with no password in it (a URL travels in XCom and Asset events, masked).
LEDGER = r"^(sqlite:////[^?]*[^/?]|postgresql(\+psycopg)?://([^/:@]+@)?[^/:@]+(:[0-9]+)?/.+)$"
LEDGER_RULE = ("Must be a ledger every scheduled run can open: an absolute SQLite file "
               "(sqlite:////path/ledger.db) or a PostgreSQL URL without a password (give "
               "that by PGPASSWORD or ~/.pgpass on every worker, or set the whole URL as "
               "$HBASE_MIGRATE_LEDGER and leave this empty). Empty: $HBASE_MIGRATE_LEDGER, "
               "else <state dir>/<migration>/ledger.db.")
COMMENT: dict[str, Any] = {"$comment": LEDGER_RULE}  # a refusal's message quotes the schema


def migration_params(*, required: bool | tuple[str, ...]) -> dict[str, Param]:
    """What every DAG needs to know which migration it works on. ``required``: the
    identifying fields (or those named) must be filled in (a DAG only a person starts: the
    start DAG asks for all, the cutover DAG for the name alone, since the migration knows
    its clusters and tables); otherwise they may stay empty (a DAG Airflow also starts by
    itself, which must have valid defaults: a run that names no migration acts on every one
    in progress) and ``config`` may name a migration file instead. The settings (roll
    period, margin) default to the migration's own: a value given that differs changes
    them only with ``change_settings``."""
    asked = IDENTITY if required is True else (required or ())

    def identity(key: str, title: str, **schema: Any) -> Param:
        if key in asked:
            return Param(title=title, **schema)
        kind = schema.pop("type")
        return Param(None, type=["null", kind], title=title, **schema)

    found = {
        "migration": identity("migration", "Migration name", type="string", pattern=NAME,
                              description="Its record in the ledger."),
        "source_conn_id": identity("source_conn_id", "Source cluster (hbase connection id)",
                                   type="string", pattern=NAME),
        "target_conn_id": identity("target_conn_id", "Target cluster (hbase connection id)",
                                   type="string", pattern=NAME),
        "tables": identity("tables", "Tables", type="array", minItems=1, uniqueItems=True,
                           items={"type": "string", "pattern": TABLE},
                           description="source, or source=target; ns:table names allowed"),
        "roll_period": Param(None, type=OPTIONAL_STRING, pattern=DURATION,
                             title="WAL roll period",
                             description="The source's hbase.regionserver.logroll.period. "
                                         "Empty: the migration's (1h for a new one)."),
        "margin": Param(None, type=OPTIONAL_STRING, pattern=DURATION, title="Replay margin",
                        description="Empty: the migration's (5m for a new one)."),
        "change_settings": Param(False, type="boolean",
                                 title="Change the migration's settings",
                                 description="A roll period or margin above that differs "
                                             "from the migration's changes it only when "
                                             "this is on (the run's log and XCom say what "
                                             "changed); off, such a run is refused."),
        "ledger": Param(None, type=OPTIONAL_STRING, pattern=LEDGER, title="Ledger URL",
                        description=LEDGER_RULE, **COMMENT),
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


def params(*, required: bool | tuple[str, ...] = False, parts: bool = False,
           **more: Param) -> dict[str, Any]:
    """The migration's Params (see :func:`migration_params`), the Spark connection, with
    ``parts`` the parts of its copy and validations (:func:`parts_param`), and ``more``."""
    return {**migration_params(required=required), **spark_params(),
            **(parts_param() if parts else {}), **more}
