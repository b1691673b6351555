"""The limits in force for a step: the migration config's ``[limits]`` overlaid with what
``hbase-migrate limits set`` keeps in the ledger, re-read at most every ``refresh``.

A ledger that cannot be read (a PostgreSQL outage, a file being replaced) keeps the limits
read last: a throttle never stops a step.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hbase_migrate.config import LimitSettings, MigrationSpec

if TYPE_CHECKING:
    from hbase_migrate.audit.ledger import Ledger

log = logging.getLogger(__name__)

# The kinds of work a step throttles, each with its units and the [limits] key of each.
KINDS: dict[str, tuple[tuple[str, str], ...]] = {
    "copy": (("cells", "copy_cells_per_second"), ("bytes", "copy_bytes_per_second")),
    "validate": (("cells", "validate_cells_per_second"),),
    "replay": (("cells", "replay_cells_per_second"),),
}


@dataclass(frozen=True)
class ThrottlePlan:
    """What every task of one step needs to throttle itself (picklable: it travels to Spark
    tasks): the kind of work, the migration and its ledger, the configured limits and how
    many tasks run at once (each takes ``1 / tasks`` of every limit)."""

    kind: str
    migration: str
    ledger_url: str | None
    settings: LimitSettings
    tasks: int = 1

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"no throttle kind {self.kind!r}; expected one of {', '.join(KINDS)}")
        if self.tasks < 1:
            raise ValueError(f"a throttle plan needs tasks >= 1, got {self.tasks}")

    @classmethod
    def of(cls, spec: MigrationSpec, kind: str, tasks: int = 1) -> ThrottlePlan:
        return cls(kind, spec.name, spec.ledger_url or None, spec.limits, max(1, tasks))

    def limit_keys(self) -> tuple[str, ...]:
        return tuple(key for _, key in KINDS[self.kind])


def overlay(settings: LimitSettings, overrides: dict[str, Any]) -> LimitSettings:
    """``settings`` with the ledger's values (keys of ``[limits]``) in their place."""
    known = {k: v for k, v in overrides.items() if hasattr(settings, k)}
    return settings.replace(known) if known else settings


_lent: dict[str, Ledger] = {}  # ledger URL -> the open ledger a step here lends


@contextmanager
def lending(ledger_url: str, ledger: Ledger) -> Iterator[None]:
    """During the block, the limits of the ledger at ``ledger_url`` are read from
    ``ledger`` (a step's own, already open) instead of a connection opened per read."""
    before = _lent.get(ledger_url)
    _lent[ledger_url] = ledger
    try:
        yield
    finally:
        if before is None:
            del _lent[ledger_url]
        else:
            _lent[ledger_url] = before


def read_overrides(ledger_url: str, migration: str) -> dict[str, Any]:
    """The limits the ledger holds for ``migration`` (the newest value of each key)."""
    from hbase_migrate.audit.ledger import Ledger

    lent = _lent.get(ledger_url)
    if lent is not None:
        return _overrides(lent, migration)
    with Ledger.open(ledger_url, upgrade_schema=False) as ledger:
        return _overrides(ledger, migration)


def _overrides(ledger: Ledger, migration: str) -> dict[str, Any]:
    record = ledger.migration(migration)
    return ledger.limit_overrides(record.id) if record is not None else {}


class LimitWatch:
    """The limits in force for ``plan``, re-read from the ledger when :meth:`due`."""

    def __init__(self, plan: ThrottlePlan,
                 read: Callable[[str, str], dict[str, Any]] = read_overrides,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.plan, self._read, self._clock = plan, read, clock
        self.settings = plan.settings
        self.next_read = 0.0  # clock time of the next read; 0: at the first use

    def current(self, now: float | None = None) -> LimitSettings:
        """The limits in force, read again first when ``refresh`` has passed."""
        now = self._clock() if now is None else now
        if now >= self.next_read:
            self.next_read = now + self.settings.refresh / 1000
            if self.plan.ledger_url is not None:
                try:
                    found = self._read(self.plan.ledger_url, self.plan.migration)
                except Exception as exc:  # the step goes on with the limits read last
                    log.warning("limits of migration %s: the ledger could not be read (%s); "
                                "keeping the limits read last", self.plan.migration, exc)
                else:
                    self.settings = overlay(self.plan.settings, found)
                    self.next_read = now + self.settings.refresh / 1000
        return self.settings

    def limits(self) -> dict[str, float | None]:
        """The whole step's limit per key of the plan's kind (None: unlimited)."""
        settings = self.current()
        return {key: float(getattr(settings, key)) or None for key in self.plan.limit_keys()}

    def report(self) -> dict[str, Any]:
        """What a step's metrics keep: the limits in force as it ends (per second, None:
        unlimited) and whether they were adaptive."""
        return {**self.limits(), "adaptive": self.settings.adaptive}
