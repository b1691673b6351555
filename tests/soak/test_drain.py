"""The Airflow soak's drain: a replay run that succeeded while a roll archived a file behind
its offsets is not the end; the drain waits until the ledger has no source WAL file short
of its end (what the cutover gate counts)."""

from __future__ import annotations

from pathlib import Path

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import TableMapping
from hbase_migrate.config import MigrationSpec, load_config
from hbase_migrate.replay.discovery import SOURCE
from minihbase.soak_airflow import undrained

ARCHIVED = "webhdfs://h:1/hbase/oldWALs/rs%2C1%2C1.100"


def spec(tmp_path: Path) -> MigrationSpec:
    path = tmp_path / "m.toml"
    path.write_text(f'[migration]\nname = "soak"\nledger = "sqlite:///{tmp_path / "l.db"}"\n'
                    '[source]\nthrift = "h:1"\n[target]\nthrift = "h:2"\n'
                    '[[tables]]\nsource = "lists"\n', encoding="utf-8")
    return load_config(path)


def test_a_file_archived_behind_the_runs_offset_keeps_the_drain_going(tmp_path: Path) -> None:
    migration = spec(tmp_path)
    with Ledger.open(migration.ledger_url) as ledger:
        mid = ledger.ensure_migration("soak", "a", "b", [TableMapping("lists", "lists")]).id
        # the run read the live file to its then end (85 bytes); a roll then archived it
        # with its trailer (93 bytes): a later run must read the rest
        ledger.record_wal_seen(mid, SOURCE, "rs,1,1", ARCHIVED, 93, 100)
        ledger.mark_wal_replaying(mid, SOURCE, ARCHIVED)
        ledger.record_wal_progress(mid, SOURCE, ARCHIVED, offset_reached=85, entries=0,
                                   cells_by_type={}, markers={}, approximated_deletes=0,
                                   last_write_time=None, closed=False)
    assert undrained(migration) == 1
    with Ledger.open(migration.ledger_url) as ledger:
        ledger.record_wal_progress(mid, SOURCE, ARCHIVED, offset_reached=85, entries=0,
                                   cells_by_type={}, markers={}, approximated_deletes=0,
                                   last_write_time=None, closed=True)
    assert undrained(migration) == 0
