"""Server errors of HBase's Thrift2 gateway: a TIOError HBase marks ``canRetry`` (anything
but a DoNotRetryIOException) is retried with backoff by idempotent calls (reads, puts and
deletes with their timestamps) and never by others; one not marked, or naming a cause that
never succeeds (a missing family in a batch's RetriesExhausted...), fails at once."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import RETRIES
from hbase_migrate.services import free_port
from hbase_migrate.thrift.thrift2 import (
    Thrift2Client,
    Thrift2Error,
    Thrift2UnreachableError,
)
from hbase_migrate.thrift.thrift2_idl import hbase2
from hbase_migrate.wal.model import Cell, CellType


class Flaky:
    """A gateway whose calls fail ``failures`` times each with ``canRetry``, then answer."""

    def __init__(self, failures: int, can_retry: bool) -> None:
        self.failures, self.can_retry = failures, can_retry
        self.reason = "RetriesExhaustedException (test)"
        self.calls: list[str] = []

    def _maybe_fail(self, what: str) -> None:
        self.calls.append(what)
        if self.calls.count(what) <= self.failures:
            raise hbase2.TIOError(message=f"{what}: {self.reason}", canRetry=self.can_retry)

    def get(self, table: bytes, tget: Any) -> Any:
        self._maybe_fail("get")
        value = hbase2.TColumnValue(family=b"d", qualifier=b"q", value=b"v", timestamp=7,
                                    type=4)
        return hbase2.TResult(row=tget.row, columnValues=[value])

    def putMultiple(self, table: bytes, puts: list[Any]) -> None:
        self._maybe_fail("putMultiple")

    def createTable(self, desc: Any, split_keys: Any) -> None:
        self._maybe_fail("createTable")


@pytest.fixture
def gateway() -> Iterator[tuple[Flaky, str]]:
    from thriftpy2.protocol import TBinaryProtocolFactory
    from thriftpy2.rpc import make_server
    from thriftpy2.transport import TBufferedTransportFactory

    handler = Flaky(0, True)
    port = free_port()
    server = make_server(hbase2.THBaseService, handler, "127.0.0.1", port,
                         proto_factory=TBinaryProtocolFactory(),
                         trans_factory=TBufferedTransportFactory())
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while True:  # listening (a connection closed unused is no call)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "the test gateway does not listen"
            time.sleep(0.02)
    try:
        yield handler, f"127.0.0.1:{port}"
    finally:
        server.close()


def client(endpoint: str) -> Thrift2Client:
    return Thrift2Client(endpoint, timeout=5.0, retries=3, backoff=0.01)


def test_a_retryable_server_error_of_a_read_or_a_put_is_retried(
        gateway: tuple[Flaky, str]) -> None:
    handler, endpoint = gateway
    handler.failures, handler.can_retry = 2, True
    with client(endpoint) as c:
        assert [(x.row, x.value) for x in c.get("t", b"r1")] == [(b"r1", b"v")]
        c.put_cells("t", [Cell(b"r1", b"d", b"q", 5, CellType.PUT, b"x")])
    assert handler.calls == ["get"] * 3 + ["putMultiple"] * 3


def test_a_retryable_error_that_lasts_fails_after_every_attempt(
        gateway: tuple[Flaky, str]) -> None:
    handler, endpoint = gateway
    handler.failures, handler.can_retry = 10, True
    with client(endpoint) as c, pytest.raises(Thrift2Error, match=(
            r"get t: get: RetriesExhaustedException \(test\) after 4 attempts over")):
        c.get("t", b"r1")
    assert handler.calls == ["get"] * 4


def test_errors_not_marked_retryable_and_calls_not_idempotent_fail_at_once(
        gateway: tuple[Flaky, str]) -> None:
    handler, endpoint = gateway
    handler.failures, handler.can_retry = 1, False
    with client(endpoint) as c, pytest.raises(Thrift2Error, match=r"get t: get: .*\(test\)$"):
        c.get("t", b"r1")
    handler.can_retry = True  # a cause that never succeeds, wrapped in a retryable error
    handler.reason = ("RetriesExhaustedWithDetailsException: Failed 1 action: "
                      "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException")
    with client(endpoint) as c, pytest.raises(Thrift2Error, match="NoSuchColumnFamily"):
        c.put_cells("t", [Cell(b"r1", b"x", b"q", 5, CellType.PUT, b"x")])
    handler.reason = "RetriesExhaustedException (test)"  # a create is not idempotent
    with client(endpoint) as c, pytest.raises(Thrift2Error, match="createTable t: "):
        c.create_table(TableDescriptor("t", (FamilyDescriptor(b"d"),)))
    assert handler.calls == ["get", "putMultiple", "createTable"]


def test_a_scan_of_an_unreachable_gateway_fails_after_its_calls_own_retries(
        closed_port: int) -> None:
    """Opening the scanner is retried by the call's loop; the scan does not retry that
    again (the attempts would multiply)."""
    before = RETRIES["thrift2"]
    with client(f"127.0.0.1:{closed_port}") as c, pytest.raises(
            Thrift2UnreachableError, match=r"openScanner t: unreachable after 4 attempts"):
        list(c.scan("t"))
    assert RETRIES["thrift2"] - before == 3
