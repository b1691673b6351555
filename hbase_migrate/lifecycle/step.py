"""What every lifecycle step shares: its ledger step, its state moves, its clients."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from hbase_migrate import runstate
from hbase_migrate.audit.engine import first_line, lost_ledger
from hbase_migrate.audit.errors import LedgerUnreachableError
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.migrations_book import OpenStep
from hbase_migrate.audit.records import (
    NEGATIVE_VERDICTS,
    MigrationRecord,
    MigrationState,
    Provenance,
)
from hbase_migrate.audit.space import is_full
from hbase_migrate.config import MigrationSpec
from hbase_migrate.errors import ConfigError, HBaseMigrateError
from hbase_migrate.hbase import open_cluster
from hbase_migrate.lifecycle.missing import explained
from hbase_migrate.lifecycle.readiness import refusal
from hbase_migrate.lifecycle.result import StepResult

# How long a step whose ledger stopped answering asks it again to record that the step
# failed: a database restarting is back within seconds.
LEDGER_WAIT_S = 30.0


class StepRefusedError(ConfigError):
    """The migration is not ready for the step (its state is too early): nothing was done."""


@dataclass
class StepContext:
    """An open step: the ledger, the migration as the step started, the step being
    recorded (its metrics to fill)."""

    ledger: Ledger
    migration: MigrationRecord
    step: OpenStep
    # A negative verdict is recorded but does not fail the step (validate's live mode).
    verdict_fails: bool = True

    @property
    def step_id(self) -> int:
        return self.step.id

    @property
    def metrics(self) -> dict[str, Any]:
        return self.step.metrics

    @property
    def state(self) -> MigrationState:
        return MigrationState(self.migration.state)

    def advance(self, state: MigrationState) -> None:
        """Move the migration to ``state`` if that is forward (a rerun of an earlier step
        leaves a later state alone)."""
        record = self.ledger.migration(self.migration.name)
        current = MigrationState(record.state) if record else MigrationState.CREATED
        if current is MigrationState.FAILED or current.rank < state.rank:
            self.ledger.update_migration(self.migration.id, state=state)

    def result(self) -> StepResult:
        """The step's result: its id, the migration's state now, and the metrics."""
        record = self.ledger.migration(self.migration.name)
        return StepResult(self.migration.name, self.step_id,
                          MigrationState(record.state) if record else None, self.metrics)


@contextmanager
def recorded_step(spec: MigrationSpec, kind: str, provenance: Provenance | None,
                  ) -> Iterator[StepContext]:
    """Run a block as the ledger step ``kind``; an exception fails the step and the
    migration (``failed``), and propagates (one hiding a missing table or family as the
    :class:`~hbase_migrate.cluster.missing.MissingSchemaError` that names it); a negative
    verdict or a non-zero exit code in the metrics fails the step. A step the user stops
    (Ctrl-C) fails as :class:`~hbase_migrate.runstate.StepInterrupted` and leaves the
    migration's state as it was: a rerun goes on from what the ledger holds."""
    runstate.reset()
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.ensure_spec(spec)
        try:
            with ledger.step(record.id, kind, provenance, record_wait=LEDGER_WAIT_S) as step:
                context = StepContext(ledger, record, step)
                try:
                    with open_cluster(spec.target).recorded_losses(step.metrics):
                        yield context
                except KeyboardInterrupt:
                    runstate.request_stop()
                    raise _interrupted(ledger, record, kind) from None
                except HBaseMigrateError as exc:  # HBase's terse "scan big: big" explained
                    better = explained(spec, exc, target_made=kind != "prepare")
                    if better is None:
                        raise
                    raise better from exc
                except Exception as exc:
                    lost = lost_ledger(exc)
                    if lost is None:
                        raise
                    raise LedgerUnreachableError(
                        f"{kind} of migration {record.name!r} stopped: its ledger "
                        f"{ledger.url} did not answer ({first_line(lost.orig or lost)}); "
                        "what was recorded before is kept: run the same command again once "
                        "the ledger answers") from exc
                verdict = context.metrics.get("verdict")
                if (context.verdict_fails and verdict in NEGATIVE_VERDICTS
                        ) or context.metrics.get("exit_code", 0) != 0:
                    step.fail()
        except BaseException as exc:
            refused = isinstance(exc, (StepRefusedError, runstate.StepInterrupted))
            if not refused and MigrationState(record.state) is not MigrationState.CUT_OVER:
                _mark_failed(ledger, record)
            raise


def _mark_failed(ledger: Ledger, record: MigrationRecord) -> None:
    """The migration ``failed``, unless its ledger does not answer (a rerun's step finds
    the failed one by its process, gone)."""
    try:
        ledger.update_migration(record.id, state=MigrationState.FAILED)
    except Exception as exc:
        if lost_ledger(exc) is None and not is_full(exc):
            raise


def _interrupted(ledger: Ledger, record: MigrationRecord, kind: str
                 ) -> runstate.StepInterrupted:
    """What a step the user stopped had done (its key ranges, as far as it counted them)
    and that a rerun goes on."""
    meter = runstate.meter
    done = (f" after {meter.ranges_done} of {meter.ranges_total} key range(s)"
            if meter.ranges_total else "")
    state = ledger.migration(record.name)
    return runstate.StepInterrupted(
        f"{kind} of migration {record.name!r} stopped{done} before it finished; the "
        f"migration stays {(state or record).state}: run the same command again")


def require(context: StepContext, at_least: MigrationState, step: str, before: str) -> None:
    """Refuse a step the migration is not ready for; a failed migration is ready when its
    ledger steps reached ``at_least`` (:mod:`~hbase_migrate.lifecycle.readiness`), else
    the refusal names the step that failed, when and why, and what to run."""
    if context.state is MigrationState.FAILED:
        steps = context.ledger.steps(context.migration.id)
        why = refusal(context.migration.name, steps, at_least, step, before)
        if why is not None:
            raise StepRefusedError(why)
    elif context.state.rank < at_least.rank:
        raise StepRefusedError(f"migration {context.migration.name!r} is {context.state}: "
                               f"{step} needs it {at_least} or later; run {before} first")
