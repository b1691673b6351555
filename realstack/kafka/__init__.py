"""Apache Kafka (KRaft mode) from Maven Central: :class:`KafkaBroker` formats its storage
and runs one combined broker + controller on free loopback ports."""

from realstack.kafka.broker import KafkaBroker, KafkaSettings

__all__ = ["KafkaBroker", "KafkaSettings"]
