"""A SQLite ledger that cannot grow (SQLite's own page limit stands in for a full disk; the
real full disk is tests/soak/test_state_faults.py): the write fails as one error naming the
ledger's folder, which is no outage to wait out, and nothing of the write is kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepStatus, TableMapping
from hbase_migrate.audit.space import LedgerFullError, is_full
from hbase_migrate.replay.outage import outage_of

TABLES = (TableMapping("orders", "orders"),)


def test_a_ledger_that_cannot_grow_says_so_in_one_error_and_keeps_nothing_half(
        tmp_path: Path) -> None:
    folder = tmp_path / "state"
    url = f"sqlite:///{folder}/ledger.db"
    with Ledger.open(url) as ledger:
        mid = ledger.ensure_migration("m", "src", "dst", TABLES).id
        first = ledger.start_step(mid, "replay", metrics={"files": 1})
        with ledger._engine.begin() as conn:
            pages = int(conn.exec_driver_sql("PRAGMA page_count").scalar_one())

        def no_growth(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.execute(f"PRAGMA max_page_count = {pages}")

        ledger._engine.dispose()
        event.listen(ledger._engine, "connect", no_growth)
        with pytest.raises(LedgerFullError) as raised:
            ledger.start_step(mid, "validate", metrics={"big": "x" * 200_000})
        assert str(raised.value) == (
            f"no space left on the device of {folder} (the folder of ledger {url}): what was "
            "done before is recorded, the last fact was not; free space there and run the "
            "same command again")
        assert is_full(raised.value)
        assert outage_of(raised.value, ledger_url=url) is None  # not waited out
        assert [(s.id, s.status) for s in ledger.steps(mid)] == [(first, StepStatus.RUNNING)]
