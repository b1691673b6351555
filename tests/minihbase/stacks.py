"""The conformance suites on both stacks: import these fixtures into a test module and its
``hb``, ``t2``, ``raw`` and ``recorder`` run against the embedded cluster and against real
Apache HBase (one session-wide JVM). Real HBase is the specification."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import happybase
import pytest
from thriftpy2.rpc import make_client

from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.thrift.thrift2_idl import hbase2

from .conftest import Recorder

STACKS = ["minihbase", pytest.param("real", marks=pytest.mark.realstack)]


@dataclass(frozen=True)
class Stack:
    kind: str                   # "minihbase" or "real"
    endpoints: ClusterEndpoints
    recorder: Recorder | None   # what the embedded cluster's WALs receive (not on real HBase)


@pytest.fixture(scope="module", params=STACKS)
def stack(request: pytest.FixtureRequest) -> Stack:
    if request.param == "minihbase":
        mini = request.getfixturevalue("mini")
        return Stack("minihbase", mini.endpoints, request.getfixturevalue("mini_recorder"))
    real = request.getfixturevalue("real_hbase")
    return Stack("real", ClusterEndpoints.from_json(real.described), None)


@pytest.fixture
def hb(stack: Stack) -> Iterator[happybase.Connection]:
    host, port = stack.endpoints.thrift.split(":")
    conn = happybase.Connection(host, int(port), transport=stack.endpoints.transport,
                                protocol=stack.endpoints.protocol, timeout=60_000)
    yield conn
    conn.close()


@pytest.fixture
def t2(stack: Stack) -> Iterator[Thrift2Client]:
    assert stack.endpoints.thrift2 is not None
    with Thrift2Client(stack.endpoints.thrift2) as client:
        yield client


@pytest.fixture
def raw(stack: Stack):  # type: ignore[no-untyped-def]
    assert stack.endpoints.thrift2 is not None
    host, port = stack.endpoints.thrift2.split(":")
    client = make_client(hbase2.THBaseService, host, int(port), timeout=60_000)
    yield client
    client.close()


@pytest.fixture
def recorder(stack: Stack) -> Recorder:
    if stack.recorder is None:
        pytest.skip("checks the embedded cluster's write hook; real HBase's WALs are checked "
                    "by the real-WAL agreement tests")
    return stack.recorder
