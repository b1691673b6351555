"""How far a failed migration had got, read from its ledger steps, and why a step is refused.

A step that raises moves the migration to ``failed``, which forgets how far it had got; its
steps still say it. The furthest state the migration reached is the furthest one a step of
each kind made the last time it ended (a kind whose last run failed made nothing: what it
made may be gone or incomplete). A step needing an earlier state is refused, naming the
step that failed to make it, when, why, and what to run.
"""

from __future__ import annotations

from collections.abc import Sequence

from hbase_migrate.audit.records import MigrationState, StepRecord, StepStatus
from hbase_migrate.audit.status import SNAPSHOT_PART_STEP, SNAPSHOT_PLAN_STEP
from hbase_migrate.timeutil import format_time

# The state a step of each kind leaves the migration in when it succeeds.
MAKES: dict[str, MigrationState] = {
    "prepare": MigrationState.SCHEMA_READY,
    SNAPSHOT_PLAN_STEP: MigrationState.COPYING,
    SNAPSHOT_PART_STEP: MigrationState.COPYING,
    "snapshot": MigrationState.COPIED,
    "replay": MigrationState.REPLAYING,
}
# The command that runs a step of each kind again.
COMMAND = {SNAPSHOT_PLAN_STEP: "snapshot --plan", SNAPSHOT_PART_STEP: "snapshot --part"}
REFUSED = "StepRefusedError:"  # how the ledger records a refusal (no attempt: no outcome)


def outcomes(steps: Sequence[StepRecord]) -> list[StepRecord]:
    """The steps that ended with an outcome (not running, not refused), in order."""
    return [s for s in steps if s.status is not StepStatus.RUNNING
            and not (s.error or "").startswith(REFUSED)]


def reached(steps: Sequence[StepRecord]) -> MigrationState:
    """The furthest state the last step of each kind left the migration in."""
    last: dict[str, StepRecord] = {}
    for s in outcomes(steps):
        if s.kind in MAKES:
            last[s.kind] = s
    made = [MAKES[k] for k, s in last.items() if s.status is StepStatus.SUCCEEDED]
    return max(made, key=lambda state: state.rank, default=MigrationState.CREATED)


def blocking_failure(steps: Sequence[StepRecord], needed: MigrationState
                     ) -> StepRecord | None:
    """The last failed step of a kind that makes ``needed`` or an earlier state."""
    failed = [s for s in outcomes(steps) if s.status is StepStatus.FAILED
              and s.kind in MAKES and MAKES[s.kind].rank <= needed.rank]
    return failed[-1] if failed else None


def refusal(migration: str, steps: Sequence[StepRecord], needed: MigrationState,
            step: str, before: str) -> str | None:
    """Why a failed migration is not ready for ``step`` (which needs it ``needed``), or
    None when its steps reached that far; ``before`` is the step that makes ``needed``."""
    got = reached(steps)
    if got.rank >= needed.rank:
        return None
    failed = blocking_failure(steps, needed)
    if failed is None:
        return (f"migration {migration!r} is failed and its steps reached {got}: {step} "
                f"needs it {needed} or later; run {before} first")
    again = COMMAND.get(failed.kind, failed.kind)
    then = "" if failed.kind == before else f", then {before}"
    cause = (failed.error or "no reason recorded").strip().splitlines()[0]
    when = format_time(failed.ended_at or failed.started_at)
    return (f"migration {migration!r}: {step} needs the migration {needed} or later, but "
            f"step {failed.kind} (#{failed.id}) failed at {when} ({cause}); nothing was done: "
            f"fix that cause and run {again} again{then}")
