"""Kafka clients for brokers that want SASL/GSSAPI (Kerberos), which the confluent-kafka
wheels' librdkafka cannot speak (it is built without Cyrus SASL).

:func:`wants_gssapi` tells from the ``[cdc] producer`` settings (librdkafka's names:
``sasl.mechanisms = "GSSAPI"``) whether the CDC stream needs them. :class:`GssapiProducer`
and :class:`GssapiAdmin` then stand in for confluent-kafka's ``Producer`` and
``AdminClient``, with exactly the calls :class:`~hbase_migrate.sinks.kafka.KafkaSink` makes,
on kafka-python (whose GSSAPI runs on the ``gssapi`` package, MIT Kerberos): the sink's
acknowledgements, retries, resend order and error messages stay one piece of code. Its
failures arrive as confluent-kafka's ``KafkaError`` codes (a broker's error code is the
same number in both clients).

librdkafka's settings are translated to kafka-python's (:data:`NAMES`); one without an
equivalent is refused, naming it. The login is the project's one Kerberos login
(:func:`hbase_migrate.cluster.auth.kerberos.login`): ``sasl.kerberos.principal`` and
``sasl.kerberos.keytab`` (a ticket cache from ``kinit`` without a keytab), renewed by MIT
Kerberos; a failed login is a one-line error naming broker and principal.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaError, KafkaException

from hbase_migrate.cluster.auth import kerberos
from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.errors import ConfigError
from hbase_migrate.sinks.refusals import KAFKA_PYTHON, ConnectionFailures, refused

log = logging.getLogger(__name__)

MECHANISM_KEYS = ("sasl.mechanisms", "sasl.mechanism")
LOGIN_KEYS = ("sasl.kerberos.principal", "sasl.kerberos.keytab")
IGNORED = ("logger", "delivery.report.only.error")
# librdkafka's name -> kafka-python's (and how its value is read)
NAMES: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "bootstrap.servers": ("bootstrap_servers", str),
    "client.id": ("client_id", str),
    "security.protocol": ("security_protocol", lambda v: str(v).upper()),
    "sasl.mechanisms": ("sasl_mechanism", lambda v: str(v).upper()),
    "sasl.mechanism": ("sasl_mechanism", lambda v: str(v).upper()),
    "sasl.kerberos.service.name": ("sasl_kerberos_service_name", str),
    "ssl.ca.location": ("ssl_cafile", str),
    "ssl.certificate.location": ("ssl_certfile", str),
    "ssl.key.location": ("ssl_keyfile", str),
    "ssl.key.password": ("ssl_password", str),
    "ssl.crl.location": ("ssl_crlfile", str),
    "ssl.endpoint.identification.algorithm": ("ssl_check_hostname",
                                              lambda v: str(v).lower() != "none"),
    "request.timeout.ms": ("request_timeout_ms", int),
    "retry.backoff.ms": ("retry_backoff_ms", int),
    "acks": ("acks", lambda v: v if str(v) == "all" else int(v)),
    "enable.idempotence": ("enable_idempotence", lambda v: str(v).lower() == "true"),
    "message.timeout.ms": ("delivery_timeout_ms", int),
    "linger.ms": ("linger_ms", int),
    "batch.size": ("batch_size", int),
    "message.max.bytes": ("max_request_size", int),
    "compression.type": ("compression_type", str),
    "compression.codec": ("compression_type", str),
}
# What an admin client takes of them: the connection and its security.
ADMIN_NAMES = ("bootstrap_servers", "client_id", "security_protocol", "sasl_mechanism",
               "sasl_kerberos_service_name", "ssl_cafile", "ssl_certfile", "ssl_keyfile",
               "ssl_password", "ssl_crlfile", "ssl_check_hostname", "request_timeout_ms")


def wants_gssapi(settings: Mapping[str, Any]) -> bool:
    """Whether librdkafka settings ask for SASL/GSSAPI."""
    return any(str(settings.get(k, "")).upper() == "GSSAPI" for k in MECHANISM_KEYS)


def client_config(settings: Mapping[str, Any]) -> dict[str, Any]:
    """kafka-python's settings for librdkafka's ``settings`` (ConfigError naming a setting
    that has no equivalent)."""
    config: dict[str, Any] = {}
    for key, value in settings.items():
        if key in IGNORED or key in LOGIN_KEYS:
            continue
        if key not in NAMES:
            raise ConfigError(
                f"[cdc] producer: {key!r} has no equivalent in the GSSAPI client (kafka-python) "
                f"used when sasl.mechanisms = \"GSSAPI\"; supported: {', '.join(sorted(NAMES))}, "
                f"{', '.join(LOGIN_KEYS)}")
        name, read = NAMES[key]
        try:
            config[name] = read(value)
        except ValueError:
            raise ConfigError(f"[cdc] producer: {key} = {value!r} is not a valid value") from None
    return config


def login(settings: Mapping[str, Any], krb5_conf: str | None) -> None:
    """The process's Kerberos login as ``sasl.kerberos.principal`` (from
    ``sasl.kerberos.keytab``, else the ticket cache): :class:`KerberosError` naming the
    broker and principal when it fails."""
    principal, keytab = (settings.get(k) for k in LOGIN_KEYS)
    security = ClusterSecurity(auth="kerberos", principal=str(principal) if principal else None,
                               keytab=str(keytab) if keytab else None, krb5_conf=krb5_conf)
    bootstrap = settings.get("bootstrap.servers", "")
    kerberos.login(security, "[cdc]", f"Kafka broker {bootstrap}")


def kafka_error(exc: BaseException) -> KafkaError:
    """confluent-kafka's ``KafkaError`` for a kafka-python failure."""
    from kafka import errors

    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    retriable = bool(getattr(exc, "retriable", False))
    if isinstance(exc, errors.BrokerResponseError) and exc.errno is not None:
        return KafkaError(exc.errno, text, retriable=retriable)
    if isinstance(exc, errors.KafkaTimeoutError):
        return KafkaError(KafkaError._MSG_TIMED_OUT, text, retriable=True)
    if isinstance(exc, (errors.KafkaConnectionError, OSError)):
        return KafkaError(KafkaError._TRANSPORT, text, retriable=True)
    return KafkaError(KafkaError._FAIL, text, retriable=retriable)


