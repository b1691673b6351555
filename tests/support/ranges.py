"""The range engine's tests on embedded clusters: a migration config over them with small
ranges, and the ranges the ledger planned."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.config import MigrationSpec, load_config
from hbase_migrate.ranges.keyrange import KeyRange
from minihbase.server import MiniHBase

TABLE = "orders"
BUDGET = 150  # cells per range: the workload's tables split into several ranges a region


def configure(folder: Path, src: MiniHBase, dst: MiniHBase, master: str = "local[2]",
              plan_copy_cells: int | None = None) -> Path:
    path = folder / "migration.toml"
    path.write_text(
        f'[migration]\nname = "mig"\nledger = "sqlite:///{folder / "ledger.db"}"\n'
        f'[source]\ncluster_json = "{src.write_cluster_json()}"\n'
        f'[target]\ncluster_json = "{dst.write_cluster_json()}"\n'
        f'[[tables]]\nsource = "{TABLE}"\n[replay]\nroll_period = "1s"\nmargin = "1m"\n'
        f'[spark]\nmaster = "{master}"\n[ranges]\nmax_cells = {BUDGET}\n'
        + (f"plan_copy_cells = {plan_copy_cells}\n" if plan_copy_cells else ""),
        encoding="utf-8")
    return path


def planned(config: Path | MigrationSpec) -> list[KeyRange]:
    """The ranges the ledger planned for the migration of ``config`` (a file or a spec)."""
    spec = config if isinstance(config, MigrationSpec) else load_config(config)
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None
        return [KeyRange(r.table_name, r.range_start, r.range_end)
                for r in ledger.key_ranges(record.id)]


def holding(ranges: list[KeyRange], *rows: bytes) -> set[str]:
    return {next(r.id for r in ranges if r.contains(row)) for row in rows}


def failing(result: dict[str, Any]) -> set[str]:
    return {f"{m['table']}:{m['start']}-{m['stop']}" for t in result["tables"]
            for m in t["mismatched"]}
