"""``hbase-migrate ledger``: create or upgrade the audit ledger's schema, and show what it holds.

Both subcommands take the ledger from ``--config M.toml`` (its ``[migration] ledger``, or the
default SQLite file under the state dir) or from ``--url``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from hbase_migrate.audit.ledger import Ledger
    from hbase_migrate.audit.records import MigrationRecord
    from hbase_migrate.config import MigrationSpec

F = TypeVar("F", bound=Callable[..., Any])


def ledger_source_options(func: F) -> F:
    """``--config`` and ``--url``, exactly one of which a command needs."""
    func = click.option("--url", metavar="URL",
                        help="Ledger database URL (sqlite:///file.db, postgresql://...).")(func)
    return click.option("--config", "config", metavar="M.toml",
                        type=click.Path(dir_okay=False, path_type=Path),
                        help="Migration config naming the ledger.")(func)


def resolve_ledger(
    config: Path | None, url: str | None
) -> tuple[str, MigrationSpec | None]:
    """The ledger URL and the loaded spec (``None`` with ``--url``)."""
    if (config is None) == (url is None):
        raise click.UsageError("give exactly one of --config M.toml or --url URL")
    if url is not None:
        return url, None
    from hbase_migrate.config import load_config

    assert config is not None
    spec = load_config(config)
    return spec.ledger_url, spec


@click.group()
def ledger() -> None:
    """Manage the audit ledger database."""


@ledger.command()
@ledger_source_options
def upgrade(config: Path | None, url: str | None) -> None:
    """Create the ledger's schema, or bring it to the newest version."""
    from hbase_migrate.audit.engine import open_engine, redact
    from hbase_migrate.audit.schema import upgrade as upgrade_schema

    ledger_url, _ = resolve_ledger(config, url)
    engine = open_engine(ledger_url)
    try:
        before, after = upgrade_schema(engine)
    finally:
        engine.dispose()
    change = f"upgraded from {before} to {after}" if before != after else "is up to date"
    click.echo(f"ledger {redact(ledger_url)}: schema version {after} ({change})")


@ledger.command()
@ledger_source_options
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of text.")
def info(config: Path | None, url: str | None, as_json: bool) -> None:
    """Show the schema version and the migrations the ledger holds."""
    from hbase_migrate.audit.ledger import Ledger
    from hbase_migrate.audit.schema import latest_version

    ledger_url, _ = resolve_ledger(config, url)
    with Ledger.open(ledger_url, upgrade_schema=False) as opened:
        current = opened.schema_version == latest_version()
        migrations = [_describe(opened, m) for m in opened.migrations()] if current else []
        report = {"ledger": opened.url, "schema_version": opened.schema_version,
                  "latest_version": latest_version(), "migrations": migrations}
    if as_json:
        click.echo(json.dumps(report, sort_keys=True, indent=2))
        return
    click.echo(f"ledger {report['ledger']}: schema version {report['schema_version']} "
               f"(this hbase-migrate knows up to {report['latest_version']})")
    if not current:
        click.echo("run `hbase-migrate ledger upgrade` to create or upgrade its schema")
    for m in migrations:
        files = ", ".join(f"{n} {s}" for s, n in sorted(m["wal_files"].items())) or "none"
        click.echo(f"  {m['name']}: state {m['state']}, {len(m['tables'])} table(s), "
                   f"source {m['source']}, target {m['target']}; WAL files: {files}; "
                   f"open gaps: {m['open_gaps']}")


def _describe(opened: Ledger, migration: MigrationRecord) -> dict[str, Any]:
    return {
        "name": migration.name, "state": migration.state, "source": migration.source,
        "target": migration.target, "watermark": migration.watermark,
        "created_at": migration.created_at,
        "tables": [{"source": t.source, "target": t.target, "families": list(t.families)}
                   for t in migration.tables],
        "wal_files": opened.counts(migration.id),
        "open_gaps": len(opened.gaps(migration.id, stream="source")),
    }
