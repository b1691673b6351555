"""A ledger writer run in a child process by the concurrency test (importable by spawn)."""

from __future__ import annotations

from typing import Any

from hbase_migrate.audit.errors import WalStateError
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import TableMapping

PATH = "/hbase/oldWALs/rs1%2C16020%2C1700000000000.1700000000000"
NAME_TIME = 1_700_000_000_000


def record_many(url: str, rounds: int, barrier: Any, results: Any) -> None:
    """Open the ledger and record ``rounds`` progress reports for one WAL file (offset
    ``10 * i``, counters derived from ``i``), the last one closing it; put
    ``(accepted, rejected)`` on ``results``."""
    barrier.wait(60)  # both open a possibly empty ledger at once
    with Ledger.open(url) as ledger:
        migration = ledger.ensure_migration("orders", "src", "dst",
                                            [TableMapping("orders", "orders")])
        barrier.wait(60)
        accepted = rejected = 0
        for i in range(1, rounds + 1):
            ledger.record_wal_seen(migration.id, "source", "rs1", PATH, 10 * i, NAME_TIME)
            try:
                if i % 25 == 0:
                    ledger.mark_wal_failed(migration.id, "source", PATH, f"round {i}")
                ledger.record_wal_progress(
                    migration.id, "source", PATH, offset_reached=10 * i, entries=i,
                    cells_by_type={"Put": i}, markers={"BULK_LOAD": i // 50},
                    approximated_deletes=i // 3, last_write_time=NAME_TIME + i,
                    closed=i == rounds)
                accepted += 1
            except WalStateError:
                rejected += 1
    results.put((accepted, rejected))
