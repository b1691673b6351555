"""One operator per lifecycle step: build the run's migration from its Params, call the step
with the run's provenance, return a small summary (ids, watermark, counts) for XCom.

An operator mapped over the migrations a run acts on
(:class:`~hbase_migrate_airflow.operators.migrations.MigrationsOperator`) gets each one's
ref as ``migration`` (its mapped task is labelled with the migration's name); unmapped, it
takes the migration the run's Params name.

A step whose verdict is negative (a mismatch, a no-go, a replay that failed a file or found
a gap) fails the task with the step's own reasons; a configuration error, a refused step,
a missing connection (also while the spec is built) or another error whose class says no
retry can mend it (a ZooKeeper quorum that never answered: a wrong address) fails it
without retries (:func:`unmendable`); other core errors keep their message and are retried
(every step is idempotent). A run with nothing to do is skipped, its reason in the task's
log. What the step read and wrote (:mod:`hbase_migrate.lifecycle.lineage`) goes to
Airflow's OpenLineage provider.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn

from airflow.sdk import BaseOperator

if TYPE_CHECKING:
    from airflow.providers.openlineage.extractors import OperatorLineage
    from airflow.sdk import Context
    from openlineage.client.event_v2 import Dataset

    from hbase_migrate.audit.records import Provenance
    from hbase_migrate.config import MigrationSpec
    from hbase_migrate.lifecycle.lineage import Lineage
    from hbase_migrate.lifecycle.result import StepResult
    from hbase_migrate.replay.summary import RunSummary

    Outcome = StepResult | RunSummary  # what a lifecycle step returns
    Datasets = OperatorLineage[Dataset, Any]  # the OpenLineage provider's lineage of a task

BULKY = ("files", "manifest", "bulk_loads", "examples", "items")


def small(result: Outcome) -> dict[str, Any]:
    """The result's JSON without its per-file and per-example lists: what XCom carries."""
    return {k: v for k, v in result.to_json().items() if k not in BULKY}


def accepts(func: Callable[..., Any], name: str) -> bool:
    """Whether ``func`` takes the keyword argument ``name``."""
    return name in inspect.signature(func).parameters


def openlineage(lineage: Lineage | None) -> Datasets:
    """``lineage`` in the OpenLineage provider's terms (nothing when the task did no work)."""
    from airflow.providers.openlineage.extractors import OperatorLineage
    from openlineage.client.event_v2 import Dataset

    if lineage is None:
        return OperatorLineage()
    return OperatorLineage(inputs=[Dataset(d.namespace, d.name) for d in lineage.inputs],
                           outputs=[Dataset(d.namespace, d.name) for d in lineage.outputs])


def task_provenance(task: BaseOperator, context: Context) -> Provenance:
    """Who runs a step: the task (its DAG run) and the worker's host."""
    from hbase_migrate.audit.records import Provenance

    return Provenance(task.dag_id, context["run_id"], task.task_id,
                      getattr(context["ti"], "hostname", None))


def unmendable(exc: BaseException) -> bool:
    """Whether no retry of the task can mend ``exc``: an unknown connection, or a core error
    whose class fails at once (:func:`hbase_migrate.errors.fails_at_once`: a wrong
    configuration, a refused step, a service that never answered)."""
    from airflow.sdk.exceptions import AirflowNotFoundException

    from hbase_migrate.errors import fails_at_once

    return isinstance(exc, AirflowNotFoundException) or fails_at_once(exc)


def skip(task: BaseOperator, reason: str) -> NoReturn:
    """End ``task`` as skipped, the reason in its log (Airflow logs no skip's words)."""
    from airflow.sdk.exceptions import AirflowSkipException

    task.log.warning("skipped: %s", reason)
    raise AirflowSkipException(reason)


