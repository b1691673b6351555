"""Step 4: compare the target with the source (cell for cell, every version, until the
range engine's checksums take over) and record one verdict per table.

A match moves the migration to ``validated``; a mismatch leaves its state and fails the
step, naming the first differing cells. Rerunning compares again: the newest comparison is
the one that counts.
"""

from __future__ import annotations

from typing import Any

from hbase_migrate.audit.records import MigrationState, Provenance, Verdict
from hbase_migrate.config import MigrationSpec
from hbase_migrate.lifecycle.step import recorded_step, require, thrift2
from hbase_migrate.validate.compare import compare_tables


def validate(spec: MigrationSpec, *, provenance: Provenance | None = None) -> dict[str, Any]:
    """Compare every table of the migration; ``verdict`` is ``match`` only when all match."""
    with recorded_step(spec, "validate", provenance) as step, \
            thrift2(spec.source) as src, thrift2(spec.target) as dst:
        require(step, MigrationState.COPIED, "validation", "snapshot")
        tables = []
        for table in spec.tables:
            result = compare_tables(src, dst, table.source, table.target)
            verdict = Verdict.MATCH if result.equal else Verdict.MISMATCH
            step.ledger.record_validation(
                step.migration.id, step.step_id, table.target, b"", b"",
                source_rows=None, target_rows=None, source_cells=result.source_cells,
                target_cells=result.target_cells, source_digest=None, target_digest=None,
                verdict=verdict)
            tables.append({"source": table.source, "target": table.target,
                           "verdict": verdict.value, **result.to_json()})
        ok = all(t["verdict"] == Verdict.MATCH for t in tables)
        step.metrics.update(tables=tables, verdict=(Verdict.MATCH if ok else Verdict.MISMATCH)
                            .value)
        if ok:
            step.advance(MigrationState.VALIDATED)
        return step.result()
