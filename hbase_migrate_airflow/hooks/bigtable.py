"""The ``bigtable`` connection type: a Google Cloud Bigtable instance as a migration's target.

Its extras: ``project``, ``instance`` (both required), ``app_profile`` (the instance's
default profile otherwise), ``emulator_host`` (``host:port`` of a Bigtable emulator) and
``accept`` (the pre-flight findings whose loss is accepted, by name: a JSON list, or names
one per line). Google's credentials are the workers' own (Application Default Credentials,
as on Cloud Composer), never stored here. :meth:`BigtableHook.section` turns it into the
``[target]`` section of the core's migration config (checked there).
"""

from __future__ import annotations

import json
from typing import Any

from airflow.sdk import BaseHook

EXTRA_KEYS = ("project", "instance", "app_profile", "emulator_host", "accept")


class BigtableHook(BaseHook):
    """Reads a ``bigtable`` connection; no network call is made here."""

    conn_name_attr = "bigtable_conn_id"
    default_conn_name = "bigtable_default"
    conn_type = "bigtable"
    hook_name = "Bigtable (hbase-migrate target)"

    def __init__(self, bigtable_conn_id: str = default_conn_name, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bigtable_conn_id = bigtable_conn_id

    def section(self) -> dict[str, Any]:
        """The ``[target]`` section (``kind = "bigtable"``); a ConfigError names the
        connection when an extra is unknown or ``accept`` is not a list."""
        from hbase_migrate.errors import ConfigError

        conn = self.get_connection(self.bigtable_conn_id)
        prefix = f"extra__{self.conn_type}__"  # how Airflow's form may store its fields
        extra = {k.removeprefix(prefix): v for k, v in conn.extra_dejson.items()
                 if v not in (None, "")}
        unknown = sorted(set(extra) - set(EXTRA_KEYS))
        if unknown:
            raise ConfigError(f"connection {self.bigtable_conn_id!r}: unknown extra key(s) "
                              f"{', '.join(unknown)}; expected {', '.join(EXTRA_KEYS)}")
        accept = extra.get("accept", [])
        if isinstance(accept, str):  # the form's text: a JSON list, or a name per line
            stripped = accept.strip()
            accept = (json.loads(stripped) if stripped.startswith("[")
                      else [a.strip() for a in stripped.splitlines() if a.strip()])
        if not isinstance(accept, list):
            raise ConfigError(f"connection {self.bigtable_conn_id!r}: extra accept: expected "
                              f"a list of finding names, got {accept!r}")
        return {"kind": "bigtable", **{k: str(v) for k, v in extra.items() if k != "accept"},
                "accept": [str(a) for a in accept]}
