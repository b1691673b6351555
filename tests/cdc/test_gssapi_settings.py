"""librdkafka's settings as the GSSAPI client (kafka-python) takes them, and its failures as
confluent-kafka's error codes (which the sink decides on)."""

from __future__ import annotations

import re

import pytest
from confluent_kafka import KafkaError
from kafka import errors

from hbase_migrate.errors import ConfigError
from hbase_migrate.sinks.gssapi import client_config, kafka_error, wants_gssapi

GSSAPI = {"bootstrap.servers": "b1:9093,b2:9093", "security.protocol": "sasl_ssl",
          "sasl.mechanisms": "gssapi", "sasl.kerberos.service.name": "kafka",
          "sasl.kerberos.principal": "cdc@R", "sasl.kerberos.keytab": "/k/cdc.keytab",
          "ssl.ca.location": "/ca.pem", "ssl.endpoint.identification.algorithm": "none",
          "enable.idempotence": True, "acks": "all", "message.timeout.ms": 30000,
          "linger.ms": "5", "logger": object()}


def test_gssapi_is_asked_by_either_mechanism_key() -> None:
    assert wants_gssapi({"sasl.mechanisms": "GSSAPI"})
    assert wants_gssapi({"sasl.mechanism": "gssapi"})
    assert not wants_gssapi({"sasl.mechanisms": "SCRAM-SHA-512"})
    assert not wants_gssapi({})


def test_settings_translated_and_the_login_keys_left_to_the_login() -> None:
    assert client_config(GSSAPI) == {
        "bootstrap_servers": "b1:9093,b2:9093", "security_protocol": "SASL_SSL",
        "sasl_mechanism": "GSSAPI", "sasl_kerberos_service_name": "kafka",
        "ssl_cafile": "/ca.pem", "ssl_check_hostname": False, "enable_idempotence": True,
        "acks": "all", "delivery_timeout_ms": 30000, "linger_ms": 5}


def test_a_setting_without_equivalent_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match=re.escape("'sasl.kerberos.kinit.cmd' has no equivalent")):
        client_config({**GSSAPI, "sasl.kerberos.kinit.cmd": "kinit -k"})
    with pytest.raises(ConfigError, match=re.escape("linger.ms = 'soon' is not a valid value")):
        client_config({**GSSAPI, "linger.ms": "soon"})


def test_failures_become_the_codes_the_sink_decides_on() -> None:
    too_large = kafka_error(errors.MessageSizeTooLargeError("big"))
    assert too_large.code() == KafkaError.MSG_SIZE_TOO_LARGE and not too_large.retriable()
    refused = kafka_error(errors.SaslAuthenticationFailedError("bad ticket"))
    assert refused.code() == KafkaError.SASL_AUTHENTICATION_FAILED
    assert "bad ticket" in refused.str()
    timed_out = kafka_error(errors.KafkaTimeoutError("no ack"))
    assert timed_out.code() == KafkaError._MSG_TIMED_OUT and timed_out.retriable()
    assert kafka_error(errors.KafkaConnectionError("reset")).code() == KafkaError._TRANSPORT
    leader = kafka_error(errors.NotLeaderForPartitionError())
    assert leader.code() == KafkaError.NOT_LEADER_FOR_PARTITION and leader.retriable()
