"""What the writes to a Bigtable instance left out, counted per process and recorded in
each ledger step: the accepted losses (``[target] accept``) by finding name, and the puts
dropped because an earlier HBase delete masks them (:mod:`.masking`). The clients of one
instance in a process (a step's writers each have one) share the counters and the delete
markers met. :func:`migration_losses` gathers them from a migration's ledger steps (the
cutover gate and the report list them)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from hbase_migrate.bigtable.masking import MarkerMemory
from hbase_migrate.config_bigtable import BigtableSettings

_MEMORIES: dict[str, MarkerMemory] = {}
_LOSSES: dict[str, Counter[str]] = {}


def shared(settings: BigtableSettings) -> tuple[MarkerMemory, Counter[str]]:
    """The delete markers met and the losses counted by the instance's clients."""
    return (_MEMORIES.setdefault(settings.identity, MarkerMemory()),
            _LOSSES.setdefault(settings.identity, Counter()))


def _counted(settings: BigtableSettings) -> tuple[dict[str, int], int]:
    memory, losses = shared(settings)
    return dict(losses), sum(memory.masked.values())


@contextmanager
def recorded_losses(settings: BigtableSettings | None, metrics: dict[str, Any]
                    ) -> Iterator[None]:
    """With a Bigtable target (``settings``), put into a step's ``metrics`` (``bigtable``)
    what its writes left out, however it ends; nothing without one."""
    if settings is None:
        yield
        return
    losses, masked = _counted(settings)
    try:
        yield
    finally:
        now, masked_now = _counted(settings)
        metrics["bigtable"] = {
            "known_losses": {k: n - losses.get(k, 0) for k, n in sorted(now.items())
                             if n > losses.get(k, 0)},
            "masked_puts": masked_now - masked}


class _Step(Protocol):  # a ledger step (``audit.records.StepRecord``)
    @property
    def kind(self) -> str: ...
    @property
    def metrics(self) -> dict[str, Any]: ...


def written_losses(steps: Iterable[_Step]) -> dict[str, int]:
    """Every accepted loss a migration's steps met (``prepare``'s findings accepted, the
    writes' ``bigtable.known_losses``, the validations' ``accepted_losses``), by name: how
    many cells the writes left out (a cell written again, by a second replay run, counts
    again; 0 for one found but not met by a write yet)."""
    found: Counter[str] = Counter()
    for step in steps:
        m = step.metrics
        for name in m.get("known_losses", []) if step.kind == "prepare" else []:
            found[name] += 0
        for name in m.get("accepted_losses", {}):
            found[name] += 0
        for name, cells in (m.get("bigtable") or {}).get("known_losses", {}).items():
            found[name] += cells
    return dict(sorted(found.items()))


def migration_losses(steps: Iterable[_Step]) -> dict[str, int]:
    """Every accepted loss a migration's steps met (:func:`written_losses`' names), by
    name: the source's cells the newest validation left out as that loss (0 for one it
    did not meet, or before any validation)."""
    steps = list(steps)
    validated: dict[str, int] = next(
        (s.metrics["accepted_losses"] for s in reversed(steps)
         if s.kind == "validate" and "accepted_losses" in s.metrics), {})
    return {name: int(validated.get(name, 0)) for name in written_losses(steps)}
