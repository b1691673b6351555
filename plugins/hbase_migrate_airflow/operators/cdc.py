"""The CDC stream's operator: the WAL edits since the watermark (or ``start``) as Kafka
messages, brokers from a ``kafka`` connection."""

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
    ``row_image`` and ``start``."""

    step = "cdc"
    ui_color = "#f3e8d6"

    def call(self, spec: MigrationSpec, provenance: Provenance, params: dict[str, Any],
             context: Context) -> Outcome:
        from hbase_migrate.lifecycle.cdc import cdc
        from hbase_migrate.timeutil import parse_time
        from hbase_migrate_airflow.hooks.kafka import KafkaHook

        if params.get("kafka_conn_id"):
            settings = KafkaHook(params["kafka_conn_id"]).cdc_settings(
                spec.cdc, topic=params.get("cdc_topic"), row_image=params.get("row_image"))
            spec = replace(spec, cdc=settings)
        start = params.get("start")
        return cdc(spec, start=parse_time(start, name="start") if start else None,
                   provenance=provenance)

    failure = ReplayOperator.failure  # the same verdict as a replay's: a failed file, a gap
