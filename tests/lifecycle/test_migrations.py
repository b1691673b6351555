"""Migrations by name from their recorded definitions: recorded_spec and in_progress over
real SQLite ledgers in a state folder."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import MigrationState, TableMapping
from hbase_migrate.config import LEDGER_ENV, STATE_DIR_ENV, MigrationSpec
from hbase_migrate.errors import ConfigError
from hbase_migrate.lifecycle.migrations import in_progress, recorded_spec
from tests.support.airflow import airflow_spec


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(STATE_DIR_ENV, str(tmp_path / "state"))
    monkeypatch.delenv(LEDGER_ENV, raising=False)
    return tmp_path / "state"


def record(spec: MigrationSpec, *, watermark: int | None = None,
           state: MigrationState | None = None) -> None:
    with Ledger.open(spec.ledger_url) as ledger:
        mid = ledger.ensure_spec(spec).id
        if watermark is not None:
            ledger.update_migration(mid, watermark=watermark)
        if state is not None:
            ledger.update_migration(mid, state=state)


def test_recorded_spec_is_the_spec_that_was_recorded(state: Path) -> None:
    url = f"sqlite:///{state}/orders/ledger.db"
    original = airflow_spec("orders", url)
    record(original)
    assert recorded_spec("orders").to_dict() == original.to_dict()  # the default ledger
    assert recorded_spec("orders", url).ledger_url == url


def test_recorded_spec_names_the_ledger_when_it_lacks_the_migration(state: Path) -> None:
    url = f"sqlite:///{state}/orders/ledger.db"
    record(airflow_spec("orders", url))
    with pytest.raises(ConfigError) as unknown:
        recorded_spec("ordres", url)
    assert str(unknown.value) == (
        f"ledger {url} holds no migration 'ordres' (it holds: orders); give the ledger it was "
        "started with (--ledger URL, or $HBASE_MIGRATE_LEDGER)")
    with pytest.raises(ConfigError, match=rf"^migration 'none': no ledger at sqlite:///"
                                          rf"{state}/none/ledger.db: .*; give the ledger it"):
        recorded_spec("none")
    assert not (state / "none").exists()  # looking created nothing
    with Ledger.open(url) as ledger:
        ledger.ensure_migration("legacy", "a", "b", [TableMapping("t", "t")])
    with pytest.raises(ConfigError, match="'legacy' was recorded before the ledger kept "
                                          r"definitions; run any step of it once with its "):
        recorded_spec("legacy", url)


def test_in_progress_lists_started_migrations_not_cut_over_of_every_ledger(
        state: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    def url(name: str) -> str:
        return f"sqlite:///{state}/{name}/ledger.db"

    record(airflow_spec("zeta", url("zeta")), watermark=5)
    record(airflow_spec("alpha", url("alpha"), 7070), watermark=5)
    record(airflow_spec("fresh", url("fresh")))  # copy not started
    record(airflow_spec("done", url("done")), watermark=5, state=MigrationState.CUT_OVER)
    shared = f"sqlite:///{tmp_path}/shared.db"  # a ledger outside the state folder
    record(airflow_spec("mid", shared), watermark=5)
    record(airflow_spec("mid", url("zeta")), watermark=7)  # a second migration in zeta's
    with Ledger.open(url("old")) as ledger:
        ledger.update_migration(ledger.ensure_migration("old", "a", "b", []).id, watermark=1)
    with caplog.at_level(logging.WARNING, "hbase_migrate.lifecycle.migrations"):
        found = in_progress([shared])
    assert [(s.name, s.ledger_url) for s in found] == [
        ("alpha", url("alpha")), ("mid", shared), ("mid", url("zeta")), ("zeta", url("zeta"))]
    assert found[0].source.endpoints().thrift == "src:7070"
    warned = [r for r in caplog.records  # other loggers' records may pass an earlier level
              if r.name == "hbase_migrate.lifecycle.migrations" and r.levelno >= logging.WARNING]
    assert [r.getMessage() for r in warned] == [
        f"ledger {url('old')}: migration 'old' was recorded before the ledger kept "
        "definitions; run any step of it once with its config (--config FILE) to record its "
        "definition; left out of the migrations in progress"]


def test_in_progress_reads_only_the_shared_ledger_when_it_is_set(
        state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record(airflow_spec("local", f"sqlite:///{state}/local/ledger.db"), watermark=5)
    shared = f"sqlite:///{tmp_path}/stack.db"
    monkeypatch.setenv(LEDGER_ENV, shared)
    assert in_progress() == []  # not created yet: none
    record(airflow_spec("stack", shared), watermark=5)
    assert [(s.name, s.ledger_url) for s in in_progress()] == [("stack", shared)]
