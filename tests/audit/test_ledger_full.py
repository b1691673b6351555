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
from hbase_migrate.audit.space import SPARE_BYTES, LedgerFullError, Spare, is_full
from hbase_migrate.replay.outage import outage_of

TABLES = (TableMapping("orders", "orders"),)


def cannot_grow(ledger: Ledger, pages: int = 0) -> None:
    """``ledger``'s file held to its size now (and ``pages`` more) for every connection."""
    with ledger._engine.begin() as conn:
        limit = int(conn.exec_driver_sql("PRAGMA page_count").scalar_one()) + pages

    def no_growth(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.execute(f"PRAGMA max_page_count = {limit}")

    ledger._engine.dispose()
    event.listen(ledger._engine, "connect", no_growth)


def test_a_ledger_that_cannot_grow_says_so_in_one_error_and_keeps_nothing_half(
        tmp_path: Path) -> None:
    folder = tmp_path / "state"
    url = f"sqlite:///{folder}/ledger.db"
    with Ledger.open(url) as ledger:
        mid = ledger.ensure_migration("m", "src", "dst", TABLES).id
        first = ledger.start_step(mid, "replay", metrics={"files": 1})
        cannot_grow(ledger)
        with pytest.raises(LedgerFullError) as raised:
            ledger.start_step(mid, "validate", metrics={"big": "x" * 200_000})
        assert str(raised.value) == (
            f"no space left on the device of {folder} (the folder of ledger {url}): what was "
            "done before is recorded, the last fact was not; free space there and run the "
            "same command again")
        assert is_full(raised.value)
        assert outage_of(raised.value, ledger_url=url) is None  # not waited out
        assert [(s.id, s.status) for s in ledger.steps(mid)] == [(first, StepStatus.RUNNING)]


def test_a_step_whose_end_meets_a_full_disk_is_not_left_running(tmp_path: Path) -> None:
    """The block succeeds; its metrics, the step's biggest write, find no room: the step is
    recorded failed with no metrics (its end recorded again in the room kept beside the
    ledger first), the full disk raised, never a step left ``running``."""
    url = f"sqlite:///{tmp_path}/ledger.db"
    with Ledger.open(url) as ledger:
        mid = ledger.ensure_migration("m", "src", "dst", TABLES).id
        cannot_grow(ledger, pages=2)
        with pytest.raises(LedgerFullError), ledger.step(mid, "validate") as step:
            step.metrics["big"] = "x" * 200_000
        (ended,) = ledger.steps(mid)
        assert ended.status is StepStatus.FAILED and ended.metrics == {}
        assert ended.error is not None and ended.error.startswith("LedgerFullError: no space")


def test_a_spare_cut_short_is_made_again_whole(tmp_path: Path) -> None:
    """A process killed while writing the spare left it short: the next step's keeps it
    whole again, and one already whole is left as it is."""
    ledger_file = tmp_path / "ledger.db"
    spare = Spare(ledger_file)
    assert spare.path == tmp_path / "ledger.db-spare"
    spare.path.write_bytes(b"x" * 100)
    spare.keep()
    assert spare.path.stat().st_size == SPARE_BYTES
    whole = spare.path.stat().st_ino, spare.path.read_bytes()
    spare.keep()
    assert (spare.path.stat().st_ino, spare.path.read_bytes()) == whole
