"""Errors of the native RPC, and the one classification of HBase's remote exceptions.

A remote exception reaches the client as a Java class name: in a reply's ``ResponseHeader``
(``ExceptionResponse``, with the server's ``do_not_retry`` flag) or, per action of a Multi, as
a ``NameBytesPair`` (name, stack trace). ``classify`` turns the name into what to do, from one
table of class names (packages as in HBase branch-2.6; no message is ever read):

* ``RELOCATE``: the region is not (or no longer, or not yet) served there: drop the cached
  location, look it up again in ``hbase:meta`` and retry (``NotServingRegionException`` and
  its subclasses, a stopping server);
* ``RETRY``: the server is busy or throttling: back off, then retry at the same place;
* ``SCANNER``: the scanner is gone on the server: a scan reopens it after its last row;
* ``NEVER``: ``DoNotRetryIOException`` and its known subclasses: retrying cannot help;
* ``UNKNOWN``: a class this table does not list: retried with backoff unless the server
  flagged it ``do_not_retry`` (as HBase's client does with any other IOException), and named
  as unknown wherever it is logged or raised.
"""

from __future__ import annotations

from enum import Enum

from hbase_migrate.cluster.errors import ClusterError, ServiceUnreachableError


class Kind(Enum):
    RELOCATE = "relocate and retry"
    RETRY = "retry after backoff"
    SCANNER = "reopen the scanner"
    NEVER = "never retry"
    UNKNOWN = "unknown exception class"


_H = "org.apache.hadoop.hbase."
_KINDS: dict[str, Kind] = {
    # the region is elsewhere, or its server is going away: relocate
    _H + "NotServingRegionException": Kind.RELOCATE,
    _H + "exceptions.RegionMovedException": Kind.RELOCATE,
    _H + "exceptions.RegionOpeningException": Kind.RELOCATE,
    _H + "regionserver.RegionServerStoppedException": Kind.RELOCATE,
    _H + "regionserver.RegionServerAbortedException": Kind.RELOCATE,
    _H + "regionserver.WrongRegionException": Kind.RELOCATE,
    _H + "client.RegionOfflineException": Kind.RELOCATE,
    # busy, throttled or starting: back off, same place
    _H + "RegionTooBusyException": Kind.RETRY,
    _H + "CallQueueTooBigException": Kind.RETRY,
    _H + "CallDroppedException": Kind.RETRY,
    _H + "RetryImmediatelyException": Kind.RETRY,
    _H + "MultiActionResultTooLarge": Kind.RETRY,
    _H + "PleaseHoldException": Kind.RETRY,
    _H + "quotas.RpcThrottlingException": Kind.RETRY,
    _H + "ipc.ServerNotRunningYetException": Kind.RETRY,
    _H + "ipc.CallTimeoutException": Kind.RETRY,
    _H + "MasterNotRunningException": Kind.RETRY,
    # the scanner is gone (all DoNotRetryIOException subclasses): reopen after the last row
    _H + "UnknownScannerException": Kind.SCANNER,
    _H + "exceptions.OutOfOrderScannerNextException": Kind.SCANNER,
    _H + "exceptions.ScannerResetException": Kind.SCANNER,
    _H + "regionserver.LeaseException": Kind.SCANNER,
    # DoNotRetryIOException and its known subclasses
    _H + "DoNotRetryIOException": Kind.NEVER,
    _H + "TableNotFoundException": Kind.NEVER,
    _H + "TableNotEnabledException": Kind.NEVER,
    _H + "TableNotDisabledException": Kind.NEVER,
    _H + "TableExistsException": Kind.NEVER,
    _H + "NamespaceNotFoundException": Kind.NEVER,
    _H + "UnknownRegionException": Kind.NEVER,
    _H + "NotAllMetaRegionsOnlineException": Kind.NEVER,
    _H + "regionserver.NoSuchColumnFamilyException": Kind.NEVER,
    _H + "exceptions.FailedSanityCheckException": Kind.NEVER,
    _H + "exceptions.UnknownProtocolException": Kind.NEVER,
    _H + "exceptions.RequestTooBigException": Kind.NEVER,
    _H + "exceptions.MasterStoppedException": Kind.NEVER,
    _H + "security.AccessDeniedException": Kind.NEVER,
    _H + "io.hfile.CorruptHFileException": Kind.NEVER,
    _H + "ipc.FatalConnectionException": Kind.NEVER,
    _H + "ipc.ServerTooBusyException": Kind.NEVER,
    _H + "quotas.QuotaExceededException": Kind.NEVER,
    _H + "quotas.SpaceLimitingException": Kind.NEVER,
}


def classify(class_name: str) -> Kind:
    """What to do about a remote exception of Java class ``class_name``."""
    return _KINDS.get(class_name, Kind.UNKNOWN)


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
        self.kind = classify(class_name)
        self.detail = stack_trace.strip().splitlines()[0] if stack_trace.strip() else ""
        unknown = " (an exception class unknown to this client)" \
            if self.kind is Kind.UNKNOWN else ""
        where = ", ".join(p for p in (f"server {server}" if server else "", call) if p)
        super().__init__(f"{where + ': ' if where else ''}{class_name}{unknown}"
                         f"{': ' + self.detail if self.detail else ''}")

    @property
    def retryable(self) -> bool:
        """Whether a retry (after relocating or backing off) may succeed."""
        if self.kind is Kind.UNKNOWN:
            return not self.do_not_retry
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
