"""The refs that name a migration through XCom and Asset events: a ledger only when it is
not the migration's default one, and never a ledger's password; a task gets the real URL
back from its run's own ``ledger`` Param, and a masked one it cannot unmask fails saying
what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.errors import ConfigError
from hbase_migrate_airflow.migration import migration_spec, name_ref, ref_of, with_ref

SECRET = "s3cr3t-pw"
PG = f"postgresql+psycopg://ledger:{SECRET}@db.example.com:5432/ledger"


def test_the_default_ledger_is_not_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    monkeypatch.setenv("HBASE_MIGRATE_STATE_DIR", str(tmp_path))
    monkeypatch.delenv("HBASE_MIGRATE_LEDGER", raising=False)
    assert name_ref("m", f"sqlite:///{tmp_path / 'm' / 'ledger.db'}") == {"migration": "m"}
    other = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    assert name_ref("m", other) == {"migration": "m", "ledger": other}
    monkeypatch.setenv("HBASE_MIGRATE_LEDGER", PG)  # a stack's shared ledger, by environment
    assert name_ref("m", PG) == {"migration": "m"}


def test_a_password_never_travels_and_the_run_s_own_param_restores_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HBASE_MIGRATE_LEDGER", raising=False)
    masked = "postgresql+psycopg://ledger:***@db.example.com:5432/ledger"
    assert name_ref("m", PG) == {"migration": "m", "ledger": masked}
    named = {"migration": "m", "source_conn_id": "a", "target_conn_id": "b", "tables": ["t"],
             "ledger": PG}
    assert ref_of(named)["ledger"] == masked and SECRET not in repr(ref_of(named))
    assert with_ref({"ledger": PG, "parts": 2}, name_ref("m", PG)) == {
        **dict.fromkeys(("source_conn_id", "target_conn_id", "tables", "config")),
        "migration": "m", "ledger": PG, "parts": 2}
    # without the Param (an Asset-triggered run), the masked URL is refused, saying what to do
    with pytest.raises(ConfigError, match=r"without its password.*HBASE_MIGRATE_LEDGER"):
        migration_spec(with_ref({}, name_ref("m", PG)), "hbase_migrate_replay")
