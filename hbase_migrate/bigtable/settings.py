"""The ``[target]`` section of a migration to Bigtable and the migration file around it.

```toml
[target]
kind = "bigtable"
project = "my-project"
instance = "hbase-copy"
app_profile = "migration"        # optional: the instance's default profile otherwise
emulator_host = "127.0.0.1:8086" # optional: the emulator (BIGTABLE_EMULATOR_HOST)
accept = ["cell_too_large orders r17 d:blob@1714564800000"]  # known losses, by name
```

The rest of the file (``[migration]``, ``[source]``, ``[[tables]]``) is read as for an
HBase target.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hbase_migrate.config import ClusterSpec, TableSpec, artifacts_beside, default_ledger_url
from hbase_migrate.config_reader import Reader
from hbase_migrate.errors import ConfigError

KEYS = ("kind", "project", "instance", "app_profile", "emulator_host", "accept")
_ID = re.compile(r"[a-z][-a-z0-9]{0,61}[a-z0-9]")


@dataclass(frozen=True)
class BigtableSettings:
    """Where the target tables live; ``accept``: the findings of the pre-flight check
    (:mod:`.preflight`) whose loss the user accepted, by their names."""

    project: str
    instance: str
    app_profile: str | None = None
    emulator_host: str | None = None
    accept: tuple[str, ...] = ()

    @property
    def identity(self) -> str:
        """How the ledger names the target."""
        return f"bigtable:projects/{self.project}/instances/{self.instance}"

    @property
    def where(self) -> str:
        """``projects/p/instances/i`` (and the emulator), for messages."""
        at = f" on the emulator {self.emulator_host}" if self.emulator_host else ""
        return f"Bigtable projects/{self.project}/instances/{self.instance}{at}"

    @classmethod
    def from_section(cls, table: dict[str, Any], path: Path) -> BigtableSettings:
        reader = Reader(path)
        reader.keys(table, "target", KEYS)
        if table.get("kind") != "bigtable":
            reader.fail("target", "kind", '"bigtable"', table.get("kind"))
        found = {k: reader.string(table, "target", k, required=k in ("project", "instance"))
                 for k in ("project", "instance", "app_profile", "emulator_host")}
        for key in ("project", "instance"):
            if not _ID.fullmatch(found[key] or ""):
                reader.fail("target", key, "a Bigtable id (lowercase letters, digits and "
                            "hyphens, starting with a letter)", found[key])
        if found["emulator_host"]:
            host, _, port = found["emulator_host"].rpartition(":")
            if not host or not port.isdigit():
                reader.fail("target", "emulator_host", "host:port", found["emulator_host"])
        accept = table.get("accept", [])
        if not isinstance(accept, list) or not all(isinstance(a, str) for a in accept):
            reader.fail("target", "accept", "a list of finding names (strings)", accept)
        return cls(str(found["project"]), str(found["instance"]), found["app_profile"],
                   found["emulator_host"], tuple(accept))


@dataclass(frozen=True)
class BigtableMigration:
    """A migration file whose target is Bigtable."""

    name: str
    path: Path
    source: ClusterSpec
    target: BigtableSettings
    tables: tuple[TableSpec, ...]
    ledger_url: str

    @property
    def artifact_dir(self) -> Path:
        """Where validation results and Data Docs go (as for an HBase target)."""
        return artifacts_beside(self.ledger_url, self.name)

    def table_mapping(self) -> dict[str, str]:
        """Source table -> target table (an HBase name; :func:`.schema.table_id` makes
        it a Bigtable id)."""
        return {t.source: t.target for t in self.tables}


def is_bigtable(data: dict[str, Any]) -> bool:
    """Whether a parsed migration file's ``[target]`` is a Bigtable instance."""
    target = data.get("target")
    return isinstance(target, dict) and target.get("kind") == "bigtable"


def load_bigtable_migration(path: str | Path) -> BigtableMigration:
    """Read a migration file with ``[target] kind = "bigtable"``."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the migration file: {exc}") from exc
    reader = Reader(path)
    if not is_bigtable(data):
        raise ConfigError(f"{path}: [target] kind: expected \"bigtable\" (a migration to "
                          "Bigtable), got {!r}".format(reader.section(data, "target")
                                                      .get("kind")))
    migration = reader.section(data, "migration", required=True)
    reader.keys(migration, "migration", ("name", "ledger"))
    name = str(reader.string(migration, "migration", "name", required=True))
    ledger = reader.string(migration, "migration", "ledger")
    if ledger and ledger.startswith("sqlite:///") and not ledger[10:].startswith("/"):
        ledger = f"sqlite:///{(reader.folder / ledger[10:]).absolute()}"
    tables = reader.tables(data)
    for table in tables:
        if table.families:
            raise ConfigError(f"{path}: [[tables]] {table.source}: families: a migration to "
                              "Bigtable takes every family of a table (a subset is not "
                              "supported yet): leave families out")
    return BigtableMigration(name, path, reader.cluster(data, "source"),
                             BigtableSettings.from_section(data["target"], path),
                             tables, ledger or default_ledger_url(name))
