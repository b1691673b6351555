"""
### Stream new WAL edits to Kafka (CDC)

Runs on every event of the `hbase_migrate_wal` Asset, beside the replay, for each migration
the events carry (one mapped `cdc` task each; by hand: the one its Params name, else every
one in progress): the source's WAL edits since the watermark (or `start`) become one JSON
message per row mutation in Kafka (the native format, or a Debezium-style change event with
`envelope`), keyed by table and row, with offsets recorded in the ledger (apart from
replay's) only once the broker acknowledged them. The brokers and client settings come from
the `kafka` connection (the type of Airflow's Kafka provider; without `kafka_default` the
run is skipped, saying so); `cdc_topic` is one topic, or one per table with `{table}`.
Delivery is at least once: consumers de-duplicate on (file, offset, row). Retries are safe.
"""

from airflow.sdk import DAG, Param

from hbase_migrate_airflow.dag_defaults import DEFAULT_ARGS, START_DATE, TAGS, WAL_ASSET
from hbase_migrate_airflow.operators import CdcOperator
from hbase_migrate_airflow.operators.migrations import per_migration
from hbase_migrate_airflow.params import NAME, OPTIONAL_STRING, params

with DAG(
    "hbase_migrate_cdc",
    schedule=[WAL_ASSET],
    start_date=START_DATE,
    catchup=False,
    max_active_runs=1,
    is_paused_upon_creation=False,  # a paused consumer would not even be queued
    doc_md=__doc__,
    tags=[*TAGS, "cdc", "kafka"],
    default_args=DEFAULT_ARGS,
    params=params(
        kafka_conn_id=Param("kafka_default", type=OPTIONAL_STRING, pattern=NAME,
                            title="Kafka connection",
                            description="Its extras hold bootstrap.servers and client "
                                        "settings; empty: the migration file's [cdc]."),
        cdc_topic=Param(None, type=OPTIONAL_STRING, pattern=r"^[A-Za-z0-9._{}-]+$",
                        title="Topic", description="One topic, or one per table with "
                                                   "{table}; empty: the configured one."),
        row_image=Param(False, type="boolean", title="Row images",
                        description="Apply each edit to the target and attach the row "
                                    "read back (the target needs Thrift2)."),
        envelope=Param(None, type=OPTIONAL_STRING, enum=[None, "native", "debezium"],
                       title="Message format",
                       description="native, or debezium (before/after/op/source/ts_ms); "
                                   "empty: the migration's [cdc] envelope (native)."),
        start=Param(None, type=OPTIONAL_STRING, format="date-time", title="Start",
                    description="Stream edits written at or after this; empty: the "
                                "watermark less the margin."),
    ),
) as dag:
    per_migration(CdcOperator, "cdc")
