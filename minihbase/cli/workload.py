"""``hbase-migrate workload``: write a seeded application workload to a cluster."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

from hbase_migrate.cluster.endpoints import load_cluster_json
from minihbase.workload import Workload, WorkloadSpec


@click.command()
@click.option("--cluster", "cluster_json", required=True, type=click.Path(path_type=Path),
              help="The cluster.json of the cluster to write to.")
@click.option("--table", required=True, help="Table to write (created when missing).")
@click.option("--rate", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Operations per second (default: as fast as the gateways answer).")
@click.option("--duration", type=click.FloatRange(min=0), default=None,
              help="Run for this many seconds (instead of --ops).")
@click.option("--ops", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Number of operations (ignored with --duration).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Same seed, same operations, keys and values.")
def workload(cluster_json: Path, table: str, rate: float | None, duration: float | None,
             ops: int, seed: int) -> None:
    """Write a seeded workload over Thrift1 and Thrift2 and print what was done as JSON."""
    spec = WorkloadSpec(table=table, seed=seed, ops=None if duration is not None else ops,
                        duration=duration, rate=rate)
    runner = Workload(load_cluster_json(cluster_json), spec)
    try:
        runner.ensure_table()
        total = spec.ops if spec.ops is not None else None
        with Progress("[progress.description]{task.description}", BarColumn(),
                      MofNCompleteColumn(), TimeElapsedColumn(),
                      console=Console(stderr=True), transient=True,
                      disable=not sys.stderr.isatty()) as bar:
            task = bar.add_task(f"workload on {table}", total=total)
            report = runner.run(lambda done: bar.update(task, completed=done))
    finally:
        runner.close()
    click.echo(json.dumps({"table": table, "seed": seed, **report.to_json()}))
