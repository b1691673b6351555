"""Google's classic client of an emulator, as the tests read Bigtable beside the product:
it takes the emulator from ``BIGTABLE_EMULATOR_HOST`` when created (the product's own
client sets it for its creation only, so the tests do the same)."""

from __future__ import annotations

import os
from typing import Any
from unittest import mock


def classic_instance(emulator_host: str, project: str, instance: str) -> Any:
    """The ``instance`` of ``project`` on the emulator at ``emulator_host``."""
    from google.cloud import bigtable

    with mock.patch.dict(os.environ, {"BIGTABLE_EMULATOR_HOST": emulator_host}):
        client = bigtable.Client(project=project, admin=True)
        client._veneer_data_client  # noqa: B018 (its tables' data client: made on first use)
    return client.instance(instance)
