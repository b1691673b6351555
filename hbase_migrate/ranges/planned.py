"""The key ranges a migration's tables are cut into: planned once (region boundaries split
to the cell budget, :mod:`hbase_migrate.ranges.plan`) and kept in the ledger, so that the
copy, its reruns and every validation use the same ranges."""

from __future__ import annotations

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.config import MigrationSpec
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.plan import plan_ranges
from hbase_migrate.ranges.tasks import open_thrift2


def planned_ranges(ledger: Ledger, migration_id: int, spec: MigrationSpec, table: str,
                   time_range: tuple[int, int] | None) -> list[tuple[KeyRange, int | None]]:
    """The table's ranges from the ledger (planned now when none are), each with the cells
    copied when it was copied (None when not yet)."""
    records = ledger.key_ranges(migration_id, table)
    if not records:
        with open_thrift2(spec.source) as source:
            plan = plan_ranges(source, table, spec.engine.max_cells, time_range)
        records = ledger.plan_key_ranges(
            migration_id, table, [(p.range.start, p.range.stop, p.cells) for p in plan])
    return [(KeyRange(table, r.range_start, r.range_end),
             r.copied_cells if r.copied_at is not None else None) for r in records]
