"""A migration's recorded settings against what a caller gives: settled_spec over a real
SQLite ledger."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.config import MigrationSpec
from hbase_migrate.errors import ConfigError
from hbase_migrate.lifecycle.settings import settled_spec
from tests.support.airflow import airflow_spec

HOW = "say so"


def recorded(tmp_path: Path) -> MigrationSpec:
    """Migration ``orders`` recorded with a roll period of 60 s and a margin of 1 s."""
    spec = airflow_spec("orders", f"sqlite:///{tmp_path / 'ledger.db'}")
    with Ledger.open(spec.ledger_url) as ledger:
        ledger.ensure_spec(spec)
    return spec


def named(spec: MigrationSpec, **replay: int) -> MigrationSpec:
    """``spec`` as a form names it: the same clusters and tables, the defaults elsewhere."""
    tree = spec.to_dict()
    tree["migration"] = {"name": spec.name, "ledger": spec.ledger_url}
    tree["replay"] = replay
    return MigrationSpec.from_dict(tree)


def test_a_form_that_gives_no_setting_keeps_the_recorded_ones(tmp_path: Path) -> None:
    spec = recorded(tmp_path)
    settled = settled_spec(named(spec), {}, change=False, how_to_change=HOW)
    assert (settled.spec.replay.roll_period, settled.spec.replay.margin) == (60_000, 1000)
    assert settled.changes == []


def test_a_differing_setting_is_refused_unless_the_caller_says_so(tmp_path: Path) -> None:
    spec = recorded(tmp_path)
    with pytest.raises(ConfigError) as refused:
        settled_spec(named(spec), {"replay.roll_period": "1h"}, change=False,
                     how_to_change=HOW)
    assert "replay.roll_period 60000 -> 3600000" in str(refused.value)
    assert str(refused.value).endswith(f"leave those fields empty to use the migration's, "
                                       f"or {HOW}")
    same = settled_spec(named(spec), {"replay.roll_period": "1m"}, change=False,
                        how_to_change=HOW)
    assert same.changes == [] and same.spec.replay.margin == 1000
    changed = settled_spec(named(spec), {"replay.roll_period": "1h"}, change=True,
                           how_to_change=HOW)
    assert changed.changes == ["replay.roll_period 60000 -> 3600000"]
    assert (changed.spec.replay.roll_period, changed.spec.replay.margin) == (3_600_000, 1000)


def test_a_new_migration_takes_the_callers_spec(tmp_path: Path) -> None:
    spec = named(airflow_spec("fresh", f"sqlite:///{tmp_path / 'ledger.db'}"), margin=7000)
    settled = settled_spec(spec, {"replay.margin": "7s"}, change=False, how_to_change=HOW)
    assert settled == (spec, [])


def test_pending_changes_are_what_a_step_would_record(tmp_path: Path) -> None:
    from hbase_migrate.lifecycle.settings import pending_changes

    spec = recorded(tmp_path)
    assert pending_changes(spec) == []
    changed = settled_spec(named(spec), {"replay.margin": "2s"}, change=True,
                           how_to_change=HOW).spec
    assert pending_changes(changed) == ["replay.margin 1000 -> 2000"]
    with Ledger.open(spec.ledger_url) as ledger:
        ledger.ensure_spec(changed)
    assert pending_changes(changed) == []
    assert pending_changes(airflow_spec("fresh", f"sqlite:///{tmp_path / 'new.db'}")) == []
