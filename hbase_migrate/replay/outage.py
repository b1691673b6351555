"""Outages: a service that does not answer, waited out instead of ending a long run.

:func:`outage_of` tells an outage (the target gateway, the source's WebHDFS or ZooKeeper,
the ledger's database, the Kafka brokers did not answer) from a permanent error (a refusal,
a missing table, a bad config): only the first is worth waiting for. :class:`OutageRider`
waits one out: it probes the service with capped exponential backoff (1 s doubling to 30 s),
says who it waits for and since when, records the outage as a ledger step of kind
``outage`` (running while it lasts), and gives up with :class:`OutageTooLongError` once the
outage has lasted longer than ``[replay] outage_tolerance``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import DBAPIError

from hbase_migrate.audit.engine import first_line, lost_database, redact
from hbase_migrate.audit.ledger import Ledger, now_ms
from hbase_migrate.audit.records import StepStatus
from hbase_migrate.audit.status import OUTAGE_STEP
from hbase_migrate.cluster.errors import ServiceUnreachableError
from hbase_migrate.errors import HBaseMigrateError, Kind, WalSourceError, causes
from hbase_migrate.timeutil import format_duration, format_time

log = logging.getLogger(__name__)

BACKOFF_FIRST_S = 1.0
BACKOFF_CAP_S = 30.0


@dataclass(frozen=True)
class Outage:
    """A service that did not answer: its kind, where it was sought, and the error."""

    service: str  # "target gateway", "source WebHDFS", "source ZooKeeper", "ledger", ...
    endpoint: str
    error: str

    def describe(self) -> str:
        return f"the {self.service} {self.endpoint}".rstrip()


@dataclass
class RiddenOutage:
    """One outage waited out (or given up on) by a run."""

    outage: Outage
    began: int  # ms since the epoch
    ended: int | None = None
    probes: int = 0

    @property
    def seconds(self) -> float:
        return ((self.ended if self.ended is not None else now_ms()) - self.began) / 1000

    def to_json(self) -> dict[str, Any]:
        return {"service": self.outage.service, "endpoint": self.outage.endpoint,
                "error": self.outage.error, "began": self.began, "ended": self.ended,
                "seconds": round(self.seconds, 3), "probes": self.probes}


class OutageTooLongError(HBaseMigrateError):
    """A service stayed unreachable for longer than ``[replay] outage_tolerance``."""


class NeverAnsweredError(OutageTooLongError):
    """A one-shot run gave up on a service that has not answered once since it started
    (a wrong host or port looks like that): the message names the endpoint, the setting
    that named it and what was tried. A scheduler does not retry the step."""

    at_once = True


def outage_of(exc: BaseException, *, ledger_url: str = "",
              source: str = "source") -> Outage | None:
    """The outage ``exc`` shows (looking through its causes), ``None`` for any other error.

    ``ledger_url`` names the ledger in the outage of its database; ``source`` prefixes the
    source's storage and quorum ("source WebHDFS")."""
    for error in causes(exc):
        if isinstance(error, ServiceUnreachableError):
            if error.kind is not Kind.OUTAGE:
                return None
            service = error.service
            if service in ("WebHDFS", "ZooKeeper"):
                service = f"{source} {service}"
            return Outage(service, error.endpoint or "", first_line(exc))
        if isinstance(error, WalSourceError):
            if error.kind is Kind.OUTAGE:
                return Outage(f"{source} WebHDFS", error.endpoint, first_line(exc))
            return None
        if isinstance(error, DBAPIError) and lost_database(error):
            return Outage("ledger", redact(ledger_url) if ledger_url else "",
                          first_line(error.orig or error))
    return None


Probe = Callable[[], object]
WaitHook = Callable[[RiddenOutage, float], None]  # (the outage, seconds to the next probe)


