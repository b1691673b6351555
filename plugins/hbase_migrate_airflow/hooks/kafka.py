"""The ``kafka`` connection type (as Airflow's Kafka provider keeps it): the client settings in
the extras, ``bootstrap.servers`` among them (or the connection's host and port).
:meth:`KafkaHook.cdc_settings` turns it into the core's ``CdcSettings``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook

if TYPE_CHECKING:
    from hbase_migrate.config import CdcSettings


class KafkaHook(BaseHook):
    """Reads a ``kafka`` connection; no network call is made here."""

    conn_name_attr = "kafka_conn_id"
    default_conn_name = "kafka_default"
    conn_type = "kafka"
    hook_name = "Apache Kafka"

    def __init__(self, kafka_conn_id: str = default_conn_name, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.kafka_conn_id = kafka_conn_id

    def cdc_settings(self, base: CdcSettings | None, *, topic: str | None = None,
                     row_image: bool | None = None) -> CdcSettings:
        """``base`` (the migration's ``[cdc]``, or the defaults) with the connection's
        brokers and client settings, and ``topic`` and ``row_image`` when given."""
        from dataclasses import replace

        from hbase_migrate.config import FIXED_PRODUCER_KEYS, CdcSettings
        from hbase_migrate.errors import ConfigError

        conn = self.get_connection(self.kafka_conn_id)
        extra = {str(k): v for k, v in conn.extra_dejson.items()}
        servers = extra.pop("bootstrap.servers", None) or (
            f"{conn.host}:{conn.port}" if conn.host and conn.port else None)
        if not servers:
            raise ConfigError(f"connection {self.kafka_conn_id!r}: no brokers; give "
                              "bootstrap.servers in the extras (or host and port)")
        producer = tuple(sorted((k, str(v).lower() if isinstance(v, bool) else str(v))
                                for k, v in extra.items() if k not in FIXED_PRODUCER_KEYS))
        settings = replace(base, bootstrap=str(servers)) if base else CdcSettings(str(servers))
        return replace(settings, producer=(*settings.producer, *producer),
                       topic=topic or settings.topic,
                       row_image=settings.row_image if row_image is None else row_image)
