"""The parts a step is split into, for a DAG to map one operator over: the grid shows each
part, and a retry (or a clear of one map index) redoes only the failed one. Nothing is
recorded (but the copy's plan); a run with no migration to act on is skipped.

A parts operator plans every migration the run acts on: those the ``migrations`` task
listed (:class:`~hbase_migrate_airflow.operators.migrations.MigrationsOperator`, its output
given as ``migrations``), else the one the run names. It returns one kwargs dict per part,
``{"migration": ref, <key>: part}``, for ``Operator.partial(...).expand_kwargs(...)``; a
migration that cannot be planned (a configuration error) fails the task when it is the only
one, and otherwise becomes one ``{"migration": ref, "unplanned": reason}`` whose mapped task
fails at once with the reason, so the other migrations go on.

* :class:`ReplayPartsOperator`: the parts of the next catch-up (``chains``:
  :func:`hbase_migrate.lifecycle.replay.replay_parts`, one per WAL chain, chains a region
  move ties together in one), for ``ReplayOperator``.
* :class:`ValidatePartsOperator`: groups of the planned key ranges (``part``:
  :func:`hbase_migrate.lifecycle.validate.validation_parts`; the ``parts`` Param, default
  ``[ranges] parts``), for ``ValidateOperator``; each migration's judge is a
  ``ValidateOperator(judge=True)``.
* :class:`SnapshotPartsOperator`: the same groups for the copy, for ``SnapshotOperator``,
  once the plan step (:func:`hbase_migrate.lifecycle.snapshot.snapshot_parts`) fixed T0 and
  the ranges (the one part operator that records a step); none with the ``hbase`` method;
  the copy's end is a ``SnapshotOperator(finish=True)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperator

if TYPE_CHECKING:
    from airflow.sdk import Context

    from hbase_migrate.config import MigrationSpec


class PartsOperator(BaseOperator):
    """Returns the parts of the step ``what`` for each migration of the run."""

    ui_color = "#e8eef7"
    what = "parts"
    key = "part"  # the argument of the mapped operator a part is given as
    template_fields = ("migrations",)

    def __init__(self, *, migrations: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.migrations = migrations  # the refs (an XComArg until rendered), or None

    def parts(self, spec: MigrationSpec, params: dict[str, Any], context: Context
              ) -> list[Any]:
        raise NotImplementedError

    def execute(self, context: Context) -> list[dict[str, Any]]:
        from airflow.sdk.exceptions import AirflowFailException

        from hbase_migrate.errors import ConfigError
        from hbase_migrate_airflow.migration import (
            NoMigration,
            migration_spec,
            ref_name,
            run_migrations,
            with_ref,
        )
        from hbase_migrate_airflow.operators.lifecycle import skip, unmendable

        found: list[dict[str, Any]] = []
        try:
            refs = list(self.migrations or run_migrations(context, self.dag_id))
        except NoMigration as nothing:
            skip(self, str(nothing))
        except ConfigError as exc:
            raise AirflowFailException(f"{self.what} parts: {exc}") from exc
        for ref in refs:
            try:
                params = with_ref(context["params"], ref)
                spec = migration_spec(params, self.dag_id)
                parts = self.parts(spec, params, context)
            except NoMigration as nothing:
                skip(self, str(nothing))
            except Exception as exc:
                if not unmendable(exc):
                    raise
                reason = f"{self.what} parts: {exc}"
                if len(refs) == 1:
                    raise AirflowFailException(reason) from exc
                self.log.error("migration %s: %s", ref_name(ref), reason)
                found.append({"migration": ref, "unplanned": reason})
                continue
            self.log.info("migration %s: %d part(s) to %s: %s", spec.name, len(parts),
                          self.what, "; ".join(map(str, parts)) or "none")
            found.extend({"migration": ref, self.key: part} for part in parts)
        return found


class ReplayPartsOperator(PartsOperator):
    """The parts (lists of chain ids) of the replay the run's migration waits for."""

    what = "replay"
    key = "chains"

    def parts(self, spec: MigrationSpec, params: dict[str, Any], context: Context
              ) -> list[Any]:
        from hbase_migrate.lifecycle.replay import replay_parts

        return replay_parts(spec)


