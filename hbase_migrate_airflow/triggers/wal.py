"""Wait, asynchronously, for WAL files the ledger has never listed.

Every ``poll_interval`` seconds the trigger lists the source's ``WALs/`` and ``oldWALs/``
(WebHDFS or a local HBase root) and compares them with the migration's files in the ledger
(:func:`hbase_migrate.replay.discovery.unseen_wal_files`); the blocking calls run in a
thread. It fires once: ``{"status": "new", "files": [...]}`` as soon as there are unseen
files, or ``{"status": "timeout", ...}`` at its own ``deadline`` (an epoch time): the
deadline is the trigger's, because a trigger run inline (``dag.test()``) ignores the
deferral's timeout.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

if TYPE_CHECKING:
    from hbase_migrate.config import MigrationSpec


def listing_spec(spec: MigrationSpec) -> dict[str, Any]:
    """What listing a migration's WAL files takes, as JSON for the trigger's kwargs: the spec
    without its ``[cdc]`` section (whose producer settings may hold a SASL password)."""
    return replace(spec, cdc=None).to_dict()


def unseen_files(spec_data: dict[str, Any]) -> list[dict[str, Any]]:
    """The unseen WAL files of the migration ``spec_data`` (``MigrationSpec.to_dict()``), as
    JSON: path, server, size and the creation time in the name."""
    from hbase_migrate.config import MigrationSpec
    from hbase_migrate.replay.discovery import unseen_wal_files

    spec = MigrationSpec.from_dict(spec_data)
    return [{"path": f.path, "name": f.name, "server": f.server, "size": f.size,
             "state": f.state, "created": f.timestamp}
            for f in unseen_wal_files(spec.source, spec.ledger_url, spec.name)]


class NewWalFilesTrigger(BaseTrigger):
    """Fires with the WAL files the ledger has never listed, or at ``deadline``."""

    def __init__(self, spec: dict[str, Any], deadline: float, poll_interval: float = 5.0
                 ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.spec = spec
        self.deadline = deadline
        self.poll_interval = poll_interval

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{type(self).__module__}.{type(self).__qualname__}",
                {"spec": self.spec, "deadline": self.deadline,
                 "poll_interval": self.poll_interval})

    async def run(self) -> AsyncIterator[TriggerEvent]:
        polls = 0
        while True:
            files = await asyncio.to_thread(unseen_files, self.spec)
            polls += 1
            if files:
                yield TriggerEvent(  # type: ignore[no-untyped-call]
                    {"status": "new", "files": files, "polls": polls})
                return
            remaining = self.deadline - time.time()
            if remaining <= 0:
                yield TriggerEvent(  # type: ignore[no-untyped-call]
                    {"status": "timeout", "polls": polls, "deadline": self.deadline})
                return
            await asyncio.sleep(min(self.poll_interval, remaining))