class OutageRider:
    """Waits outages out for one run or follow of a migration's stream; keeps the list of
    the outages it rode out.

    An outage lasts from the first error until a run ends after it (:meth:`settle`): a
    service that answers a probe and fails the next run again is the same outage, its
    tolerance counted from its start, its ledger step the same."""

    def __init__(self, *, tolerance_ms: int, stop: threading.Event, ledger: Ledger | None,
                 migration_id: int | None, stream: str, on_wait: WaitHook | None = None,
                 on_resume: Callable[[RiddenOutage], None] | None = None) -> None:
        self.tolerance_ms = tolerance_ms
        self.stop = stop
        self.ledger, self.migration_id, self.stream = ledger, migration_id, stream
        self.on_wait, self.on_resume = on_wait, on_resume
        self.ridden: list[RiddenOutage] = []
        self._open: tuple[RiddenOutage, int | None] | None = None  # not yet settled

    @property
    def current(self) -> RiddenOutage | None:
        """The outage being waited out (or resumed from, until a run ends)."""
        return self._open[0] if self._open else None

    def ride(self, outage: Outage, probe: Probe, ledger_url: str = "",
             unanswered: tuple[int, str] | None = None) -> bool:
        """Wait until ``probe()`` passes: True once the service answers, False when ``stop``
        was set meanwhile. Raises :class:`OutageTooLongError` past the tolerance, and any
        error of ``probe`` that is no outage. ``unanswered`` ``(ms, advice)``: the service
        never answered since the run started; :class:`NeverAnsweredError` (ending with
        ``advice``) once it has not for ``ms``."""
        if self._open is None:
            ride = RiddenOutage(outage, now_ms())
            self.ridden.append(ride)
            self._open = (ride, self._open_step(ride))
        ride = self._open[0]
        ride.outage, ride.ended = outage, None
        delay = BACKOFF_FIRST_S
        try:
            while True:
                if self.on_wait is not None:
                    self.on_wait(ride, delay)
                if self.stop.wait(delay):
                    self.settle("the run was stopped while it waited")
                    return False
                ride.probes += 1
                try:
                    probe()
                except Exception as exc:
                    again = outage_of(exc, ledger_url=ledger_url)
                    if again is None:
                        raise
                    ride.outage = again
                else:
                    break
                delay = self._give_up_or_wait(outage, ride, unanswered, delay)
        except BaseException as exc:
            self.settle(first_line(exc))
            raise
        ride.ended = now_ms()
        log.info("%s answers again after %.1f s; resuming", outage.describe(), ride.seconds)
        if self.on_resume is not None:
            self.on_resume(ride)
        return True

    def _give_up_or_wait(self, outage: Outage, ride: RiddenOutage,
                         unanswered: tuple[int, str] | None, delay: float) -> float:
        """Raise past the limits of :meth:`ride`; else the seconds to the next probe."""
        waited = now_ms() - ride.began
        if unanswered is not None and waited >= unanswered[0]:
            raise NeverAnsweredError(
                f"{ride.outage.describe()} has not answered once since this run started "
                f"({ride.probes + 1} tries over {waited / 1000:.1f}s, the last: "
                f"{ride.outage.error}); {unanswered[1]}")
        if waited > self.tolerance_ms:
            raise OutageTooLongError(
                f"{outage.describe()} has not answered for {waited / 1000:.1f}s "
                f"(since {format_time(ride.began)}), longer "
                f"than [replay] outage_tolerance {format_duration(self.tolerance_ms)}:"
                f" {ride.outage.error}")
        delay = min(delay * 2, BACKOFF_CAP_S)
        if unanswered is not None:  # the last probe at the bound, not past it
            delay = max(0.1, min(delay, (unanswered[0] - waited) / 1000))
        return delay

    def settle(self, error: str | None = None) -> None:
        """The outage being resumed from is over (a run ended), or ended the run
        (``error``): its ledger step is closed."""
        if self._open is None:
            return
        ride, step = self._open
        self._open = None
        if ride.ended is None:
            ride.ended = now_ms()
        self._close_step(step, ride, error)

    # -- the ledger step (best effort: the ledger itself may be what is down) --------------

    def _open_step(self, ride: RiddenOutage) -> int | None:
        if self.ledger is None or self.migration_id is None or ride.outage.service == "ledger":
            return None
        try:
            # status shows the wait only while this process lives (its step's pid)
            return self.ledger.start_step(self.migration_id, OUTAGE_STEP, now=ride.began,
                                          metrics={**ride.to_json(), "stream": self.stream})
        except Exception as exc:  # a second outage: the step is written later
            log.warning("cannot record the outage in the ledger yet: %s", first_line(exc))
            return None

    def _close_step(self, step: int | None, ride: RiddenOutage, error: str | None) -> None:
        if self.ledger is None or self.migration_id is None:
            return
        metrics = {**ride.to_json(), "stream": self.stream}
        try:
            if step is None:
                step = self.ledger.start_step(self.migration_id, OUTAGE_STEP, now=ride.began)
            self.ledger.finish_step(step, StepStatus.FAILED if error else StepStatus.SUCCEEDED,
                                    metrics, error, now=ride.ended)
        except Exception as exc:  # the run goes on; the log keeps it
            log.warning("cannot record the outage of %s in the ledger: %s",
                        ride.outage.describe(), first_line(exc))


def close_stale_outages(ledger: Ledger, migration_id: int, stream: str) -> None:
    """Outage steps left running by a run that ended while it waited (killed): failed."""
    for step in ledger.steps(migration_id, OUTAGE_STEP):
        if step.status is StepStatus.RUNNING and (step.metrics or {}).get(
                "stream", stream) == stream:
            ledger.finish_step(step.id, StepStatus.FAILED, step.metrics,
                               "the run waiting for it ended before it answered")
