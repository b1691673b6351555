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


def migration_params() -> dict[str, Param]:
    """What every DAG needs to know which migration it works on."""
    return {
        "migration": Param("orders", type="string", pattern=NAME, title="Migration name",
                           description="Its record in the ledger."),
        "source_conn_id": Param("hbase_source", type="string", pattern=NAME,
                                title="Source cluster (hbase connection id)"),
        "target_conn_id": Param("hbase_target", type="string", pattern=NAME,
                                title="Target cluster (hbase connection id)"),
        "tables": Param(["orders"], type="array", minItems=1, uniqueItems=True,
                        items={"type": "string", "pattern": TABLE},
                        title="Tables", description="source, or source=target; ns:table "
                                                    "names allowed"),
        "roll_period": Param("1h", type="string", pattern=DURATION,
                             title="WAL roll period",
                             description="The source's hbase.regionserver.logroll.period."),
        "margin": Param("5m", type="string", pattern=DURATION, title="Replay margin"),
        "ledger": Param(None, type=OPTIONAL_STRING,
                        pattern=r"^(sqlite|postgresql(\+psycopg)?)://",
                        title="Ledger URL",
                        description="Default: <state dir>/<migration>/ledger.db"),
        "config": Param(None, type=OPTIONAL_STRING, pattern=r"\.toml$",
                        title="Migration file",
                        description="A migration TOML file; when given, it replaces the "
                                    "fields above."),
    }


def spark_params() -> dict[str, Param]:
    """Where the Spark work runs."""
    return {
        "spark_conn_id": Param("spark_default", type=OPTIONAL_STRING, pattern=NAME,
                               title="Spark connection",
                               description="Its host is the master URL (or auto); empty: "
                                           "the migration's [spark] master (auto by default)."),
    }


def params(**more: Param) -> dict[str, Any]:
    """The migration's Params, the Spark connection, and ``more``."""
    return {**migration_params(), **spark_params(), **more}
