"""Whether an error is an outage a run waits out is decided by its ``kind`` alone (issue 59):
the Kafka errors that stop a run but that waiting does not mend say ``Kind.NEVER``, a WAL
storage that did not answer says ``Kind.OUTAGE``, and no other flag is read."""

from __future__ import annotations

from hbase_migrate.cluster.errors import GatewayUnreachableError
from hbase_migrate.errors import Kind, WalSourceError
from hbase_migrate.replay.apply import unavailable
from hbase_migrate.replay.outage import Outage, outage_of
from hbase_migrate.rpc.errors import RpcConnectionError
from hbase_migrate.sinks.kafka import KafkaRefusedError, KafkaTopicError, KafkaUnavailableError

BROKER = "b1:9092"
RS = "rs1:16020"


def test_the_kafka_errors_waiting_does_not_mend_are_no_outage() -> None:
    topic = KafkaTopicError("topic 'orders' does not exist on b1:9092", endpoint=BROKER)
    refused = KafkaRefusedError("b1:9092 refused this client (SASL)", endpoint=BROKER)
    assert (topic.kind, refused.kind) == (Kind.NEVER, Kind.NEVER)
    assert outage_of(topic) is None and outage_of(refused) is None

    down = KafkaUnavailableError("b1:9092 unreachable (connection refused)", endpoint=BROKER)
    assert down.kind is Kind.OUTAGE
    assert outage_of(down) == Outage("Kafka broker", BROKER,
                                     "b1:9092 unreachable (connection refused)")


def test_an_outage_is_found_through_the_causes() -> None:
    try:
        try:
            raise KafkaUnavailableError("b1:9092 unreachable", endpoint=BROKER)
        except KafkaUnavailableError as exc:
            raise RuntimeError("the batch of file w.1 was not sent") from exc
    except RuntimeError as outer:
        found = outage_of(outer)
    assert found == Outage("Kafka broker", BROKER, "the batch of file w.1 was not sent")


def test_a_wal_storage_that_did_not_answer_is_an_outage_one_that_refused_is_not() -> None:
    lost = WalSourceError("/hbase/WALs/rs1/w.1", "OPEN: connection refused",
                          unreachable=True, endpoint="http://nn1:9870")
    refused = WalSourceError("/hbase/WALs/rs1/w.1", "OPEN: 403 Forbidden",
                             endpoint="http://nn1:9870")
    assert (lost.kind, refused.kind) == (Kind.OUTAGE, Kind.RETRY)
    assert outage_of(lost, source="source") == Outage(
        "source WebHDFS", "http://nn1:9870", "/hbase/WALs/rs1/w.1: OPEN: connection refused")
    assert outage_of(refused) is None


def test_a_target_that_stopped_answering_is_named_by_what_did_not_answer() -> None:
    native = unavailable("cluster 'dst'", RpcConnectionError("rs1:16020 refused", server=RS),
                         "writing to orders")
    thrift = unavailable("cluster 'dst'", GatewayUnreachableError("thrift2 dst:9090 refused",
                                                                  endpoint="dst:9090"),
                         "writing to orders")
    assert outage_of(native) == Outage("target region server", RS, str(native))
    assert outage_of(thrift) == Outage("target gateway", "dst:9090", str(thrift))
    assert "gateway" not in str(native)
