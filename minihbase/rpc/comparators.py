"""HBase's byte comparators (``Comparator.proto``, branch-2.6) as the embedded region servers
read them from a filter. ``compare_to(data)`` answers as the Java ``compareTo``: the
comparator's own value against the cell's bytes (0: a match), so a CompareFilter's operator
reads the same way as in HBase's ``CompareFilter.compare``.

Served: BinaryComparator, BinaryPrefixComparator, LongComparator, NullComparator,
SubstringComparator (case-insensitive, as HBase lowercases both sides) and
RegexStringComparator with the JAVA engine (``find``, not a whole match; the flags
CASE_INSENSITIVE, MULTILINE and DOTALL). Any other comparator is refused by name."""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Mapping
from typing import TypeVar

from hbase_migrate.wal.protobuf import Message
from minihbase.rpc.listener import DO_NOT_RETRY, ServiceError

PACKAGE = "org.apache.hadoop.hbase.filter."
Comparator = Callable[[bytes], int]
T = TypeVar("T")
# java.util.regex.Pattern flags -> Python's
_FLAGS = {2: re.IGNORECASE, 8: re.MULTILINE, 32: re.DOTALL}


def refuse(what: str) -> ServiceError:
    return ServiceError(DO_NOT_RETRY, f"{what} is not served by the embedded cluster",
                        do_not_retry=True)


def _cmp(a: bytes, b: bytes) -> int:
    return (a > b) - (a < b)


def _comparable(data: bytes) -> bytes:
    """The value of a comparator made of one ByteArrayComparable (field 1)."""
    inner = Message(data, "comparator").req_bytes(1, "comparable")
    return Message(inner, "ByteArrayComparable").opt_bytes(1) or b""


def _regex(data: bytes) -> Comparator:
    m = Message(data, "RegexStringComparator")
    engine = m.opt_str(4) or "JAVA"
    if engine != "JAVA":
        raise refuse(f"RegexStringComparator with the {engine} engine")
    java_flags = m.req_int(2, "pattern_flags")
    flags = 0
    for bit, flag in _FLAGS.items():
        if java_flags & bit:
            flags |= flag
    if java_flags & ~sum(_FLAGS):
        raise refuse(f"RegexStringComparator flags {java_flags:#x}")
    charset = m.req_str(3, "charset")
    try:
        pattern = re.compile(m.req_str(1, "pattern"), flags)
    except re.error as exc:
        raise ServiceError(DO_NOT_RETRY, f"RegexStringComparator: {exc}",
                           do_not_retry=True) from None
    return lambda value: 0 if pattern.search(value.decode(charset, "replace")) else 1


def _substring(data: bytes) -> Comparator:
    needle = Message(data, "SubstringComparator").req_str(1, "substr").lower()
    return lambda value: 0 if needle in value.decode("utf-8", "replace").lower() else 1


def _binary(data: bytes) -> Comparator:
    mine = _comparable(data)
    return lambda value: _cmp(mine, value)


def _prefix(data: bytes) -> Comparator:
    mine = _comparable(data)
    return lambda value: _cmp(mine, value[:len(mine)])


def _long(data: bytes) -> Comparator:
    mine: int = struct.unpack(">q", _comparable(data))[0]

    def compare(value: bytes) -> int:
        if len(value) != 8:
            raise ServiceError(DO_NOT_RETRY, "LongComparator: a cell value of "
                               f"{len(value)} bytes is not a long", do_not_retry=True)
        theirs: int = struct.unpack(">q", value)[0]
        return (mine > theirs) - (mine < theirs)
    return compare


_COMPARATORS: dict[str, Callable[[bytes], Comparator]] = {
    "BinaryComparator": _binary, "BinaryPrefixComparator": _prefix, "LongComparator": _long,
    "NullComparator": lambda _: lambda value: 1,  # a cell's value is never null
    "RegexStringComparator": _regex, "SubstringComparator": _substring,
}


def by_name(data: bytes, kind: str, served: Mapping[str, Callable[[bytes], T]]) -> T:
    """A ``Filter`` or ``Comparator`` message (a class name of HBase's filter package, its
    serialized form) made by what ``served`` has for it; any other refused by name."""
    m = Message(data, kind)
    name = m.req_str(1, "name")
    short = name.removeprefix(PACKAGE)
    make = served.get(short) if short != name else None
    if make is None:
        raise refuse(f"the {kind.lower()} {name}")
    return make(m.opt_bytes(2) or b"")


def decode_comparator(data: bytes) -> Comparator:
    """A ``Comparator`` message as a function."""
    return by_name(data, "Comparator", _COMPARATORS)
