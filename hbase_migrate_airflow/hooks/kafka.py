"""The CDC stream's brokers from a ``kafka`` connection, the type Airflow's Kafka provider
(``apache-airflow-providers-apache-kafka``) defines: its extras are the client's settings,
``bootstrap.servers`` among them. :func:`cdc_settings` turns one into the core's
``CdcSettings``; the connection is read through the provider's own hook."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hbase_migrate.config import CdcSettings

DEFAULT_CONN_ID = "kafka_default"


def cdc_settings(conn_id: str, base: CdcSettings | None, *, topic: str | None = None,
                 row_image: bool | None = None, envelope: str | None = None) -> CdcSettings:
    """``base`` (the migration's ``[cdc]``, or the defaults) with the brokers and client
    settings of the ``kafka`` connection ``conn_id``, and ``topic``, ``row_image`` and
    ``envelope`` when given. A missing connection raises Airflow's
    ``AirflowNotFoundException``."""
    from airflow.providers.apache.kafka.hooks.base import KafkaBaseHook

    from hbase_migrate.config import FIXED_PRODUCER_KEYS, CdcSettings
    from hbase_migrate.errors import ConfigError

    conn = KafkaBaseHook.get_connection(conn_id)
    if conn.conn_type != "kafka":
        raise ConfigError(f"connection {conn_id!r} is of type {conn.conn_type!r}; the CDC "
                          "stream needs a 'kafka' connection (Apache Kafka provider)")
    extra = {str(k): v for k, v in conn.extra_dejson.items()}
    servers = extra.pop("bootstrap.servers", None)
    if not servers:
        raise ConfigError(f"connection {conn_id!r}: no brokers; give bootstrap.servers in "
                          "its extras (the Kafka provider's config dict)")
    producer = tuple(sorted((k, str(v).lower() if isinstance(v, bool) else str(v))
                            for k, v in extra.items() if k not in FIXED_PRODUCER_KEYS))
    settings = replace(base, bootstrap=str(servers)) if base else CdcSettings(str(servers))
    return replace(settings, producer=(*settings.producer, *producer),
                   topic=topic or settings.topic,
                   row_image=settings.row_image if row_image is None else row_image,
                   envelope=envelope or settings.envelope)