@dataclass(frozen=True)
class _Message:
    """What a delivery callback reads of a message."""

    _key: bytes | None
    _value: bytes | None

    def key(self) -> bytes | None:
        return self._key

    def value(self) -> bytes | None:
        return self._value


@dataclass(frozen=True)
class TopicMetadata:
    error: KafkaError | None = None


@dataclass(frozen=True)
class ClusterMetadata:
    topics: dict[str, TopicMetadata] = field(default_factory=dict)


@dataclass(frozen=True)
class ConfigEntry:
    value: str


class _Done:
    """A finished result (what confluent-kafka's futures give on ``result()``)."""

    def __init__(self, value: dict[str, ConfigEntry]) -> None:
        self._value = value

    def result(self, timeout: float | None = None) -> dict[str, ConfigEntry]:
        return self._value


class GssapiProducer:
    """confluent-kafka ``Producer``'s ``produce``, ``poll``, ``flush``, ``list_topics`` and
    ``close`` on kafka-python. Deliveries are reported from ``flush``, in the calling
    thread, as librdkafka reports them from ``poll``/``flush``."""

    def __init__(self, settings: Mapping[str, Any], krb5_conf: str | None = None,
                 metadata_timeout: float = 15.0) -> None:
        self._config = client_config(settings)
        self._config["max_block_ms"] = int(metadata_timeout * 1000)
        self._config["bootstrap_timeout_ms"] = int(metadata_timeout * 1000)
        delivery = self._config.get("delivery_timeout_ms")
        if delivery is not None and "request_timeout_ms" not in self._config:
            # kafka-python wants a request to time out before its delivery does
            linger = self._config.get("linger_ms", 0)
            self._config["request_timeout_ms"] = max(1, min(30_000, delivery - linger - 1))
        self._bootstrap = str(settings.get("bootstrap.servers", ""))
        login(settings, krb5_conf)
        self._client: Any = None
        self._sent: list[tuple[Any, bytes | None, bytes | None,
                               Callable[[KafkaError | None, Any], None] | None]] = []

    def _producer(self) -> Any:
        if self._client is None:
            from kafka import KafkaProducer
            from kafka.errors import KafkaConfigurationError
            from kafka.errors import KafkaError as ClientError

            try:
                self._client = KafkaProducer(**self._config)
            except KafkaConfigurationError as exc:
                raise ConfigError(f"[cdc] producer for Kafka broker {self._bootstrap}: "
                                  f"{exc}") from None
            except (ClientError, OSError) as exc:
                raise KafkaException(kafka_error(exc)) from None
        return self._client

    def produce(self, topic: str, value: bytes | None = None, key: bytes | None = None,
                partition: int = -1,
                on_delivery: Callable[[KafkaError | None, Any], None] | None = None
                ) -> None:
        """As confluent-kafka's (``partition`` -1: the partitioner picks by key)."""
        from kafka.errors import KafkaError as ClientError

        try:
            future = self._producer().send(topic, value=value, key=key,
                                           partition=partition if partition >= 0 else None)
        except ClientError as exc:
            raise KafkaException(kafka_error(exc)) from None
        self._sent.append((future, key, value, on_delivery))

    def poll(self, timeout: float = 0.0) -> int:
        """Nothing to serve: kafka-python's ``send`` waits for room itself."""
        return 0

    def flush(self, timeout: float | None = None) -> int:
        """Wait until every message produced is acknowledged or refused (reporting each
        refusal to its callback); the number still in flight after ``timeout``."""
        from kafka.errors import KafkaTimeoutError

        if self._client is not None:
            with contextlib.suppress(KafkaTimeoutError):  # what is left is counted below
                self._client.flush(timeout)
        pending = []
        for sent in self._sent:
            future, key, value, callback = sent
            if not future.is_done:
                pending.append(sent)
            elif future.failed() and callback is not None:
                callback(kafka_error(future.exception), _Message(key, value))
        self._sent = pending
        return len(pending)

    def list_topics(self, topic: str, timeout: float | None = None) -> ClusterMetadata:
        """The producer's own metadata request for ``topic`` (which makes the broker create
        it where it auto-creates topics): listed when it has partitions."""
        from kafka.errors import KafkaError as ClientError
        from kafka.errors import KafkaTimeoutError

        try:
            partitions = self._producer().partitions_for(topic)
        except KafkaTimeoutError:
            return ClusterMetadata()
        except ClientError as exc:
            raise KafkaException(kafka_error(exc)) from None
        return ClusterMetadata({topic: TopicMetadata()} if partitions else {})

    def close(self, timeout: float | None = None) -> None:
        if self._client is not None:
            self._client.close(timeout=timeout)
            self._client = None


