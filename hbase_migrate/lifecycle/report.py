"""The audit report (DESIGN section 6): one HTML file from the ledger alone.

It only reads: the ledger is opened read-only (as ``status`` does) and no step is recorded,
so a report can be written at any time, by anyone, without changing what it reports.
"""

from __future__ import annotations

import os
from pathlib import Path

from hbase_migrate.audit.ledger import Ledger, now_ms
from hbase_migrate.config import MigrationSpec, state_dir
from hbase_migrate.errors import ConfigError
from hbase_migrate.hbase.bigtable_target import migration_losses
from hbase_migrate.lifecycle.result import StepResult
from hbase_migrate.report import model, page

REPORT_NAME = "report.html"


def default_report_path(spec: MigrationSpec) -> Path:
    """``report.html`` beside the migration's config file (else in its state folder)."""
    folder = spec.path.parent if spec.path is not None else state_dir() / spec.name
    return folder / REPORT_NAME


def report(spec: MigrationSpec, *, out: Path | None = None) -> StepResult:
    """Write the report of ``spec``'s migration to ``out`` (default
    :func:`default_report_path`); returns its path, size, the last cutover verdict and
    the accepted losses it lists (a Bigtable target's)."""
    path = (out or default_report_path(spec)).absolute()
    with Ledger.open(spec.ledger_url, upgrade_schema=False) as ledger:
        data = model.load(ledger, spec.name, now_ms())
    html = page.render(data, path.parent)
    check = model.latest_cutover(data)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.partial")
        partial.write_text(html, encoding="utf-8")
        os.replace(partial, path)  # a reader never sees half a report
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write the report: {exc.strerror}") from exc
    return StepResult(spec.name, None, None, {
        "path": str(path), "bytes": len(html.encode("utf-8")),
        "verdict": check.metrics.get("verdict") if check else None,
        # a Bigtable target's accepted losses, as the report's section lists them
        "accepted_losses": migration_losses(data.steps)})
