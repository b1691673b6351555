"""The crash harness's schedule: which step of the migration each kill hits and when.

The steps are killed in turn (round-robin, in lifecycle order) so that a run of ``n`` kills
spreads them evenly; each kill waits a seeded fraction of the step's expected duration
before the SIGKILL. The schedule is a pure function of the seed and the number of kills, so
a run that found a defect can be repeated with the same seed. How long a step takes is only
known while the harness runs (it measures each rerun), so the schedule holds fractions, not
seconds; the same seed gives the same kills at moments that vary with the machine's speed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from hbase_migrate.errors import HBaseMigrateError

# The killed steps, in the order a user runs them.
STEPS: tuple[str, ...] = (
    "prepare",  # the target tables
    "snapshot",  # T0 and the copy (the first round copies; later ones find it done)
    "replay",  # a catch-up replay, the follow stopped meanwhile
    "follow",  # replay --follow, started again after the kill
    "validate-live",  # validate --live beside the follow
    "validate-part",  # one part of a validation in parts (--part I/2 --run K)
    "validate-judge",  # validate --judge --run K of the same round's parts
    "repair",  # validate --repair
    "cutover",  # cutover check
)
# The CDC stream (``cdc``: the WAL edits to Kafka, a catch-up run, and ``cdc --follow``),
# killed only where a Kafka broker runs (``soak-crash --cdc``): then last in each round.
CDC_STEP = "cdc"
CDC_FOLLOW_STEP = "cdc-follow"
CDC_STEPS: tuple[str, ...] = (CDC_STEP, CDC_FOLLOW_STEP)
STEPS_WITH_CDC: tuple[str, ...] = (*STEPS, *CDC_STEPS)
SHORTEST, LONGEST = 0.05, 0.95  # of the step's work


@dataclass(frozen=True)
class Kill:
    """One planned kill: the ``index``-th, of ``step`` in round ``round`` (each round kills
    every step once), at ``fraction`` of the step's work (the harness measures it);
    ``part`` is the validation part (1 or 2) a ``validate-part`` kill hits."""

    index: int
    step: str
    round: int
    fraction: float
    part: int = 1

    def line(self) -> str:
        return f"#{self.index} {self.step} (round {self.round}) at {self.fraction:.0%}"


def kill_schedule(seed: int, kills: int, steps: tuple[str, ...] = STEPS) -> list[Kill]:
    """``kills`` kills over ``steps`` in turn, each at a fraction of its step drawn from
    ``random.Random(seed)``."""
    if not steps:
        raise HBaseMigrateError("crash schedule: no step to kill")
    if kills < 0:
        raise HBaseMigrateError(f"crash schedule: {kills} kills asked for; 0 or more")
    rng = random.Random(seed)
    plan = []
    for index in range(kills):
        fraction = round(rng.uniform(SHORTEST, LONGEST), 3)
        part = rng.choice((1, 2))
        plan.append(Kill(index, steps[index % len(steps)], index // len(steps), fraction,
                         part))
    return plan


def per_step(plan: list[Kill]) -> dict[str, int]:
    """How many kills each step gets, in step order."""
    counts: dict[str, int] = {}
    for kill in plan:
        counts[kill.step] = counts.get(kill.step, 0) + 1
    return counts
