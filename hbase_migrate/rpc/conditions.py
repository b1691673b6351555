"""The condition of a checkAndMutate (``Client.proto``/``Comparator.proto``, branch-2.6)::

    MutateRequest      3 condition
    Condition          1 row  2 family  3 qualifier  4 compare_type  5 comparator
                       6 time_range  7 filter
    CompareType        LESS 0  LESS_OR_EQUAL 1  EQUAL 2  NOT_EQUAL 3  GREATER_OR_EQUAL 4
                       GREATER 5  NO_OP 6
    Comparator         1 name  2 serialized_comparator
    BinaryComparator   1 comparable (ByteArrayComparable: 1 value)

HBase's server compares with the comparator's value as bytes, whatever its class
(``ProtobufUtil.toCheckAndMutate`` keeps ``comparator.getValue()``): the value is read from
the ``comparable`` every ByteArrayComparable-based comparator serializes first.
"""

from __future__ import annotations

from typing import NamedTuple

from hbase_migrate.rpc.messages import TimeRange, decode_time_range
from hbase_migrate.wal.protobuf import Message

LESS, LESS_OR_EQUAL, EQUAL, NOT_EQUAL, GREATER_OR_EQUAL, GREATER, NO_OP = range(7)


class Condition(NamedTuple):
    """What a checkAndMutate checks: ``value`` None or empty checks that the column has no
    value (``ifNotExists``); ``filter`` is the ``Filter`` message of a filter's condition
    (``ifMatches(filter)``), None otherwise."""

    row: bytes
    family: bytes
    qualifier: bytes
    op: int
    value: bytes | None
    time_range: TimeRange | None = None
    filter: bytes | None = None


def decode_condition(data: bytes) -> Condition:
    m = Message(data, "Condition")
    value = None
    comparator = m.opt_bytes(5)
    if comparator is not None:
        serialized = Message(comparator, "Comparator").opt_bytes(2)
        comparable = Message(serialized, "BinaryComparator").opt_bytes(1) if serialized else None
        value = Message(comparable, "ByteArrayComparable").opt_bytes(1) if comparable else None
    time_range = m.opt_bytes(6)
    return Condition(m.req_bytes(1, "row"), m.opt_bytes(2) or b"", m.opt_bytes(3) or b"",
                     m.opt_int(4) or 0, value,
                     None if time_range is None else decode_time_range(time_range),
                     m.opt_bytes(7))


def decode_mutate_condition(data: bytes) -> Condition | None:
    """The condition of a MutateRequest, None when it has none."""
    condition = Message(data, "MutateRequest").opt_bytes(3)
    return None if condition is None else decode_condition(condition)
