"""``hbase-migrate limits show|set``: the throttles of a migration, changed while its steps
run. ``set`` keeps the new values in the ledger; running tasks pick them up within the
``[limits] refresh`` interval (5 s by default, at most 10 s)."""

from __future__ import annotations

import json
from pathlib import Path

import click

_config = click.option("--config", "config", required=True, metavar="M.toml",
                       type=click.Path(dir_okay=False, exists=True, path_type=Path),
                       help="The migration config.")


@click.group()
def limits() -> None:
    """Show or change the throttles ([limits]) of a migration while its steps run."""


@limits.command()
@_config
@click.option("--json", "as_json", is_flag=True, help="Print JSON (sorted keys).")
def show(config: Path, as_json: bool) -> None:
    """The limits in force: the config's, or the newest `limits set` of each key."""
    from hbase_migrate.config import load_config
    from hbase_migrate.limits.changes import show_limits
    from hbase_migrate.timeutil import format_time

    shown = show_limits(load_config(config))
    if as_json:
        click.echo(json.dumps(shown, sort_keys=True, indent=2))
        return
    click.echo(f"limits of migration {shown['migration']} (0 = unlimited):")
    for key, value in shown["limits"].items():
        origin = (f"set {format_time(value['set_at'])}" if value["set_at"] is not None
                  else "config")
        click.echo(f"  {key} = {_text(value['in_force'])} ({origin})")


@limits.command(name="set")
@_config
@click.argument("assignments", nargs=-1, required=True, metavar="KEY=VALUE...")
def set_(config: Path, assignments: tuple[str, ...]) -> None:
    """Change limits, e.g. `copy_cells_per_second=5000 adaptive=true`; running steps pick
    them up within the [limits] refresh interval."""
    from hbase_migrate.config import load_config
    from hbase_migrate.limits.changes import set_limits

    spec = load_config(config)
    for key, value in set_limits(spec, assignments).items():
        click.echo(f"{spec.name}: {key} = {_text(value)}")


def _text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