class LifecycleOperator(BaseOperator):
    """Calls one step of :mod:`hbase_migrate.lifecycle` for the DAG run's migration."""

    step: ClassVar[str]
    spark: ClassVar[bool] = False  # the step may run on the run's Spark connection
    ui_color = "#e3f0e8"
    done: tuple[MigrationSpec, Outcome] | None = None  # the step's spec and result, once run
    master_choice = ""  # which Spark master the run uses and why, once asked

    def __init__(self, *, migration: dict[str, Any] | None = None,
                 unplanned: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.migration = migration  # the ref of the migration (mapped), else the Params'
        self.unplanned = unplanned  # why the plan could not plan this migration's part

    @property
    def label(self) -> str:
        """The mapped task's name in the grid: its migration (``map_index_template``)."""
        from hbase_migrate_airflow.migration import ref_name

        name = ref_name(self.migration) if self.migration else self.task_id
        part = getattr(self, "part", None)
        chains = getattr(self, "chains", None)
        if part is not None:
            return f"{name} {part[0]}/{part[1]}"
        return f"{name} {' '.join(chains)}" if chains else name

    def run_spec(self, context: Context) -> tuple[dict[str, Any], MigrationSpec]:
        """The run's Params (with the task's migration in place of theirs) and the spec;
        skips the task when there is no migration, fails it at once when the Params,
        a connection or the ledger's record cannot name one (no retry can mend that)."""
        from airflow.sdk.exceptions import AirflowFailException, AirflowNotFoundException

        from hbase_migrate.errors import ConfigError
        from hbase_migrate_airflow.migration import (
            NoMigration,
            migration_spec,
            run_params,
            with_ref,
        )

        if self.unplanned:
            raise AirflowFailException(f"{self.step} of migration {self.label}: "
                                       f"{self.unplanned}")
        try:
            params = (with_ref(context["params"], self.migration) if self.migration
                      else run_params(context))
            return params, migration_spec(params, self.dag_id)
        except NoMigration as nothing:
            self.skip(str(nothing))
        except (ConfigError, AirflowNotFoundException) as exc:
            raise AirflowFailException(f"{self.step}: {exc}") from exc

    def call(self, spec: MigrationSpec, provenance: Provenance, params: dict[str, Any],
             context: Context) -> Outcome:
        raise NotImplementedError

    def spark_master(self, params: dict[str, Any], spec: MigrationSpec) -> str | None:
        """The master of the run's ``spark_conn_id`` (None: the migration's own ``[spark]
        master``), the choice stated in the task log and its XCom (``spark_master``; the
        engine the step then chose is its ``engine``)
        (:func:`~hbase_migrate_airflow.hooks.spark.run_master`)."""
        from hbase_migrate_airflow.hooks.spark import run_master

        master, why = run_master(params.get("spark_conn_id"), spec)
        self.log.info("%s", why)
        self.master_choice = why
        return master

    def execute(self, context: Context) -> dict[str, Any]:
        from airflow.sdk.exceptions import AirflowException, AirflowFailException

        from hbase_migrate.hbase.bigtable_target import step_line
        from hbase_migrate_airflow.hooks.spark import with_connection_conf

        params, spec = self.run_spec(context)
        changes = self.settings_changed(spec)
        try:
            if self.spark:  # the connection's Spark settings, when its master is used
                spec = with_connection_conf(params.get("spark_conn_id"), spec)
            result = self.call(spec, task_provenance(self, context), params, context)
        except Exception as exc:
            if unmendable(exc):  # a retry cannot help
                raise AirflowFailException(f"{self.step}: {exc}") from exc
            raise
        self.done = (spec, result)
        lost = step_line(result.to_json())  # a Bigtable target's accepted losses
        if lost:
            self.log.info("%s", lost)
        failure = self.failure(result)
        if failure:
            error = AirflowFailException if self.final(result) else AirflowException
            raise error(f"{self.step} of migration {spec.name!r}: {failure}")
        idle = self.idle(spec, result)
        if idle:
            self.skip(idle)
        said = {"spark_master": self.master_choice} if self.master_choice else {}
        return {**small(result), **said, **({"settings_changed": changes} if changes else {})}

    def settings_changed(self, spec: MigrationSpec) -> list[str]:
        """The migration's settings this run changes (its step records them), said in the
        task's log; they are also in its XCom."""
        from hbase_migrate.lifecycle.settings import pending_changes

        changes = pending_changes(spec)
        if changes:
            self.log.warning("migration %r: this run changes its settings: %s", spec.name,
                             "; ".join(changes))
        return changes

    def skip(self, reason: str) -> NoReturn:
        skip(self, reason)

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Datasets:
        """The step's input and output datasets, for the OpenLineage provider (called only
        when a transport is configured: the cluster ids are looked up then)."""
        from hbase_migrate.lifecycle.lineage import step_lineage

        return openlineage(step_lineage(self.step, *self.done) if self.done else None)

    def failure(self, result: Outcome) -> str | None:
        """Why the step's result is a failure, or None."""
        return None

    def final(self, result: Outcome) -> bool:
        """Whether a retry cannot change the failure."""
        return False

    def idle(self, spec: MigrationSpec, result: Outcome) -> str | None:
        """Why the step, done, had nothing to do (the task is then skipped), or None."""
        return None


class CheckOperator(LifecycleOperator):
    """Before the first write: the connections, the clusters and the source tables, and for
    a Bigtable target the pre-flight report (its findings in the task log and the XCom's
    ``preflight``; one not accepted fails the task at its first try)
    (:func:`hbase_migrate.lifecycle.check.check`; records nothing). A ``ledger`` Param is
    then remembered for the schedules (:mod:`hbase_migrate_airflow.ledgers`)."""

    step = "check"

    def call(self, spec: MigrationSpec, provenance: Provenance, params: dict[str, Any],
             context: Context) -> Outcome:
        from hbase_migrate.lifecycle.check import check
        from hbase_migrate_airflow.ledgers import remember

        checked = check(spec)
        if params.get("ledger"):
            remember(spec.ledger_url)
            self.log.info("ledger %s: the scheduled runs look in it until this migration "
                          "is cut over", params["ledger"])
        return checked


class PrepareOperator(LifecycleOperator):
    """Target tables with the source's families and split points."""

    step = "prepare"

    def call(self, spec: MigrationSpec, provenance: Provenance, params: dict[str, Any],
             context: Context) -> Outcome:
        from hbase_migrate.lifecycle import prepare

        return prepare(spec, provenance=provenance)


class SnapshotOperator(LifecycleOperator):
    """The watermark T0 (the ``watermark`` Param, default now) and the copy of ``[0, T0)``
    (the ``snapshot_method`` Param, default the config's). In parts
    (:class:`~hbase_migrate_airflow.operators.parts.SnapshotPartsOperator` fixed T0 and the
    ranges, mapped): with ``part`` (``[i, n]``) one group of the ranges at that T0; with
    ``finish=True`` the end of the copy (refused unless every planned range is copied), or
    with the ``hbase`` method the whole copy (it has no parts)."""

    step = "snapshot"
    spark = True

    def __init__(self, *, part: list[int] | None = None, finish: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.part, self.finish = part, finish

    def call(self, spec: MigrationSpec, provenance: Provenance, params: dict[str, Any],
             context: Context) -> Outcome:
        from hbase_migrate.lifecycle import finish_snapshot, snapshot
        from hbase_migrate.timeutil import parse_time

        options: dict[str, Any] = {"method": params.get("snapshot_method")}
        if accepts(snapshot, "master"):
            options["master"] = self.spark_master(params, spec)
        if self.finish:
            return finish_snapshot(spec, provenance=provenance, **options)
        if self.part is not None:
            first, count = self.part
            return snapshot(spec, provenance=provenance, part=(int(first), int(count)),
                            **options)
        given = params.get("watermark")
        return snapshot(spec, watermark=parse_time(given, name="watermark") if given else None,
                        provenance=provenance, **options)


class ReplayOperator(LifecycleOperator):
    """WAL replay on the run's Spark connection (one task per WAL chain; ``auto``: Spark only
    for a large run) or in-process without one: a catch-up since T0, or with
    ``window="data_interval"`` the edits of the run's ``[data_interval_start,
    data_interval_end)`` (a backfill); with ``chains``, one part of a catch-up
    (:class:`~hbase_migrate_airflow.operators.parts.ReplayPartsOperator`, mapped)."""

    step = "replay"
    spark = True

    def __init__(self, *, window: str = "catch-up", chains: list[str] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if window not in ("catch-up", "data_interval"):
            raise ValueError(f"window must be 'catch-up' or 'data_interval', got {window!r}")
        self.window = window
        self.chains = chains

    def call(self, spec: MigrationSpec, provenance: Provenance, params: dict[str, Any],
             context: Context) -> Outcome:
        from hbase_migrate.lifecycle import replay

        start = end = None
        if self.window == "data_interval":
            start, end = (int(context[k].timestamp() * 1000)  # type: ignore[literal-required]
                          for k in ("data_interval_start", "data_interval_end"))
        options: dict[str, Any] = {"force_thrift1": params.get("gateway") == "thrift1"}
        if self.chains is not None:
            options["chains"] = list(self.chains)
        return replay(spec, start=start, end=end, provenance=provenance,
                      master=self.spark_master(params, spec), **options)

    def failure(self, result: Outcome) -> str | None:
        from hbase_migrate.replay.summary import EXIT_GAPS, RunSummary

        assert isinstance(result, RunSummary)
        code = result.exit_code
        if code == EXIT_GAPS:
            where = "".join(f"; {g.server}: {g.path or g.detail}" for g in result.gaps)
            return (f"{len(result.gaps)} new gap(s), {result.open_gaps} open: WAL edits "
                    f"lost for the target{where}; see `hbase-migrate status`")
        if code:
            return "; ".join(f"{f.path}: {f.error}" for f in result.failures
                             ) or f"exit code {code}"
        return None

    def final(self, result: Outcome) -> bool:
        from hbase_migrate.replay.summary import EXIT_GAPS, RunSummary

        # a gap stays until its ranges are re-copied
        return isinstance(result, RunSummary) and result.exit_code == EXIT_GAPS

    def idle(self, spec: MigrationSpec, result: Outcome) -> str | None:
        """A window (a backfill's run) that wrote nothing: its WAL files hold no edit of it,
        or only edits of tables the migration leaves out."""
        from hbase_migrate.replay.summary import RunSummary
        from hbase_migrate.timeutil import format_time

        if (self.window != "data_interval" or not isinstance(result, RunSummary)
                or result.manifest is None or any(result.cells().values())):
            return None
        window = f"[{format_time(result.start)}, {format_time(result.end or result.start)})"
        held = len(result.manifest.included)
        why = (f"{held} WAL file(s) hold edits of the window, none of its table(s) "
               f"{', '.join(t.source for t in spec.tables)}" if held else
               f"{len(result.manifest.items)} WAL file(s) looked at, none holds one")
        return (f"no WAL edits of migration {spec.name!r} in the window {window}: {why}; "
                "nothing replayed (the manifest is in the ledger's backfill step)")


class ValidateOperator(LifecycleOperator):
    """Compare source and target; with the ``repair`` Param, repair what differs (the
    ``compact`` Param, default true, lets it major-compact the target's regions where newer
    delete markers hide repaired cells; false: those are listed instead). With
    ``live=True`` (the in-flight validations of the start and replay DAGs, the source still
    written) the step's live mode: verdicts recorded, differing ranges listed, no failure.

    In parts (:class:`~hbase_migrate_airflow.operators.parts.ValidatePartsOperator`,
    mapped): with ``part`` (``[i, n]``) one group of the ranges, their digests recorded
    under the DAG run's validation run (no Great Expectations), never failed for its
    verdict; with ``judge=True`` GX's verdict over the DAG run's parts, once (refused,
    naming the ranges, unless every part's newest try succeeded and they cover every planned
    range with digests)."""

    step = "validate"
    spark = True

    def __init__(self, *, live: bool = False, part: list[int] | None = None,
                 judge: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.live, self.part, self.judge = live, part, judge

    def call(self, spec: MigrationSpec, provenance: Provenance, params: dict[str, Any],
             context: Context) -> Outcome:
        from hbase_migrate.lifecycle import judge_validation, validate

        if self.judge:
            return judge_validation(spec, provenance=provenance, live=self.live)
        options: dict[str, Any] = {"live": self.live}
        if self.part is not None:
            first, count = self.part
            options["part"] = (int(first), int(count))
        if accepts(validate, "master"):
            options["master"] = self.spark_master(params, spec)
        if params.get("read_from") in ("live", "snapshot"):  # else [validate] from
            options["from_snapshot"] = params["read_from"] == "snapshot"
        if not self.live:
            options["repair"] = bool(params.get("repair", False))
            options["compact"] = bool(params.get("compact", True))
        return validate(spec, provenance=provenance, **options)

    def failure(self, result: Outcome) -> str | None:
        from hbase_migrate.audit.records import Verdict
        from hbase_migrate.lifecycle.result import StepResult

        assert isinstance(result, StepResult)
        if result.passed or self.live or self.part is not None:  # a part: the judge decides
            return None
        differ = [t["target"] for t in result.metrics.get("tables", [])
                  if t.get("verdict") != Verdict.MATCH]
        return f"verdict {result.verdict}: table(s) {', '.join(differ)} differ"


class CutoverCheckOperator(LifecycleOperator):
    """The go / no-go gate, with the ``max_lag`` Param."""

    step = "cutover-check"

    def call(self, spec: MigrationSpec, provenance: Provenance, params: dict[str, Any],
             context: Context) -> Outcome:
        from hbase_migrate.lifecycle import cutover_check
        from hbase_migrate.timeutil import parse_duration

        max_lag = parse_duration(params.get("max_lag") or "1m", name="max_lag")
        return cutover_check(spec, max_lag=max_lag, provenance=provenance)

    def failure(self, result: Outcome) -> str | None:
        from hbase_migrate.lifecycle.result import StepResult

        assert isinstance(result, StepResult)
        if result.passed:
            return None
        return "no-go: " + "; ".join(result.metrics.get("reasons", []))

    def final(self, result: Outcome) -> bool:
        return True  # a no-go is the gate's answer: asked again at once, it says the same


class ReportOperator(LifecycleOperator):
    """The audit report from the ledger, to the ``report_path`` Param (default
    ``report.html`` in the migration's folder)."""

    step = "report"
    ui_color = "#f0ece3"

    def call(self, spec: MigrationSpec, provenance: Provenance, params: dict[str, Any],
             context: Context) -> Outcome:
        from pathlib import Path

        from hbase_migrate.lifecycle import report

        out = params.get("report_path")
        return report(spec, out=Path(out) if out else None)
