"""The parts a step is split into, for a DAG to map one operator over: the grid shows each
part, and a retry (or a clear of one map index) redoes only the failed one. Nothing is
recorded; a run that names no migration is skipped.

* :class:`ReplayPartsOperator`: the parts of the next catch-up
  (:func:`hbase_migrate.lifecycle.replay.replay_parts`: one per WAL chain, chains a region
  move ties together in one), for ``ReplayOperator.expand(chains=...)``.
* :class:`ValidatePartsOperator`: groups of the planned key ranges
  (:func:`hbase_migrate.lifecycle.validate.validation_parts`; the ``parts`` Param, default
  ``[ranges] parts``), for ``ValidateOperator.expand(part=...)``; the run's judge is a
  ``ValidateOperator(judge=True)``.
* :class:`SnapshotPartsOperator`: the same groups for the copy, for
  ``SnapshotOperator.expand(part=...)``, once the plan step
  (:func:`hbase_migrate.lifecycle.snapshot.snapshot_parts`) fixed T0 and the ranges (the
  one part operator that records a step); none with the ``hbase`` method; the copy's end
  is a ``SnapshotOperator(finish=True)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperator

if TYPE_CHECKING:
    from airflow.sdk import Context

    from hbase_migrate.config import MigrationSpec


class PartsOperator(BaseOperator):
    """Returns the parts of the step ``what`` for the run's migration."""

    ui_color = "#e8eef7"
    what = "parts"

    def parts(self, spec: MigrationSpec, params: dict[str, Any], context: Context
              ) -> list[Any]:
        raise NotImplementedError

    def execute(self, context: Context) -> list[Any]:
        from airflow.sdk.exceptions import AirflowFailException

        from hbase_migrate.errors import ConfigError
        from hbase_migrate_airflow.migration import NoMigration, migration_spec, run_params
        from hbase_migrate_airflow.operators.lifecycle import skip

        try:
            params = run_params(context)
            spec = migration_spec(params, self.dag_id)
            parts = self.parts(spec, params, context)
        except NoMigration as nothing:
            skip(self, str(nothing))
        except ConfigError as exc:
            raise AirflowFailException(f"{self.what} parts: {exc}") from exc
        self.log.info("migration %s: %d part(s) to %s: %s", spec.name, len(parts), self.what,
                      "; ".join(map(str, parts)) or "none")
        return parts


class ReplayPartsOperator(PartsOperator):
    """The parts (lists of chain ids) of the replay the run's migration waits for."""

    what = "replay"

    def parts(self, spec: MigrationSpec, params: dict[str, Any], context: Context
              ) -> list[Any]:
        from hbase_migrate.lifecycle.replay import replay_parts

        return replay_parts(spec)


class ValidatePartsOperator(PartsOperator):
    """The parts (``[i, n]``) of a validation of the run's migration."""

    what = "validate"

    def parts(self, spec: MigrationSpec, params: dict[str, Any], context: Context
              ) -> list[Any]:
        from hbase_migrate.lifecycle.validate import validation_parts

        return validation_parts(spec, parts=params.get("parts"))


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
        for note in [*plan.metrics.get("notes", []), *plan.metrics.get("skipped", [])]:
            self.log.info("%s", note)
        parts: list[Any] = plan.metrics["parts"]
        return parts


def snapshot_tasks() -> tuple[BaseOperator, BaseOperator]:
    """A copy in parts, inside a DAG: ``plan_snapshot`` >> ``snapshot_part`` (mapped, one per
    group of ranges; none with the ``hbase`` method) >> ``snapshot`` (the end of the copy,
    or the whole ``hbase`` copy: it runs unless something before it failed); returns the
    first and the last task."""
    from hbase_migrate_airflow.operators.lifecycle import SnapshotOperator

    plan = SnapshotPartsOperator(task_id="plan_snapshot")
    parts = SnapshotOperator.partial(task_id="snapshot_part").expand(part=plan.output)
    finish = SnapshotOperator(task_id="snapshot", finish=True, trigger_rule="none_failed")
    parts >> finish
    return plan, finish


def validation_tasks(*, live: bool = False, **plan_args: Any) -> tuple[BaseOperator, Any]:
    """A validation in parts, inside a DAG: ``plan_validation`` >> ``validate_part``
    (mapped, one per group of ranges) >> ``validate`` (the judge, whose result is the
    validation's); returns the first and the last task. ``plan_args``: more arguments of
    the plan (a trigger rule)."""
    from hbase_migrate_airflow.operators.lifecycle import ValidateOperator

    plan = ValidatePartsOperator(task_id="plan_validation", **plan_args)
    parts = ValidateOperator.partial(task_id="validate_part", live=live).expand(
        part=plan.output)
    judge = ValidateOperator(task_id="validate", live=live, judge=True)
    parts >> judge
    return plan, judge
