"""The soak's verify step: each table's linked lists counted on the source and on the target,
each scanned on its own (:func:`hbase_migrate.soak.linked_lists.verify`). A match is the
target's REFERENCED equal to the source's, and no UNREFERENCED or UNDEFINED node on either
side. The counts are a ledger step (``verify-lists``)."""

from __future__ import annotations

from hbase_migrate.audit.records import Provenance, Verdict
from hbase_migrate.config import MigrationSpec
from hbase_migrate.hbase import open_cluster
from hbase_migrate.lifecycle.result import StepResult
from hbase_migrate.lifecycle.step import recorded_step
from hbase_migrate.soak.linked_lists import verify


def verify_lists(spec: MigrationSpec, *, provenance: Provenance | None = None) -> StepResult:
    """Count the nodes of every table on both sides; ``verdict`` match or mismatch."""
    with recorded_step(spec, "verify-lists", provenance) as step, \
            open_cluster(spec.source).client() as source, \
            open_cluster(spec.target).client() as target:
        tables, ok = [], True
        for table in spec.tables:
            on_source, on_target = verify(source, table.source), verify(target, table.target)
            ok = ok and on_source.ok and on_target.ok and \
                on_source.referenced == on_target.referenced
            tables.append({"source": table.source, "target": table.target,
                           "source_counts": on_source.to_json(),
                           "target_counts": on_target.to_json(),
                           "lines": on_source.lines(f"{table.source} on the source")
                           + on_target.lines(f"{table.target} on the target")})
        step.metrics.update(verdict=Verdict.MATCH if ok else Verdict.MISMATCH, tables=tables)
        return step.result()