class ValidatePartsOperator(PartsOperator):
    """The parts (``[i, n]``) of a validation of the run's migration; with ``rounds``, none
    where the live validation of a replay round can be exact (the judge validates it)."""

    what = "validate"

    def __init__(self, *, rounds: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rounds = rounds

    def parts(self, spec: MigrationSpec, params: dict[str, Any], context: Context
              ) -> list[Any]:
        from hbase_migrate.lifecycle.validate import validation_parts

        return validation_parts(spec, parts=params.get("parts"), rounds=self.rounds)


class SnapshotPartsOperator(PartsOperator):
    """The plan of the run's copy (T0: the ``watermark`` Param, default now, kept once
    recorded) and its parts (``[i, n]``; none with the ``hbase`` method or once copied)."""

    what = "copy"

    def parts(self, spec: MigrationSpec, params: dict[str, Any], context: Context
              ) -> list[Any]:
        from hbase_migrate.lifecycle.snapshot import snapshot_parts
        from hbase_migrate.timeutil import parse_time
        from hbase_migrate_airflow.operators.lifecycle import task_provenance

        given = params.get("watermark")
        plan = snapshot_parts(spec, parts=params.get("parts"),
                              watermark=parse_time(given, name="watermark") if given else None,
                              method=params.get("snapshot_method"),
                              provenance=task_provenance(self, context))
        from hbase_migrate.snapshot.choose import MethodChoice

        choice = [MethodChoice.of(plan.metrics).line] if "method_reason" in plan.metrics else []
        for note in [*choice, *plan.metrics.get("notes", []),
                     *plan.metrics.get("skipped", [])]:
            self.log.info("%s", note)
        parts: list[Any] = plan.metrics["parts"]
        return parts


def snapshot_tasks() -> tuple[BaseOperator, BaseOperator]:
    """A copy in parts, inside a DAG: ``plan_snapshot`` >> ``snapshot_part`` (mapped, one per
    group of ranges; none with the ``hbase`` method) >> ``snapshot`` (the end of the copy,
    or the whole ``hbase`` copy: it runs unless something before it failed); returns the
    first and the last task."""
    from hbase_migrate_airflow.operators.lifecycle import SnapshotOperator
    from hbase_migrate_airflow.operators.migrations import LABEL

    plan = SnapshotPartsOperator(task_id="plan_snapshot")
    parts = SnapshotOperator.partial(task_id="snapshot_part",
                                     map_index_template=LABEL).expand_kwargs(plan.output)
    finish = SnapshotOperator(task_id="snapshot", finish=True, trigger_rule="none_failed")
    parts >> finish
    return plan, finish


def validation_tasks(*, live: bool = False, rounds: bool = False, migrations: Any = None,
                     **plan_args: Any) -> tuple[BaseOperator, Any]:
    """A validation in parts, inside a DAG: ``plan_validation`` >> ``validate_part``
    (mapped, one per group of ranges of each migration) >> ``validate`` (the judge, whose
    result is the validation's); returns the first and the last task. ``migrations``: the
    output of the run's ``migrations`` task: the judge is then mapped over them, one per
    migration, each judging when every part is done (its own parts' failures make it
    refuse, the others' do not hold it back); without it the run's one migration.
    ``rounds`` (live, after a replay): no part where the replay round's validation can be
    exact, the judge validating the round. ``plan_args``: more arguments of the plan (a
    trigger rule)."""
    from hbase_migrate_airflow.operators.lifecycle import ValidateOperator
    from hbase_migrate_airflow.operators.migrations import LABEL

    plan = ValidatePartsOperator(task_id="plan_validation", migrations=migrations,
                                 rounds=rounds, **plan_args)
    parts = ValidateOperator.partial(task_id="validate_part", live=live,
                                     map_index_template=LABEL).expand_kwargs(plan.output)
    if migrations is None:
        judge: Any = ValidateOperator(task_id="validate", live=live, judge=True)
    else:
        judge = ValidateOperator.partial(
            task_id="validate", live=live, judge=True, trigger_rule="all_done",
            map_index_template=LABEL).expand(migration=migrations)
    parts >> judge
    return plan, judge
