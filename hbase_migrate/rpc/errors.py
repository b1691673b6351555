"""Errors of the native RPC.

A remote exception reaches the client as a Java class name: in a reply's ``ResponseHeader``
(``ExceptionResponse``, with the server's ``do_not_retry`` flag) or, per action of a Multi, as
a ``NameBytesPair`` (name, stack trace). :class:`RemoteError` carries its kind, from the one
classification of every transport (:func:`hbase_migrate.cluster.retry.classify`; no message
is ever read).
"""

from __future__ import annotations

from hbase_migrate.cluster.errors import ClusterError, ServiceUnreachableError
from hbase_migrate.cluster.retry import Kind, classify, known
from hbase_migrate.wal.cells import CellCorruptError
from hbase_migrate.wal.protobuf import ProtobufError


class RpcError(ClusterError):
    """Anything that went wrong speaking HBase's RPC."""


class RpcFrameError(RpcError):
    """Bytes from a server that are not a valid reply: ``offset`` is the byte offset in the
    connection's reply stream, ``call_id`` the call the reply was for (None: not yet read)."""

    def __init__(self, message: str, *, offset: int, call_id: int | None = None,
                 server: str = "") -> None:
        self.offset = offset
        self.call_id = call_id
        where = f"server {server}, " if server else ""
        call = "call id unknown" if call_id is None else f"call id {call_id}"
        super().__init__(f"{where}reply stream byte offset {offset} ({call}): {message}")


class RemoteError(RpcError):
    """An exception HBase raised for a call (or one action of a Multi). ``class_name`` is the
    Java class, ``kind`` its classification, ``detail`` the first line of the stack trace."""

    def __init__(self, class_name: str, stack_trace: str = "", *, do_not_retry: bool = False,
                 server: str = "", call: str = "", hostname: str = "", port: int = 0) -> None:
        self.class_name = class_name
        self.stack_trace = stack_trace
        self.do_not_retry = do_not_retry
        self.server = server
        self.call = call
        self.hostname = hostname  # RegionMovedException: where the region went
        self.port = port
        self.kind = classify(class_name, do_not_retry)
        self.known = known(class_name)
        self.detail = stack_trace.strip().splitlines()[0] if stack_trace.strip() else ""
        unknown = "" if self.known else " (an exception class unknown to this client)"
        where = ", ".join(p for p in (f"server {server}" if server else "", call) if p)
        super().__init__(f"{where + ': ' if where else ''}{class_name}{unknown}"
                         f"{': ' + self.detail if self.detail else ''}")

    @property
    def retryable(self) -> bool:
        """Whether a retry (after relocating or backing off) may succeed."""
        return self.kind in (Kind.RELOCATE, Kind.RETRY)


class RpcConnectionError(RpcError, ServiceUnreachableError):
    """A connection to a server could not be made, broke or was closed while a call was in
    flight: the message names the server and the call."""

    service = "region server"

    def __init__(self, message: str, *, server: str) -> None:
        ServiceUnreachableError.__init__(self, message, endpoint=server)
        self.server = server


class RpcTimeoutError(RpcConnectionError):
    """A call got no reply within its timeout. The connection stays open (as in HBase's
    client): a late reply is recognised by its call id and skipped."""


class RegionNotFoundError(RpcError):
    """``hbase:meta`` holds no served region of the table for a row. ``retryable``: the
    table has regions, but none (or none with a server) covers the row yet (a split or a
    move under way); False: the table has no region at all (no such table)."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.kind = Kind.RELOCATE if retryable else Kind.NEVER


# What a call's retry loop judges (anything else propagates): a reply that does not decode
# (never retried), the server's exceptions, a lost connection, a region not found.
MALFORMED = (ProtobufError, CellCorruptError)
CALL_FAILURES = (RemoteError, RpcConnectionError, RegionNotFoundError, *MALFORMED)