class GssapiAdmin:
    """confluent-kafka ``AdminClient``'s ``list_topics`` and ``describe_configs`` (of topics)
    on kafka-python's admin client. A broker that cannot be reached because it refused the
    handshake (kafka-python logs why: a GSSAPI or SASL failure) is the error
    ``_AUTHENTICATION`` with that reason."""

    def __init__(self, settings: Mapping[str, Any], krb5_conf: str | None = None,
                 metadata_timeout: float = 15.0) -> None:
        config = client_config(settings)
        self._config = {k: v for k, v in config.items() if k in ADMIN_NAMES}
        self._config["bootstrap_timeout_ms"] = int(metadata_timeout * 1000)
        login(settings, krb5_conf)
        self._client: Any = None
        self._failures = ConnectionFailures(KAFKA_PYTHON)
        logging.getLogger("kafka.net").addHandler(self._failures)

    def _failed(self, exc: BaseException) -> KafkaException:
        why = self._failures.last
        if refused(why):
            return KafkaException(KafkaError(KafkaError._AUTHENTICATION, why))
        return KafkaException(kafka_error(exc))

    def _admin(self) -> Any:
        if self._client is None:
            from kafka.admin import KafkaAdminClient
            from kafka.errors import KafkaError as ClientError

            try:
                self._client = KafkaAdminClient(**self._config)
            except (ClientError, OSError) as exc:
                raise self._failed(exc) from None
        return self._client

    def list_topics(self, topic: str | None = None,
                    timeout: float | None = None) -> ClusterMetadata:
        from kafka.errors import KafkaError as ClientError

        try:
            found = self._admin().describe_topics([topic] if topic else None)
        except (ClientError, OSError) as exc:
            raise self._failed(exc) from None
        return ClusterMetadata({
            t["name"]: TopicMetadata(KafkaError(t["error_code"]) if t["error_code"] else None)
            for t in found})

    def describe_configs(self, resources: list[Any]) -> dict[Any, _Done]:
        """Each topic resource's settings (``resource.name``), all of them."""
        from kafka.admin import ConfigResource, ConfigResourceType
        from kafka.errors import KafkaError as ClientError

        out: dict[Any, _Done] = {}
        for resource in resources:
            try:
                found = self._admin().describe_configs(
                    [ConfigResource(ConfigResourceType.TOPIC, resource.name)],
                    config_filter="all")
            except (ClientError, OSError) as exc:
                raise self._failed(exc) from None
            entries = found.get("topic", {}).get(resource.name, {})
            out[resource] = _Done({k: ConfigEntry(str(v["value"])) for k, v in entries.items()})
        return out

    def close(self) -> None:
        logging.getLogger("kafka.net").removeHandler(self._failures)
        if self._client is not None:
            self._client.close()
            self._client = None
