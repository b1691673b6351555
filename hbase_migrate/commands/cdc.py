"""``hbase-migrate cdc``: the source's WAL edits as JSON messages to Kafka, one per row
mutation, with offsets recorded only once the broker acknowledged them.

Exit codes as ``replay``: 0 everything sent; 1 a file failed (corrupt WAL, a message the
broker refuses: the message names the broker, topic, file and byte offset); 3 a gap; 2 usage,
config, broker or topic errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from hbase_migrate.commands.replay import (
    _seconds,
    follow_until_stopped,
    metrics_address,
    metrics_options,
    render_summary,
    run_once,
)
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.summary import RunSummary
from hbase_migrate.timeutil import TIME_HELP


@click.command()
@click.option("--config", "config", required=True, metavar="M.toml",
              type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="The migration config (with a [cdc] section).")
@click.option("--table", "tables", multiple=True, metavar="T",
              help="Stream only this source table (repeatable; default: all configured).")
@click.option("--start", metavar="TIME",
              help="Stream edits written at or after TIME (default: the watermark less the "
                   "margin)." + TIME_HELP)
@click.option("--end", metavar="TIME",
              help="...and before TIME (a window, streamed again)." + TIME_HELP)
@click.option("--follow", is_flag=True, help="Repeat catch-up runs until SIGINT/SIGTERM.")
@click.option("--interval", default="30s", show_default=True, metavar="DURATION",
              help="Pause between --follow runs.")
@click.option("--force", is_flag=True,
              help="Follow even when --interval is at or above half the archive TTL.")
@click.option("--dry-run", is_flag=True,
              help="List and select the files, print the manifest; send nothing.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the manifest (dry run) or the summary as JSON.")
@click.option("--lock-timeout", default="30", show_default=True, metavar="SECONDS",
              callback=_seconds, help="How long to wait for another CDC run to finish.")
@metrics_options
@click.pass_context
def cdc(ctx: click.Context, config: Path, tables: Sequence[str], start: str | None,
        end: str | None, follow: bool, interval: str, force: bool, dry_run: bool,
        as_json: bool, lock_timeout: float, metrics_port: int | None,
        metrics_host: str) -> None:
    """Stream the source's WAL edits to Kafka (the [cdc] section of the config).

    One JSON message per row mutation (table, row, cells with family, qualifier,
    timestamp, type and value as HBase's Bytes.toStringBinary prints them; WAL file, byte
    offset, sequence id, write time), keyed by table and row. Offsets are kept in the
    ledger apart from replay's and recorded only once the broker acknowledged every message
    up to them: delivery is at least once; (file, offset, row) identifies a message.

    \b
    Exit status: 0 ok; 1 a file failed; 3 a gap; 2 an error.
    """
    if end and not start:
        raise click.UsageError("--end needs --start")
    if follow and (end or dry_run):
        raise click.UsageError("--follow runs catch-up: no --end, no --dry-run")
    metrics = metrics_address(follow, metrics_host, metrics_port)
    from hbase_migrate.config import load_config
    from hbase_migrate.lifecycle.cdc import cdc_job
    from hbase_migrate.timeutil import parse_duration, parse_time

    job = cdc_job(load_config(config), tables=tables,
                  start=parse_time(start, name="--start") if start else None,
                  end=parse_time(end, name="--end") if end else None, dry_run=dry_run,
                  lock_timeout=lock_timeout)
    if follow:
        ctx.exit(_follow(job, parse_duration(interval, name="--interval") / 1000, as_json,
                         force, metrics))
    ctx.exit(_run(job, as_json))


def _render(summary: RunSummary) -> str:
    """The replay summary, in the stream's words (its lag is the stream's, not replay's)."""
    text = render_summary(summary)
    return ("CDC " + text.replace(" replay of migration", " stream of migration", 1)
            .replace("cells written:", "cells sent:", 1)
            .replace("\nreplay lag: ", "\nCDC lag: ", 1)
            .replace(" (every edit of this run's WAL listing replayed)",
                     " (every edit of this run's WAL listing sent and acknowledged)", 1))


def _run(job: ReplayJob, as_json: bool) -> int:
    from hbase_migrate.lifecycle.cdc import run

    return run_once(job, as_json, run, _render)


def _follow(job: ReplayJob, interval: float, as_json: bool, force: bool,
            metrics: tuple[str, int] | None) -> int:
    from hbase_migrate.lifecycle.cdc import follow

    return follow_until_stopped(job, interval, as_json, force, follow, _render, metrics)
