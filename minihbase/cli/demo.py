"""``hbase-migrate demo``: the main job on the embedded stack."""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from hbase_migrate.audit.records import GateVerdict
from hbase_migrate.timeutil import human_duration
from minihbase.demo import DemoSpec, run_demo

# Each target's demo has a folder of its own: neither clears the other's report and ledger.
ROOTS = {"hbase": Path("state/demo"), "bigtable": Path("state/demo-bigtable")}


@click.command()
@click.option("--dir", "root", type=click.Path(file_okay=False, path_type=Path),
              default=None, show_default="state/demo; with --target bigtable "
              "state/demo-bigtable",
              help="Working folder: data, logs, WAL files. A new or empty folder, or one an "
                   "earlier demo of the same target made (cleared first); any other is "
                   "refused.")
@click.option("--airflow/--no-airflow", default=True, show_default=True,
              help="Drive the lifecycle through a local Airflow's DAGs, or call the steps "
                   "directly.")
@click.option("--spark/--no-spark", default=False, show_default=True,
              help="With Airflow: replay and validate on Spark (local[2]), or choose by the "
                   "work (auto: Spark for large runs, the demo's small ones in their tasks).")
@click.option("--client", type=click.Choice(["native", "thrift"]), default="native",
              show_default=True,
              help="How the migration reaches both clusters: HBase's own RPC, or the Thrift "
                   "gateways (the workload writes through Thrift2 either way).")
@click.option("--keep-running", is_flag=True,
              help="With Airflow: keep Airflow and the stack running at the end (for the UI) "
                   "until Ctrl-C.")
@click.option("--executor", type=click.Choice(["local", "celery"]), default="local",
              show_default=True,
              help="With Airflow: the LocalExecutor, or Celery (PostgreSQL for Airflow and the "
                   "ledger, redis-server, --workers workers each in its own folder).")
@click.option("--workers", type=click.IntRange(1, 16), default=2, show_default=True,
              help="With --executor celery: the number of Celery workers.")
@click.option("--table", default="orders", show_default=True,
              help="Without Airflow: the table (the DAGs migrate their default, orders).")
@click.option("--ops", type=click.IntRange(min=1), default=3000, show_default=True,
              help="Workload operations written to the source.")
@click.option("--seed", type=int, default=7, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per step on stdout.")
@click.option("--target", type=click.Choice(["hbase", "bigtable"]), default="hbase",
              show_default=True,
              help="The target: an embedded cluster, or the Bigtable emulator (the steps "
                   "called directly, no Airflow: docs/guides/bigtable.md).")
def demo(root: Path | None, airflow: bool, spark: bool, client: str, keep_running: bool,
         executor: str, workers: int, table: str, ops: int, seed: int, as_json: bool,
         target: str) -> None:
    """Run the main job on the embedded stack and write the audit report; exit 1 unless the
    cutover gate says go.

    With Airflow (the default): a local Airflow runs the DAGs while the workload writes:
    hbase_migrate_start, the WAL watch and the Asset-scheduled replay after each WAL roll, a
    backfill; then the workload stops, replay drains, and hbase_migrate_cutover gives the
    verdict and writes the report. Without: the steps are called directly (snapshot while the
    workload writes, replay --follow, catch-up, backfill, cell-for-cell validation, gate)."""

    report = _reporter(as_json)
    root = root if root is not None else ROOTS[target]
    # Ctrl-C and SIGTERM both unwind through the stack's clean-up, even when this process
    # was started with SIGINT ignored (as background jobs of non-interactive shells are).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    if target == "bigtable":
        _bigtable(root, table, ops, seed, report)
        return
    spec = DemoSpec(root=root, table=table, ops=ops, seed=seed, client=client)
    if airflow:
        _airflow(spec, report, spark, keep_running, executor, workers)
        return
    if executor != "local":
        raise click.UsageError("--executor celery needs Airflow (not --no-airflow)")
    result = run_demo(spec, report)
    tables = result.validation.metrics["tables"] if result.validation else []
    if result.report is not None:
        click.echo(f"report: {result.report.metrics['path']}")
    if result.gate is not None:
        click.echo(f"cutover gate: {str(result.gate.verdict).upper()}")
        for why in result.gate.metrics["reasons"]:
            click.echo(f"  against: {why}", err=True)
    if result.ok:
        click.echo(f"OK: target equals source, {sum(t['source_cells'] for t in tables)} "
                   "cells compared")
        return
    for line in (example for t in tables for example in t["examples"]):
        click.echo(f"  {line}", err=True)
    if result.replay is not None and result.replay.exit_code:
        click.echo(f"FAILED: the final replay ended with exit code {result.replay.exit_code}; "
                   f"see 'hbase-migrate status --config {root / 'migration.toml'}'", err=True)
    if result.backfill is not None and result.backfill.exit_code:
        click.echo(f"FAILED: the backfill ended with exit code {result.backfill.exit_code}",
                   err=True)
    differs = result.validation is not None and not result.validation.passed
    click.echo("FAILED: target differs from source" if differs else "FAILED", err=True)
    sys.exit(1)


def _reporter(as_json: bool) -> Callable[[str, dict[str, Any]], None]:
    def report(step: str, facts: dict[str, Any]) -> None:
        if as_json:
            click.echo(json.dumps({"step": step, **facts}, sort_keys=True))
            return
        click.echo(step_line(step, facts))

    return report


def step_line(step: str, facts: dict[str, Any]) -> str:
    """``[  12.34s] step (took 2.1 s): facts``: the run's clock as the step ended, then how
    long the step took."""
    details = ", ".join(f"{k}={v}" for k, v in facts.items()
                        if k not in ("seconds", "at", "examples", "ops"))
    return (f"[{facts['at']:7.2f}s] {step} (took {human_duration(facts['seconds'] * 1000)}): "
            f"{details}")


def _airflow(spec: DemoSpec, report: Callable[[str, dict[str, Any]], None], spark: bool,
             keep_running: bool, executor: str, workers: int) -> None:
    from minihbase.airflow_demo import run_airflow_demo, wait_for_interrupt

    result = run_airflow_demo(
        spec, report, spark=spark,
        keep_running=(lambda url: wait_for_interrupt(url, click.echo)) if keep_running
        else None, executor=executor, workers=workers)
    verdict = result.report.verdict if result.report else None
    if result.report is not None:
        click.echo(f"report: {result.report.metrics['path']}")
    click.echo(f"cutover gate: {(verdict or 'none').upper()}")
    if verdict != GateVerdict.GO:
        click.echo(f"FAILED: the gate says {verdict}; see the report", err=True)
        sys.exit(1)
    click.echo("OK: the gate says go: every WAL file replayed, no gap, lag below 1m, every "
               "range matching")


def _bigtable(root: Path, table: str, ops: int, seed: int,
              report: Callable[[str, dict[str, Any]], None]) -> None:
    from minihbase.bigtable_demo import run_bigtable_demo

    validation = run_bigtable_demo(root, table, ops, seed, report)
    if validation["verdict"] == "match":
        ranges = sum(t["ranges"] for t in validation["tables"])
        click.echo(f"OK: Bigtable equals the source, {ranges} ranges compared")
        return
    click.echo(f"FAILED: ranges differ: {', '.join(validation['differing'])}", err=True)
    sys.exit(1)
