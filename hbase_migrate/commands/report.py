"""``hbase-migrate report``: the audit report, one self-contained HTML file built from the
ledger alone (it changes nothing). Exit codes: 0 written; 2 errors (one line)."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command()
@click.option("--config", "config", required=True, metavar="M.toml",
              type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="The migration config.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Where to write the report (default: report.html beside the config).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def report(config: Path, out: Path | None, as_json: bool) -> None:
    """Write the audit report: steps and who ran them, replay lag and throughput, WAL files
    and gaps, validation verdicts, bulk loads, repairs and the cutover verdict."""
    from hbase_migrate.config import load_config
    from hbase_migrate.lifecycle import report as step

    result = step(load_config(config), out=out)
    if as_json:
        click.echo(json.dumps(result.to_json(), sort_keys=True, indent=2))
        return
    verdict = result.verdict or "no cutover check yet"
    click.echo(f"report written to {result.metrics['path']} ({result.metrics['bytes']} "
               f"bytes); cutover verdict: {verdict}")
    from hbase_migrate.hbase.bigtable_target import losses_line

    lost = losses_line(result.metrics.get("accepted_losses") or {},
                       "on the source, left out of the last validation "
                       "(the report's Accepted losses)")
    if lost:
        click.echo(lost)
