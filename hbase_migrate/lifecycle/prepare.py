"""Step 1: the target tables, with the source's column families and region split points."""

from __future__ import annotations

from hbase_migrate.audit.records import MigrationState, Provenance
from hbase_migrate.config import MigrationSpec
from hbase_migrate.hbase import open_cluster
from hbase_migrate.lifecycle.bigtable_check import preflight
from hbase_migrate.lifecycle.missing import check_source, schema_reader, target_has
from hbase_migrate.lifecycle.result import StepResult
from hbase_migrate.lifecycle.step import recorded_step
from hbase_migrate.snapshot.schema import copy_schema, split_points


def prepare(spec: MigrationSpec, *, provenance: Provenance | None = None) -> StepResult:
    """Create every target table like its source table; an existing compatible one is
    kept (and reported as skipped), an incompatible one refused. A source table missing,
    or lacking a family ``[[tables]] families`` names, is refused before anything is
    written (:class:`~hbase_migrate.cluster.missing.MissingSchemaError`), as is an HBase 1.x
    target (:func:`~hbase_migrate.lifecycle.missing.target_has`). An HBase 1.x source's
    descriptors are read over Thrift1 (its Thrift2 gateway has no admin calls). For a
    Bigtable target, the pre-flight check (:mod:`.bigtable_check`) runs first and refuses
    (:class:`~hbase_migrate.bigtable.errors.BigtablePreflightError`) before any write
    unless each thing Bigtable cannot take is accepted by name; its report is in the
    step's metrics."""
    with recorded_step(spec, "prepare", provenance) as step, \
            open_cluster(spec.source).client() as src, \
            open_cluster(spec.target).client() as dst, \
            schema_reader(spec.source) as describe:
        check_source(spec, describe)
        if spec.target.bigtable is not None:  # before any write: refused unless accepted
            report = preflight(spec, src)
            step.metrics["preflight"] = report.to_json()
            report.raise_refused()
            step.metrics["known_losses"] = sorted(n for n in report.found
                                                  if n in report.accepted)
        tables = []
        for table in spec.tables:
            existed = target_has(spec, dst, table.target)
            desc = copy_schema(src, dst, table.source, table.target,
                               described=describe(table.source))
            tables.append({"source": table.source, "target": table.target,
                           "created": not existed,
                           "families": sorted(f.name.decode("utf-8", "replace")
                                              for f in desc.families),
                           "split_points": len(split_points(src, table.source))})
        step.metrics["tables"] = tables
        step.metrics["skipped"] = [f"{t['target']}: exists with a compatible schema"
                                   for t in tables if not t["created"]]
        step.advance(MigrationState.SCHEMA_READY)
        return step.result()
