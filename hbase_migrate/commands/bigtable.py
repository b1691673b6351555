"""``hbase-migrate bigtable``: a migration to Google Cloud Bigtable
(:mod:`hbase_migrate.bigtable`), and the local Bigtable emulator.

Exit codes: 0 done; 1 a mismatch (validate) or WAL files gone before replay read them;
2 usage, config, pre-flight or cluster errors (one line).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from hbase_migrate.timeutil import TIME_HELP

CONFIG = click.option("--config", "config", required=True, metavar="M.toml",
                      type=click.Path(dir_okay=False, exists=True, path_type=Path),
                      help='The migration config ([target] kind = "bigtable").')
DIR = click.option("--dir", "folder", default="state/bigtable-emulator", show_default=True,
                   type=click.Path(file_okay=False, path_type=Path),
                   help="The emulator's folder (its log and emulator.json).")


def _print(result: dict[str, Any]) -> None:
    click.echo(json.dumps(result, sort_keys=True, indent=2))


@click.group()
def bigtable() -> None:
    """Migrate to Google Cloud Bigtable; run the Bigtable emulator."""


@bigtable.group()
def emulator() -> None:
    """The Bigtable emulator (cbtemulator) on 127.0.0.1, in the background."""


@emulator.command()
@DIR
@click.option("--port", type=int, default=None, help="The port (a free one by default).")
def start(folder: Path, port: int | None) -> None:
    """Start the emulator; prints one JSON line with its emulator_host once it answers."""
    from hbase_migrate.bigtable.emulator import start_emulator

    click.echo(json.dumps(start_emulator(folder, port).to_json()))


@emulator.command()
@DIR
def stop(folder: Path) -> None:
    """Stop the emulator started in --dir (its data is gone with it)."""
    from hbase_migrate.bigtable.emulator import stop_emulator

    stopped = stop_emulator(folder)
    click.echo(f"stopped the emulator at {stopped.host}" if stopped
               else f"no emulator runs from {folder}")


@bigtable.command()
@CONFIG
@click.option("--sample-rows", type=int, default=1000, show_default=True,
              help="Rows checked from the start of each source region.")
def prepare(config: Path, sample_rows: int) -> None:
    """Check what Bigtable cannot take (refusing before any write unless accepted), then
    create the tables (GC rules, split points)."""
    from hbase_migrate.bigtable import steps
    from hbase_migrate.bigtable.settings import load_bigtable_migration

    _print(steps.prepare(load_bigtable_migration(config), sample_rows))


@bigtable.command()
@CONFIG
@click.option("--t0", default=None, help=f"The watermark (default: now). {TIME_HELP}")
def snapshot(config: Path, t0: str | None) -> None:
    """Copy every cell version written before the watermark."""
    from hbase_migrate.bigtable import steps
    from hbase_migrate.bigtable.settings import load_bigtable_migration
    from hbase_migrate.timeutil import parse_time

    _print(steps.snapshot(load_bigtable_migration(config),
                          None if t0 is None else parse_time(t0)))


@bigtable.command()
@CONFIG
@click.option("--since", required=True, help=f"Replay edits written from then on. {TIME_HELP}")
def replay(config: Path, since: str) -> None:
    """Replay the source's WAL edits into Bigtable, HBase's delete semantics kept."""
    from hbase_migrate.bigtable import steps
    from hbase_migrate.bigtable.settings import load_bigtable_migration
    from hbase_migrate.timeutil import parse_time

    result = steps.replay(load_bigtable_migration(config), parse_time(since))
    _print(result)
    if result["vanished"]:
        sys.exit(1)


@bigtable.command()
@CONFIG
def validate(config: Path) -> None:
    """Compare every source region's range with Bigtable (rows, cells, digests)."""
    from hbase_migrate.bigtable import steps
    from hbase_migrate.bigtable.settings import load_bigtable_migration

    result = steps.validate(load_bigtable_migration(config))
    _print(result)
    if result["verdict"] != "match":
        sys.exit(1)
