"""Requests sent to region servers, counted by the transports as they send them, per
thread: how a step knows what it asked of a cluster's region servers (``validate --from
snapshot`` reads the source's snapshot files and sends its region servers none).

What counts: over HBase's own RPC, every call written to a region server's
``ClientService`` (scan, get, multi; the ``hbase:meta`` look-ups too, which a region
server serves); through a Thrift2 gateway, every data call sent to the gateway (open a
scanner, its rows, get, put, delete), each of which the gateway turns into at least one
request to a region server. Admin calls (the master's, a region server's
``AdminService``) do not count. Counts are per thread: a range task measures its own reads
while other tasks of the process read other ranges.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

_local = threading.local()


def sent(n: int = 1) -> None:
    """Count ``n`` requests sent to region servers by this thread (the transports call it
    as each one goes out)."""
    _local.count = getattr(_local, "count", 0) + n


def sent_so_far() -> int:
    """The requests this thread has sent to region servers since it started."""
    return int(getattr(_local, "count", 0))


@dataclass
class Tally:
    """The requests a block sent (final when the block ends)."""

    count: int = 0


@contextmanager
def counted() -> Iterator[Tally]:
    """The requests this thread sends to region servers within the block."""
    tally = Tally()
    before = sent_so_far()
    try:
        yield tally
    finally:
        tally.count = sent_so_far() - before
