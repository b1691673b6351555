"""A step's end recorded though its ledger fails under it
(:meth:`~hbase_migrate.audit.migrations_book.MigrationBook.step`).

A full disk: the room kept for the step (:class:`~hbase_migrate.audit.space.Spare`) is given
up and its end recorded again, else it is recorded failed with no metrics (often its biggest
write), so that no step is left ``running``. A ledger that stops answering as a failed step
is recorded (a database restarting) is asked again for up to the step's ``record_wait``; then
the step is left to the next reader, which finds its process gone.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hbase_migrate.audit.engine import first_line, lost_ledger
from hbase_migrate.audit.records import StepStatus
from hbase_migrate.audit.space import Spare, is_full

log = logging.getLogger(__name__)
# Records one step's outcome: (status, metrics, error), the book's finish_step for that step.
Finish = Callable[[StepStatus, Mapping[str, Any], str | None], None]


@dataclass(frozen=True)
class StepEnd:
    """How the step ``what`` (``copy step 12``) of the ledger ``url`` ends: ``finish``
    records its outcome, ``spare`` is the room kept to record it."""

    finish: Finish
    spare: Spare
    what: str
    url: str

    def record(self, status: StepStatus, metrics: Mapping[str, Any],
               error: str | None) -> None:
        """Record the end the step's block left; on a full disk the spare is given up and
        the end recorded again (a warning says so), and if there is still no room the step
        is recorded failed with no metrics and the full disk's error raised."""
        try:
            self.finish(status, metrics, error)
        except BaseException as exc:
            if not is_full(exc) or not self._again_in_spare(status, metrics, error):
                raise
            log.warning("ledger %s: %s recorded its end in the room kept for it: the "
                        "ledger's disk is full (%s)", self.url, self.what, exc)

    def failed(self, exc: BaseException, metrics: Mapping[str, Any], wait: float) -> None:
        """Record the step failed by ``exc``, its block's exception (a full disk's: in the
        spare given up); a ledger that does not answer is asked again for up to ``wait``
        seconds, then left."""
        if is_full(exc):
            self.spare.release()
        self._record_failure(metrics, f"{type(exc).__name__}: {exc}",
                             wait if lost_ledger(exc) is not None else 0.0)

    def _again_in_spare(self, status: StepStatus, metrics: Mapping[str, Any],
                        error: str | None) -> bool:
        """The end met a full disk: the spare given up, it is recorded again (True); still
        no room, the step is recorded failed with no metrics (False)."""
        self.spare.release()
        try:
            self.finish(status, metrics, error)
            return True
        except BaseException as again:
            if not is_full(again):
                raise
            self.finish(StepStatus.FAILED, {}, f"{type(again).__name__}: {again}")
            return False

    def _record_failure(self, metrics: Mapping[str, Any], error: str, wait: float) -> None:
        """Record the step failed with ``error``; a ledger that does not answer is asked
        again for up to ``wait`` seconds (with none, its error propagates), then left."""
        deadline = time.monotonic() + wait
        delay = 0.5
        while True:
            try:
                self.finish(StepStatus.FAILED, metrics, error)
                return
            except Exception as again:
                lost = lost_ledger(again)
                if lost is None or not wait:
                    raise
                if time.monotonic() + delay > deadline:
                    log.info("ledger %s: %s not recorded failed: the ledger did not answer "
                             "for %.0f s", self.url, self.what, wait)
                    return
                if delay == 0.5:
                    log.warning("ledger %s does not answer (%s): asking it again for up to "
                                "%.0f s to record that %s failed", self.url,
                                first_line(lost.orig or lost), wait, self.what)
                time.sleep(delay)
                delay = min(2 * delay, 5.0)
