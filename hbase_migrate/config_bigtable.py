"""The ``[target]`` section of a migration to Bigtable.

```toml
[target]
kind = "bigtable"
project = "my-project"           # Google's ids: id_rules (6 to 30 and 6 to 33 characters)
instance = "hbase-copy"
app_profile = "migration"        # optional: the instance's default profile otherwise
emulator_host = "127.0.0.1:8086" # optional: the emulator (BIGTABLE_EMULATOR_HOST)
accept = ["cell_too_large orders r17 d:blob@1714564800000"]  # known losses, by name
```

The rest of the file is read as for an HBase target: the migration's target
(:class:`hbase_migrate.config.ClusterSpec`) then carries these settings, and every step
reaches Bigtable through the front door (:func:`hbase_migrate.hbase.open_cluster`), whose
handle opens ``hbase_migrate.bigtable.client.BigtableClient``. A part of the config (read
with the rest), not of the transport: the config imports no transport.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NoReturn, Protocol

KEYS = ("kind", "project", "instance", "app_profile", "emulator_host", "accept")
# Google Cloud's ids: a project's 6 to 30 characters, an instance's 6 to 33; both lowercase
# letters, digits and hyphens, starting with a letter, not ending with a hyphen. The emulator
# checks no length: there any length is taken.
ID_LENGTHS = {"project": (6, 30), "instance": (6, 33)}
_ID_CHARS = re.compile(r"[-a-z0-9]*")


def id_rules(key: str) -> str:
    """Google's rules for a ``project`` or ``instance`` id, in words."""
    low, high = ID_LENGTHS[key]
    return (f"{low} to {high} characters, lowercase letters, digits and hyphens, starting "
            "with a letter, not ending with a hyphen; any length on the emulator")


def id_problem(key: str, value: str, emulator: bool) -> str | None:
    """The rule of Google's ``key`` ids (``project``, ``instance``) that ``value`` breaks,
    in words (the first one, in the order the rules are given); None when it keeps them."""
    low, high = ID_LENGTHS[key]
    if not emulator and not low <= len(value) <= high:
        return (f"it has {len(value)} character{'' if len(value) == 1 else 's'}, not {low} "
                f"to {high}")
    if not value:
        return "it is empty"
    if not _ID_CHARS.fullmatch(value):
        bad = next(c for c in value if not _ID_CHARS.fullmatch(c))
        return f"{bad!r} is not a lowercase letter, a digit or a hyphen"
    if not value[0].isalpha():
        return f"it starts with {value[0]!r}, not a letter"
    if value.endswith("-"):
        return "it ends with a hyphen"
    return None


class SectionReader(Protocol):
    """What reads the section (:class:`hbase_migrate.config_reader.Reader`)."""

    def keys(self, table: dict[str, Any], section: str, allowed: tuple[str, ...]) -> None:
        ...

    def string(self, table: dict[str, Any], section: str, key: str,
               required: bool = False) -> str | None:
        ...

    def fail(self, section: str, key: str, expected: str, got: object) -> NoReturn:
        ...


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

    def to_dict(self) -> dict[str, Any]:
        """The ``[target]`` section this reads back from."""
        optional = {k: v for k, v in (("app_profile", self.app_profile),
                                      ("emulator_host", self.emulator_host)) if v}
        return {"kind": "bigtable", "project": self.project, "instance": self.instance,
                **optional, "accept": list(self.accept)}

    @classmethod
    def from_section(cls, table: dict[str, Any], reader: SectionReader) -> BigtableSettings:
        reader.keys(table, "target", KEYS)
        if table.get("kind") != "bigtable":
            reader.fail("target", "kind", '"bigtable"', table.get("kind"))
        found = {k: reader.string(table, "target", k, required=k in ("project", "instance"))
                 for k in ("project", "instance", "app_profile", "emulator_host")}
        for key in ("project", "instance"):
            problem = id_problem(key, found[key] or "", bool(found["emulator_host"]))
            if problem is not None:
                reader.fail("target", key, f"a Google Cloud {key} id ({id_rules(key)}), but "
                            f"{problem}", found[key])
        if found["emulator_host"]:
            host, _, port = found["emulator_host"].rpartition(":")
            if not host or not port.isdigit():
                reader.fail("target", "emulator_host", "host:port", found["emulator_host"])
        accept = table.get("accept", [])
        if not isinstance(accept, list) or not all(isinstance(a, str) for a in accept):
            reader.fail("target", "accept", "a list of finding names (strings)", accept)
        return cls(str(found["project"]), str(found["instance"]), found["app_profile"],
                   found["emulator_host"], tuple(accept))
