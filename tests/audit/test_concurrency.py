"""Two real processes recording the same WAL file at once leave one consistent row."""

from __future__ import annotations

import multiprocessing

from sqlalchemy import create_engine, text

from hbase_migrate.audit.engine import parse_url
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import WalStatus
from hbase_migrate.audit.schema import latest_version
from tests.audit.writers import NAME_TIME, PATH, record_many

ROUNDS = 150


def test_concurrent_writers_leave_one_consistent_row(ledger_url: str) -> None:
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    workers = [ctx.Process(target=record_many, args=(ledger_url, ROUNDS, barrier, results),
                           daemon=True) for _ in range(2)]
    try:
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(60)
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.kill()
    assert [w.exitcode for w in workers] == [0, 0]
    outcomes = [results.get(timeout=5) for _ in workers]
    assert all(accepted + rejected == ROUNDS for accepted, rejected in outcomes)

    with Ledger.open(ledger_url) as ledger:
        (migration,) = ledger.migrations()
        (row,) = ledger.wal_files(migration.id)
    assert (row.path, row.status, row.offset_reached) == (PATH, WalStatus.REPLAYED, 10 * ROUNDS)
    # every counter comes from the same (highest) report
    assert (row.entries, row.cells_by_type, row.markers, row.approximated_deletes,
            row.last_write_time, row.size) == (
        ROUNDS, {"Put": ROUNDS}, {"BULK_LOAD": ROUNDS // 50}, ROUNDS // 3, NAME_TIME + ROUNDS,
        10 * ROUNDS)
    assert row.error is None
    engine = create_engine(parse_url(ledger_url))
    with engine.connect() as conn:
        versions = conn.execute(text("SELECT COUNT(*) FROM schema_version")).scalar()
    assert versions == latest_version()
    engine.dispose()
