"""``hbase-migrate bigtable``: the local Bigtable emulator. A migration to Bigtable runs
with the shared commands (``hbase-migrate prepare|snapshot|replay|validate|cutover check``
on a config with ``[target] kind = "bigtable"``: docs/guides/bigtable.md).

Exit codes: 0 done; 2 usage errors or an emulator that did not start (one line).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

DIR = click.option("--dir", "folder", default="state/bigtable-emulator", show_default=True,
                   type=click.Path(file_okay=False, path_type=Path),
                   help="The emulator's folder (its log and emulator.json).")


@click.group()
def bigtable() -> None:
    """The Bigtable emulator, for a migration to Bigtable (the shared commands run it)."""


@bigtable.group()
def emulator() -> None:
    """The Bigtable emulator (cbtemulator) on 127.0.0.1, in the background."""


@emulator.command()
@DIR
@click.option("--port", type=int, default=None, help="The port (a free one by default).")
def start(folder: Path, port: int | None) -> None:
    """Start the emulator; prints one JSON line with its emulator_host once it answers."""
    from hbase_migrate.hbase.bigtable_target import start_emulator

    click.echo(json.dumps(start_emulator(folder, port).to_json()))


@emulator.command()
@DIR
def stop(folder: Path) -> None:
    """Stop the emulator started in --dir (its data is gone with it)."""
    from hbase_migrate.hbase.bigtable_target import stop_emulator

    stopped = stop_emulator(folder)
    click.echo(f"stopped the emulator at {stopped.host}" if stopped
               else f"no emulator runs from {folder}")
