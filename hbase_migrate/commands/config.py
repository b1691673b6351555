"""``hbase-migrate config show NAME``: the TOML of a migration as its ledger recorded it,
wherever it was started (a config file, the Airflow UI), for any command's ``--config``."""

from __future__ import annotations

import click


@click.group()
def config() -> None:
    """Print migration configs from what the ledger recorded."""


@config.command()
@click.argument("name")
@click.option("--ledger", "ledger_url", metavar="URL",
              help="The migration's ledger (default: $HBASE_MIGRATE_LEDGER, else "
                   "<state dir>/NAME/ledger.db).")
def show(name: str, ledger_url: str | None) -> None:
    """Print the TOML of migration NAME as its ledger recorded it (the clusters' endpoints
    resolved); save it and give it to any command as --config. Nothing is changed."""
    from hbase_migrate.lifecycle.migrations import recorded_config

    click.echo(recorded_config(name, ledger_url), nl=False)
