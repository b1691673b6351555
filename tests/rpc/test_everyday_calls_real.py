"""A typical application's writes and reads (issue 58), by HBase 2.6.1's own Java client
(``Everyday`` of ``tests/minihbase/javaclient``: BufferedMutator, Table, AsyncTable and
Admin), against real Apache HBase 2.6.1 (the session's ``real_hbase``) and the embedded
cluster, held to the same expectations written here by hand from HBase's semantics."""

from __future__ import annotations

from typing import Any

import pytest

from tests.rpc.java_programs import run_program
from tests.rpc.two_stacks import described

__all__ = ["described"]  # the module's stacks: the embedded cluster and real HBase

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.realstack]

EXPECTED = [
    # each row was a:1=v1, a:2=v2, b:1=x
    "deleted r1 f:a/1=v1,f:b/1=x",  # one version
    "deleted r2 f:b/1=x",  # every version of a column
    "deleted r3 ",  # the family
    "deleted r4 ",  # the row
    "deleted r5 f:a/2=v2",  # the family's cells at timestamp 1
    "increment 5", "increment 8", "append abcd",
    "check_equal true", "check_other false", "check_missing true",
    # a filter's condition holds when the row read through it has a cell
    "check_filter true", "check_filter_other false", "marked f:fm/8=y",
    "batch true f:a/2=v2",  # a put's result is empty; the get reads r5
    "async_get f:a/4=async", "async_scan r1,r2,r5",
    "flushed 1",
    "truncated 2 null",  # the split point kept, no row left
]


def test_everyday_calls_as_hbase_answers_them(described: dict[str, Any]) -> None:
    assert run_program(described, "Everyday") == EXPECTED, described["stack"]
