"""The CDC stream's operator: the WAL edits since the watermark (or ``start``) as Kafka
messages, brokers from a ``kafka`` connection (the Apache Kafka provider's type). Until one
is configured (``kafka_default`` absent, or no connection named and no ``[cdc]`` in the
migration) the task is skipped, saying so: streaming is opt-in."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hbase_migrate_airflow.operators.lifecycle import LifecycleOperator, ReplayOperator

if TYPE_CHECKING:
    from airflow.sdk import Context

    from hbase_migrate.audit.records import Provenance
    from hbase_migrate.config import MigrationSpec
    from hbase_migrate_airflow.operators.lifecycle import Outcome


class CdcOperator(LifecycleOperator):
    """A CDC run (:func:`hbase_migrate.lifecycle.cdc.cdc`): Params ``kafka_conn_id`` (the
    brokers and client settings; empty: the migration file's ``[cdc]``), ``cdc_topic``,
    ``row_image``, ``envelope`` and ``start``. A connection named other than the default
    that does not exist fails the task (a typo is not opt-out)."""

    step = "cdc"
    ui_color = "#f3e8d6"

    def call(self, spec: MigrationSpec, provenance: Provenance, params: dict[str, Any],
             context: Context) -> Outcome:
        from airflow.sdk.exceptions import AirflowNotFoundException

        from hbase_migrate.lifecycle.cdc import cdc
        from hbase_migrate.timeutil import parse_time
        from hbase_migrate_airflow.hooks.kafka import DEFAULT_CONN_ID, cdc_settings

        conn_id = params.get("kafka_conn_id")
        if conn_id:
            try:
                settings = cdc_settings(conn_id, spec.cdc, topic=params.get("cdc_topic"),
                                        row_image=params.get("row_image"),
                                        envelope=params.get("envelope"))
            except AirflowNotFoundException:
                if conn_id != DEFAULT_CONN_ID:
                    raise
                self.skip(f"no Kafka connection {conn_id!r} is configured, so migration "
                          f"{spec.name!r} streams nothing; create one of type 'kafka' "
                          "(extras: bootstrap.servers and client settings) to start the CDC "
                          "stream")
            spec = replace(spec, cdc=settings)
        elif spec.cdc is None:
            self.skip(f"migration {spec.name!r} has no [cdc] section and this run names no "
                      "Kafka connection (kafka_conn_id): nothing to stream")
        start = params.get("start")
        return cdc(spec, start=parse_time(start, name="start") if start else None,
                   provenance=provenance)

    failure = ReplayOperator.failure  # the same verdict as a replay's: a failed file, a gap
