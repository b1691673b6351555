"""The report's section on the accepted losses of a migration to Bigtable: each thing
Bigtable cannot take that ``[target] accept`` accepted by name, the source's cells the
newest validation left out and how many cells the writes left out (every step's ledger
metrics, gathered by :mod:`hbase_migrate.bigtable.losses`)."""

from __future__ import annotations

from hbase_migrate.audit.records import StepRecord
from hbase_migrate.hbase.bigtable_target import migration_losses, written_losses
from hbase_migrate.report.html import MAX_ROWS, section, table
from hbase_migrate.report.model import ReportData
from hbase_migrate.report.svg import esc

ANCHOR = "losses"


def has_losses(data: ReportData) -> bool:
    return bool(written_losses(data.steps))


def accepted_losses(data: ReportData) -> str:
    """The section; empty when the migration met no accepted loss."""
    written = written_losses(data.steps)
    if not written:
        return ""
    validated = migration_losses(data.steps)
    first: dict[str, StepRecord] = {}
    for step in data.steps:
        for name in written_losses([step]):
            first.setdefault(name, step)
    rows = []
    for name, times in list(written.items())[:MAX_ROWS]:
        kind, table_name, where = [*name.split(" ", 2), "", ""][:3]
        step = first[name]
        rows.append([esc(kind), esc(table_name), f"<code>{esc(where) or '-'}</code>",
                     esc(str(validated[name])), esc(str(times)),
                     esc(f"#{step.id} {step.kind}")])
    lead = (f"{len(written)} thing(s) Bigtable cannot take, each accepted by its name in "
            "<code>[target] accept</code>: their cells are not written to Bigtable (a tagged "
            "cell is written without its tags), and the validation leaves them out of the "
            "source's side, so a range equal but for them matches. Nothing else is dropped "
            "without a line here.")
    return section(ANCHOR, "Accepted losses", lead, table(
        ["kind", "table", "what (as accepted)", "source cells (last validation)",
         "cells the writes left out", "first met"], rows, total=len(written)))
