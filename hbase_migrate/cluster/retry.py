"""What to do about a failed call, and the one retry loop, for every transport.

A failure has one of five kinds (:class:`Kind`), carried on the error that reports it:

* ``RETRY``: the server is busy, throttling or starting: back off, then the same call again;
* ``RELOCATE``: the region is not (or no longer, or not yet) served there: forget where it
  was, look it up again, back off and retry;
* ``SCANNER``: the server lost the scanner (a scan's form of relocate): the scan reopens
  after the last row it handed out (:mod:`hbase_migrate.cluster.scanning`);
* ``OUTAGE``: the service did not answer (refused, reset, timed out): retried, and once the
  attempts are spent the call fails as an outage, which a long run waits out;
* ``NEVER``: retrying cannot help (``DoNotRetryIOException`` and its subclasses, a request
  the server refuses, a reply that cannot be read).

HBase's remote exceptions are classified by their Java class name, from one table
(:func:`classify`, packages as in HBase branch-2.6). A class the table does not list is
retried with backoff unless the server flagged it ``do_not_retry`` (as HBase's client does
with any other IOException), and named as unknown where it is reported (:func:`known`).

:class:`Retry` is the loop's state for one call: attempts and a deadline, the capped,
doubling backoff between attempts, and the final error (built by the transport, naming table,
region, server and call) when the kind is ``NEVER`` or the attempts or the time are spent.
"""

from __future__ import annotations

import logging
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from hbase_migrate.errors import Kind as Kind  # noqa: PLC0414  # re-exported: kinds live with errors

log = logging.getLogger(__name__)


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
    # a master stopping (a DoNotRetryIOException, which HBase's admin answers by asking
    # again another way): the call was not run; its successor takes it
    _H + "exceptions.MasterStoppedException": Kind.RELOCATE,
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
    _H + "security.AccessDeniedException": Kind.NEVER,
    _H + "io.hfile.CorruptHFileException": Kind.NEVER,
    _H + "ipc.FatalConnectionException": Kind.NEVER,
    _H + "ipc.ServerTooBusyException": Kind.NEVER,
    _H + "quotas.QuotaExceededException": Kind.NEVER,
    _H + "quotas.SpaceLimitingException": Kind.NEVER,
}
_BY_SIMPLE_NAME = {name.rpartition(".")[2]: kind for name, kind in _KINDS.items()}


def known(class_name: str) -> bool:
    """Whether the table lists ``class_name``."""
    return class_name in _KINDS


def classify(class_name: str, do_not_retry: bool = False) -> Kind:
    """What to do about a remote exception of Java class ``class_name`` (``do_not_retry``:
    the server's flag, which decides for a class the table does not list)."""
    kind = _KINDS.get(class_name)
    if kind is not None:
        return kind
    return Kind.NEVER if do_not_retry else Kind.RETRY


# A Java exception class name, with or without its package (``a.b.FooException``).
_JAVA_CLASS = re.compile(r"\b(?:[a-z_][\w$]*\.)*([A-Z][\w$]*(?:Exception|Error|TooLarge))\b")


def classify_thrift(message: str | None, can_retry: bool) -> Kind:
    """What to do about an error a Thrift gateway answered. Neither gateway sends the Java
    class (HBase's Thrift handlers fill ``TIOError`` with ``getMessage()`` and ``canRetry``
    = not a DoNotRetryIOException, ``TIllegalArgument`` with a message only), so the kind
    comes from what they do send: ``canRetry``, then the classes HBase names in the message
    (its client's wrapped causes, e.g. a batch's RetriesExhaustedWithDetailsException),
    classified by the one table: a cause that never succeeds is never retried, a lost
    scanner reopens the scan. The gateway finds regions itself: a relocation is a retry."""
    kinds = {_BY_SIMPLE_NAME.get(m.group(1)) for m in _JAVA_CLASS.finditer(message or "")}
    if Kind.SCANNER in kinds:
        return Kind.SCANNER
    return Kind.NEVER if not can_retry or Kind.NEVER in kinds else Kind.RETRY


def first_line(message: object) -> str:
    """The first line of a server's message (HBase appends Java stack traces)."""
    text = str(getattr(message, "message", None) or message or "").strip()
    return text.splitlines()[0] if text else "(no message)"


class Backoff:
    """Doubling sleeps from ``first`` up to ``cap`` until ``seconds`` have passed (None:
    no deadline)."""

    def __init__(self, seconds: float | None, first: float = 0.05, cap: float = 1.0) -> None:
        self.deadline = None if seconds is None else time.monotonic() + seconds
        self.delay, self.cap = first, cap

    def left(self) -> float:
        return float("inf") if self.deadline is None else self.deadline - time.monotonic()

    def sleep(self) -> bool:
        """Sleep once (at most until the deadline); False when the time is spent."""
        left = self.left()
        if left <= 0:
            return False
        time.sleep(min(self.delay, left))
        self.delay = min(self.delay * 2, self.cap)
        return True


# The final error of a call: (the last failure, its kind, " after N attempts over Ts" or "").
GiveUp = Callable[[Exception, Kind, str], Exception]


class Retry:
    """The one retry loop's state for one call named ``call``: at most ``attempts``
    attempts within ``deadline`` seconds, ``backoff`` doubling to ``max_backoff`` between
    them. After each failed attempt the transport calls :meth:`failed` with the failure's
    kind: it sleeps, or raises ``give_up(failure, kind, tried)``. ``counter`` counts the
    attempts retried (a figure of the live metrics), under ``count_as`` or else by kind;
    ``level`` is the log level of a retry."""

    def __init__(self, call: str, give_up: GiveUp, *, attempts: int, backoff: float = 0.05,
                 max_backoff: float = 5.0, deadline: float | None = None,
                 counter: Counter[Any] | None = None, count_as: object = None,
                 level: int = logging.INFO) -> None:
        self.call, self.give_up, self.attempts = call, give_up, attempts
        self.backoff = Backoff(deadline, backoff, max_backoff)
        self.counter, self.count_as, self.level = counter, count_as, level
        self.attempt = 0
        self.began = time.monotonic()

    def tried(self) -> str:
        """`` after 6 attempts over 6.2s`` (empty for one attempt), for messages."""
        if self.attempt < 2:
            return ""
        return f" after {self.attempt} attempts over {time.monotonic() - self.began:.1f}s"

    def failed(self, exc: Exception, kind: Kind, attempts: int | None = None) -> None:
        """After a failed attempt: back off and return (try again), or raise the final
        error when ``kind`` is NEVER or the attempts (``attempts``: this kind's limit, when
        it has its own) or the time are spent."""
        self.attempt += 1
        limit = self.attempts if attempts is None else attempts
        if kind is Kind.NEVER or self.attempt >= limit or self.backoff.left() <= 0:
            final = self.give_up(exc, kind, self.tried())
            if final is exc:  # the failure says it all
                raise exc
            raise final from exc
        if self.counter is not None:
            self.counter[kind if self.count_as is None else self.count_as] += 1
        log.log(self.level, "%s, attempt %d: %s (%s); again in %.2f s", self.call,
                self.attempt, first_line(exc), kind.value, self.backoff.delay)
        self.backoff.sleep()

    def progressed(self) -> None:
        """The call got somewhere (a scan read more): its attempts count afresh."""
        self.attempt = 0


def worst(kinds: Iterable[Kind]) -> Kind:
    """Of several failures of one round (a Multi's actions), the one that decides:
    NEVER, else RELOCATE, else the first."""
    seen = list(kinds)
    for kind in (Kind.NEVER, Kind.RELOCATE):
        if kind in seen:
            return kind
    return seen[0]
