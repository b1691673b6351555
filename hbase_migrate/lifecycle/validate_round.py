"""A live validation of a replay round (:mod:`hbase_migrate.validate.rounds`): the rows the
replay runs since the last validation wrote, compared on both sides, judged by GX; the lag
(``pending`` rows) reported apart from the differences. The step never fails on a
difference (it is live) and never moves the migration to ``validated``: only a validation of
every range does."""

from __future__ import annotations

from collections.abc import Sequence

from hbase_migrate.audit.records import Verdict
from hbase_migrate.bytesutil import short_binary
from hbase_migrate.config import MigrationSpec
from hbase_migrate.hbase import open_cluster
from hbase_migrate.hbase.bigtable_target import without_accepted
from hbase_migrate.lifecycle.step import StepContext
from hbase_migrate.limits import ThrottlePlan
from hbase_migrate.ranges.tasks import task_throttle
from hbase_migrate.validate.gx_process import GxProcess
from hbase_migrate.validate.rounds import Round, RowsCompared, compare_rows
from hbase_migrate.validate.run import accepted_losses
from hbase_migrate.validate.verdict import by_digests


def validate_round(spec: MigrationSpec, step: StepContext, planned: Round,
                   gx: GxProcess | None) -> None:
    """Compare ``planned``'s rows and fill the step's metrics; the round's replay steps are
    then compared (the next round begins after them)."""
    mapping = spec.table_mapping()
    with open_cluster(spec.source).client() as opened, \
            open_cluster(spec.target).client() as target, \
            task_throttle(ThrottlePlan.of(spec, "validate")) as throttle:
        source = without_accepted(opened, accepted_losses(spec))
        done = [compare_rows(source, target, table, mapping[table], rows, planned.horizon,
                             throttle) for table, rows in sorted(planned.rows.items())]
    pairs = [d.pair for d in done if d.pair is not None]
    ranges = [p.range for p in pairs]
    label = f"{spec.name}-step-{step.step.id}-round"
    verdict = (gx.judge(pairs, ranges, spec.artifact_dir, label) if gx is not None and pairs
               else by_digests(pairs, ranges))
    differing = _listed(done)
    step.metrics.update(
        mode="live", round={**planned.to_json(), "tables": [d.to_json() for d in done]},
        gx=verdict.to_json(), differing=differing,
        pending=sum(len(d.pending) for d in done),
        source_requests=sum(p.source_requests for p in pairs),
        target_requests=sum(p.target_requests for p in pairs),
        verdict=(Verdict.MISMATCH if differing or not verdict.success else Verdict.MATCH).value)
    step.ledger.close_rounds(planned.steps, step.step.id)


def _listed(done: Sequence[RowsCompared]) -> list[str]:
    return [f"{d.table} row {short_binary(row)}" for d in done for row in d.differing]
