"""The crash harness's CDC stream (``soak-crash --cdc``): a real Apache Kafka broker
(realstack's, from Maven Central, as the CDC tests start it) or one given by its address, a
topic of the run's own, the ``[cdc]`` section of the migration file, and the topic read back
whole by a consumer that the stream's code does not share.

What the topic must hold is derived apart from the stream: the source's WAL files read with
the project's WAL reader (:func:`hbase_migrate.soak.crash_checks.wal_edits`), each row edit
of the migrated table written since T0 once, by (file, offset, row), with its sequence id.
"""

from __future__ import annotations

import json
import shutil
import time
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from hbase_migrate.errors import HBaseMigrateError

Say = Callable[[str], None]
PARTITIONS = 3
READ_TIMEOUT_S = 120.0
# The stream's producer, by its client.id, is held by the broker to a byte rate (a Kafka
# client quota) so that a kill lands mid-delivery on any machine, not only in start-up: a
# run's backlog of a few hundred kB then takes seconds.
CLIENT_ID = "soak-crash-cdc"
BYTES_PER_SECOND = 100_000


class CdcTopic:
    """The run's topic on ``bootstrap``: made once, read back to its end on demand."""

    def __init__(self, bootstrap: str, name: str | None = None) -> None:
        self.bootstrap = bootstrap
        self.name = name or f"soak-crash-{uuid.uuid4().hex[:8]}"

    def create(self) -> None:
        from confluent_kafka.admin import AdminClient
        from confluent_kafka.cimpl import NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        admin.create_topics([NewTopic(self.name, PARTITIONS, 1)])[self.name].result(60)

    def config_section(self) -> str:
        return (f'[cdc]\nbootstrap = "{self.bootstrap}"\ntopic = "{self.name}"\n'
                f'producer = {{ "client.id" = "{CLIENT_ID}" }}\n')

    def read(self, timeout: float = READ_TIMEOUT_S) -> list[dict[str, Any]]:
        """Every message of the topic (each value parsed), from each partition's start to
        the end it has now; partitions assigned, no group joined."""
        from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

        consumer = Consumer({"bootstrap.servers": self.bootstrap,
                             "group.id": f"soak-crash-{uuid.uuid4().hex}",
                             "enable.auto.commit": False, "auto.offset.reset": "earliest"})
        try:
            metadata = consumer.list_topics(self.name, timeout=30)
            partitions = sorted(metadata.topics[self.name].partitions)
            ends = {p: consumer.get_watermark_offsets(TopicPartition(self.name, p),
                                                      timeout=30)[1] for p in partitions}
            consumer.assign([TopicPartition(self.name, p, OFFSET_BEGINNING)
                             for p in partitions])
            seen = dict.fromkeys(partitions, 0)
            got: list[dict[str, Any]] = []
            deadline = time.monotonic() + timeout
            while any(seen[p] < ends[p] for p in partitions):
                if time.monotonic() > deadline:
                    raise HBaseMigrateError(f"topic {self.name}: read {seen} of {ends} "
                                            f"within {timeout:g} s")
                for msg in consumer.consume(1000, 0.5):
                    partition, offset, value = msg.partition(), msg.offset(), msg.value()
                    if (msg.error() is not None or partition is None or offset is None
                            or value is None or offset >= ends[partition]):
                        continue
                    got.append(json.loads(value))
                    seen[partition] = offset + 1
            return got
        finally:
            consumer.close()


def open_topic(stack: ExitStack, root: Path, bootstrap: str | None,
               say: Say) -> CdcTopic | None:
    """The run's topic on ``bootstrap``, or on a Kafka broker started in ``root/kafka``
    (stopped with ``stack``; the stream's producer held to a byte rate there: a given
    broker's quota is its owner's); None, with one line saying why, when none can be had."""
    try:
        if bootstrap is None:
            if shutil.which("mvn") is None:
                raise HBaseMigrateError("Maven ('mvn') is needed to fetch Apache Kafka from "
                                        "Maven Central")
            from realstack.kafka import KafkaBroker, KafkaSettings

            began = time.monotonic()
            broker = stack.enter_context(
                KafkaBroker(root / "kafka", KafkaSettings(auto_create_topics=False)))
            bootstrap = broker.bootstrap
            broker.limit_producer(CLIENT_ID, BYTES_PER_SECOND)
            say(f"Kafka broker on {bootstrap} in {time.monotonic() - began:.0f} s, the "
                f"stream held to {BYTES_PER_SECOND // 1000} kB/s")
        topic = CdcTopic(bootstrap)
        topic.create()
    except Exception as exc:  # any reason at all: the run goes on without the CDC step
        reason = " ".join(str(exc).split())[:300]
        say(f"soak-crash: the CDC step is left out: no Kafka broker ({type(exc).__name__}: "
            f"{reason})")
        return None
    return topic
