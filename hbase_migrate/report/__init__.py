"""The audit report: one self-contained HTML file (inline SVG plots, no script, nothing
fetched) built from the ledger alone.

    with Ledger.open(url, upgrade_schema=False) as ledger:
        html = build_report(ledger, "orders", now=now_ms())
"""

from __future__ import annotations

from pathlib import Path

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.report import model, page


def build_report(ledger: Ledger, name: str, *, now: int, report_dir: Path | None = None
                 ) -> str:
    """The report of migration ``name`` as of ``now``; ``report_dir`` is the folder it will
    be written to (artifact links are made relative to it)."""
    return page.render(model.load(ledger, name, now), report_dir)


__all__ = ["build_report"]
