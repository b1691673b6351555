"""What the writes to a Bigtable instance left out, counted per process and recorded in
each ledger step: the accepted losses (``[target] accept``) by finding name, and the puts
dropped because an earlier HBase delete masks them (:mod:`.masking`). The clients of one
instance in a process (a step's writers each have one) share the counters and the delete
markers met."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hbase_migrate.bigtable.masking import MarkerMemory
from hbase_migrate.bigtable.settings import BigtableSettings

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
