"""Google's classic client of an emulator, as the tests read Bigtable beside the product:
it takes the emulator from ``BIGTABLE_EMULATOR_HOST`` when created (the product's own
client sets it for its creation only, so the tests do the same)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from unittest import mock

from hbase_migrate.config import load_config


def classic_instance(emulator_host: str, project: str, instance: str) -> Any:
    """The ``instance`` of ``project`` on the emulator at ``emulator_host``."""
    from google.cloud import bigtable

    with mock.patch.dict(os.environ, {"BIGTABLE_EMULATOR_HOST": emulator_host}):
        client = bigtable.Client(project=project, admin=True)
        client._veneer_data_client  # noqa: B018 (its tables' data client: made on first use)
    return client.instance(instance)


def google_table(config: Path, table_id: str) -> Any:
    """The table of the migration ``config``'s Bigtable target (admin and reads)."""
    settings = load_config(config).target.bigtable
    assert settings is not None and settings.emulator_host is not None
    return classic_instance(settings.emulator_host, settings.project,
                            settings.instance).table(table_id)


def bigtable_as_hbase_reads(config: Path, table_id: str, versions: dict[bytes, int]
                            ) -> set[tuple[bytes, bytes, bytes, int, bytes]]:
    """Every cell of the table through Google's classic client, the newest ``versions``
    of each column kept (the families have no TTL)."""
    kept: set[tuple[bytes, bytes, bytes, int, bytes]] = set()
    for row in google_table(config, table_id).read_rows():
        for family, qualifiers in row.cells.items():
            for qualifier, cells in qualifiers.items():
                newest = sorted(((round(c.timestamp.timestamp() * 1000), c.value)
                                 for c in cells), reverse=True)
                kept.update((row.row_key, family.encode(), qualifier, ts, value)
                            for ts, value in newest[:versions[family.encode()]])
    return kept
