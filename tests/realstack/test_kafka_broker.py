"""The Apache Kafka broker of ``realstack/kafka``: it serves a real client, keeps its data
across a restart, and refuses what its settings say."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from realstack.kafka import KafkaBroker

pytestmark = pytest.mark.integration


def _consume(bootstrap: str, topic: str, count: int) -> list[tuple[bytes | None, bytes | None]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{uuid.uuid4().hex}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    got: list[tuple[bytes | None, bytes | None]] = []
    try:
        for _ in range(120):
            msg = consumer.poll(1.0)
            if msg is not None and msg.error() is None:
                got.append((msg.key(), msg.value()))
            if len(got) >= count:
                break
    finally:
        consumer.close()
    return got


def test_produce_consume_restart(kafka_broker: KafkaBroker) -> None:
    topic = f"t-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(60)
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap, "acks": "all",
                         "enable.idempotence": True})
    sent = [(f"k{i}".encode(), f"v{i}".encode()) for i in range(50)]
    for key, value in sent:
        producer.produce(topic, value, key)
    assert producer.flush(60) == 0
    kafka_broker.stop()
    kafka_broker.start()
    assert sorted(_consume(kafka_broker.bootstrap, topic, len(sent))) == sorted(sent)


def test_no_auto_creation(kafka_broker: KafkaBroker) -> None:
    """The session broker creates no topic on first use: a send to a missing one fails."""
    topic = f"missing-{uuid.uuid4().hex[:8]}"
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap,
                         "message.timeout.ms": 5000})
    errors: list[KafkaError | None] = []
    producer.produce(topic, b"v", on_delivery=lambda err, msg: errors.append(err))
    producer.flush(30)
    assert len(errors) == 1 and errors[0] is not None
    assert errors[0].code() in (KafkaError._MSG_TIMED_OUT, KafkaError.UNKNOWN_TOPIC_OR_PART)
    metadata = AdminClient({"bootstrap.servers": kafka_broker.bootstrap}).list_topics(timeout=30)
    assert topic not in metadata.topics
