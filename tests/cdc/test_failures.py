"""Which message of a produced batch failed, from the broker's reports to the one callback
of the batch: the first refused index, equal messages counted from the first."""

from __future__ import annotations

from typing import Any

from confluent_kafka import KafkaError, KafkaException

from hbase_migrate.config import CdcSettings
from hbase_migrate.sinks.kafka import KafkaSink, _Failures


class Reported:
    """What the client hands a delivery callback: the message's key and value."""

    def __init__(self, key: bytes | None, value: bytes | None) -> None:
        self._key, self._value = key, value

    def key(self) -> bytes | None:
        return self._key

    def value(self) -> bytes | None:
        return self._value


KEYS = [b"t\x00a", b"t\x00b", b"t\x00a", b"t\x00c", b"t\x00a"]
VALUES = [b"1", b"2", b"3", b"4", b"3"]
TIMED_OUT = KafkaError(KafkaError._MSG_TIMED_OUT)
TOO_LARGE = KafkaError(KafkaError.MSG_SIZE_TOO_LARGE)


def failures(*reported: tuple[int, KafkaError], start: int = 0,
             message: Any = None) -> _Failures:
    failed = _Failures(KEYS, VALUES, start)
    for index, error in reported:
        failed.report(error, message or Reported(KEYS[index], VALUES[index]))
    failed.report(None, Reported(KEYS[1], VALUES[1]))  # a success: never reported, ignored
    return failed


def test_no_failure() -> None:
    assert failures().first() is None


def test_the_first_refused_message_by_index_whatever_the_report_order() -> None:
    assert failures((3, TOO_LARGE), (1, TIMED_OUT)).first() == (1, TIMED_OUT)


def test_equal_messages_count_from_the_first_one_not_yet_counted() -> None:
    failed = failures((4, TIMED_OUT), (2, TOO_LARGE))  # 2 and 4 are equal
    assert failed.first() == (2, TIMED_OUT)
    assert failed.at == {2: TIMED_OUT, 4: TOO_LARGE}


def test_a_batch_sent_again_from_an_index_counts_from_there() -> None:
    assert failures((4, TIMED_OUT), start=3).first() == (4, TIMED_OUT)


def test_a_report_without_its_message_counts_as_the_batch_start() -> None:
    failed = failures((3, TIMED_OUT), start=1, message=Reported(None, None))
    assert failed.first() == (1, TIMED_OUT)
    assert failed.first_error_at(1) == TIMED_OUT and failed.first_error_at(2) is None


def test_a_failure_to_produce_is_kept_beside_the_reports() -> None:
    failed = failures((3, TIMED_OUT))
    failed.at[0] = TOO_LARGE
    assert failed.first() == (0, TOO_LARGE)


class ScriptedProducer:
    """A producer whose ``produce`` raises what ``script`` holds for a message, once."""

    def __init__(self, script: dict[bytes, BaseException]) -> None:
        self.script, self.polls = script, 0
        self.sent: list[bytes] = []

    def produce(self, topic: str, value: bytes, key: bytes, partition: int,
                on_delivery: Any) -> None:
        assert partition == -1  # the partitioner's choice
        if (exc := self.script.pop(value, None)) is not None:
            raise exc
        self.sent.append(value)

    def poll(self, timeout: float) -> int:
        self.polls += 1
        return 0


def test_a_full_queue_waits_and_a_refused_produce_is_kept_in_order() -> None:
    values = [b"%d" % i for i in range(8)]
    refused = KafkaException(TOO_LARGE)
    producer = ScriptedProducer({b"2": BufferError("queue full"), b"5": refused,
                                 b"6": BufferError("queue full")})
    sink = KafkaSink(CdcSettings("127.0.0.1:9", "t"),
                     make_producer=lambda config: producer)  # type: ignore[arg-type,return-value]
    failed = sink._produce("t", values, values, 1)  # sent again from index 1
    assert producer.sent == [v for v in values[1:] if v != b"5"]  # each once, in order
    assert producer.polls == 2
    assert failed.first() == (5, TOO_LARGE)
