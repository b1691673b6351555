"""``hbase-migrate prepare``, ``snapshot``, ``validate`` and ``cutover check``: thin callers
of the lifecycle steps (:mod:`hbase_migrate.lifecycle`), one ledger step each.

Exit codes: 0 done (or nothing to do); 1 the step's verdict is negative (a mismatch, a
no-go); 2 usage, config, ledger or cluster errors (one line).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def _config(func: F) -> F:
    func = click.option("--json", "as_json", is_flag=True,
                        help="Print the step's result as JSON.")(func)
    return click.option("--config", "config", required=True, metavar="M.toml",
                        type=click.Path(dir_okay=False, exists=True, path_type=Path),
                        help="The migration config.")(func)


def _show(result: dict[str, Any], as_json: bool, lines: list[str]) -> None:
    if as_json:
        click.echo(json.dumps(result, sort_keys=True, indent=2))
    else:
        for line in lines:
            click.echo(line)


def _skipped(result: dict[str, Any]) -> list[str]:
    return [f"skipped: {why}" for why in result.get("skipped", [])]


@click.command()
@_config
def prepare(config: Path, as_json: bool) -> None:
    """Create the target tables: the source's column families and region split points."""
    from hbase_migrate.config import load_config
    from hbase_migrate.lifecycle import prepare as step

    result = step(load_config(config))
    _show(result, as_json, [
        *(f"{t['target']}: {'created' if t['created'] else 'exists'} with families "
          f"{', '.join(t['families'])} and {t['split_points']} split point(s)"
          for t in result["tables"]),
        *_skipped(result), f"migration {result['migration']}: {result['state']}"])


@click.command()
@_config
@click.option("--watermark", metavar="TIME",
              help="T0 of the copy (default: now); ignored once a watermark is recorded.")
def snapshot(config: Path, as_json: bool, watermark: str | None) -> None:
    """Fix the watermark T0 and copy every cell version written before it."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from hbase_migrate.config import load_config
    from hbase_migrate.lifecycle import snapshot as step
    from hbase_migrate.timeutil import format_time, parse_time

    spec = load_config(config)
    t0 = parse_time(watermark, name="--watermark") if watermark else None
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[cells]} cells"), transient=True,
                  disable=as_json) as bar:
        tasks: dict[str, Any] = {}

        def on_region(table: str, region: Any, stats: Any) -> None:
            if table not in tasks:
                tasks[table] = bar.add_task(f"copy {table}", total=None, cells=0)
            task = tasks[table]
            cells = bar.tasks[task].fields["cells"] + stats.cells
            bar.update(task, advance=1, cells=cells)

        result = step(spec, watermark=t0, on_region=on_region)
    _show(result, as_json, [
        f"watermark T0 = {format_time(result['watermark'])}",
        *(f"{t['source']} -> {t['target']}: {t['rows']} rows, {t['cells']} cells"
          for t in result.get("tables", [])),
        *_skipped(result), f"migration {result['migration']}: {result['state']}"])


@click.command()
@_config
@click.pass_context
def validate(ctx: click.Context, config: Path, as_json: bool) -> None:
    """Compare the target with the source, cell for cell; exit 1 on a mismatch."""
    from hbase_migrate.config import load_config
    from hbase_migrate.lifecycle import validate as step

    result = step(load_config(config))
    lines = []
    for t in result["tables"]:
        lines.append(f"{t['source']} -> {t['target']}: {t['verdict']} ({t['source_cells']} "
                     f"source cells, {t['target_cells']} target cells)")
        lines += [f"  {example}" for example in t["examples"]]
    _show(result, as_json, [*lines, f"verdict: {result['verdict']}",
                            f"migration {result['migration']}: {result['state']}"])
    ctx.exit(0 if result["verdict"] == "match" else 1)


@click.group()
def cutover() -> None:
    """The cutover gate."""


@cutover.command()
@_config
@click.option("--max-lag", default="1m", show_default=True, metavar="DURATION",
              help="The largest replay lag that still lets the target take over.")
@click.pass_context
def check(ctx: click.Context, config: Path, as_json: bool, max_lag: str) -> None:
    """Go / no-go: nothing left to replay, no gap, small lag, a matching validation after
    the last catch-up. Exit 0 on go, 1 on no-go."""
    from hbase_migrate.config import load_config
    from hbase_migrate.lifecycle import cutover_check
    from hbase_migrate.timeutil import parse_duration

    result = cutover_check(load_config(config),
                           max_lag=parse_duration(max_lag, name="--max-lag"))
    _show(result, as_json, [*(f"against: {why}" for why in result["reasons"]),
                            f"verdict: {result['verdict'].upper()}"])
    ctx.exit(0 if result["verdict"] == "go" else 1)
