"""The ledger keeps each migration's definition (endpoints resolved) and its history, on
SQLite and PostgreSQL: a cluster.json and explicit endpoints naming the same gateways are one
migration; a definition is corrected in place until something is copied, refused after."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.audit.errors import MigrationMismatchError
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import TableMapping
from hbase_migrate.config import MigrationSpec, load_config

SOURCE = {"thrift": "127.0.0.1:33445", "thrift2": "127.0.0.1:33446",
          "webhdfs": "http://127.0.0.1:33447", "zookeeper": "127.0.0.1:2181"}
TARGET = {"thrift": "127.0.0.1:43445", "thrift2": "127.0.0.1:43446"}


def write_config(folder: Path, table: str = "orders", *, extra: str = "") -> Path:
    """A config naming the source by a cluster.json (as the embedded cluster writes it)."""
    (folder / "source").mkdir(exist_ok=True)
    (folder / "source" / "cluster.json").write_text(json.dumps(
        {"name": "minihbase", "pid": 1, **SOURCE, "hbase_root": "/hbase"}))
    path = folder / "m.toml"
    path.write_text(f'[migration]\nname = "notable"\n[source]\n'
                    f'cluster_json = "source/cluster.json"\n[target]\n'
                    f'thrift = "{TARGET["thrift"]}"\nthrift2 = "{TARGET["thrift2"]}"\n'
                    f'[[tables]]\nsource = "{table}"\n{extra}')
    return path


def as_airflow(table: str = "orders") -> MigrationSpec:
    """The spec an Airflow run builds: endpoints from hbase connections (their names the
    connection ids), through MigrationSpec.from_dict."""
    return MigrationSpec.from_dict({
        "migration": {"name": "notable"},
        "source": {"name": "hbase_source", **SOURCE, "hbase_root": "/hbase"},
        "target": {"name": "hbase_target", **TARGET},
        "tables": [{"source": table, "target": table}],
        "replay": {"roll_period": 3_600_000, "margin": 300_000},
    })


def test_a_cluster_json_and_a_connection_naming_the_same_gateways_are_one_migration(
        ledger: Ledger, tmp_path: Path) -> None:
    first = ledger.ensure_spec(as_airflow(), now=10)
    again = ledger.ensure_spec(load_config(write_config(tmp_path)), now=20)
    assert again == first
    assert (first.source, first.target) == ("thrift:127.0.0.1:33445,127.0.0.1:33446",
                                            "thrift:127.0.0.1:43445,127.0.0.1:43446")
    history = ledger.definitions(first.id)
    assert [(at, change) for at, _, change in history] == [(10, None)]
    stored = history[0][1]
    assert stored["source"] == {"name": "hbase_source", **SOURCE, "hbase_root": "/hbase",
                                "transport": "buffered", "protocol": "binary",
                                "znode_parent": "/hbase"}
    assert stored["migration"] == {"name": "notable"}  # no ledger URL
    assert stored["tables"] == [{"source": "orders", "target": "orders", "families": []}]


def test_a_definition_is_corrected_in_place_until_something_is_copied(
        ledger: Ledger, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    typo = ledger.ensure_spec(load_config(write_config(tmp_path, "ordres")), now=10)
    with ledger.step(typo.id, "snapshot") as step:  # a copy that failed copied nothing
        step.fail("TableNotFoundException")
    with caplog.at_level(logging.WARNING, "hbase_migrate.audit.migrations_book"):
        fixed = ledger.ensure_spec(load_config(write_config(tmp_path, "orders")), now=20)
    assert fixed.id == typo.id
    assert fixed.tables == (TableMapping("orders", "orders"),)
    assert [r.getMessage() for r in caplog.records] == [
        f"ledger {ledger.url}: migration 'notable' corrected before anything was copied: "
        "tables 'ordres' (this definition: 'orders') (the earlier definition stays in its "
        "history)"]
    history = ledger.definitions(fixed.id)
    assert [(at, d["tables"][0]["source"], change) for at, d, change in history] == [
        (10, "ordres", None), (20, "orders", "tables 'ordres' (this definition: 'orders')")]


@pytest.mark.parametrize("copy", ["range", "snapshot"])
def test_after_a_copy_another_identity_is_refused_naming_it_and_how_to_start_over(
        ledger: Ledger, tmp_path: Path, copy: str) -> None:
    record = ledger.ensure_spec(load_config(write_config(tmp_path)), now=10)
    if copy == "range":
        ledger.plan_key_ranges(record.id, "orders", [(b"", b"m", 5), (b"m", b"", 5)])
        ledger.record_range_copied(record.id, "orders", b"m", None, 1, 5)
        copied = "1 key ranges copied"
    else:
        with ledger.step(record.id, "snapshot"):
            pass
        copied = "1 snapshot steps succeeded"
    moved = write_config(tmp_path, "users")
    moved.write_text(moved.read_text().replace("43445", "43999"))
    with pytest.raises(MigrationMismatchError) as refused:
        ledger.ensure_spec(load_config(moved))
    assert str(refused.value) == (
        f"ledger {ledger.url}: migration 'notable' has copied data ({copied}) under another "
        "definition: target 'thrift:127.0.0.1:43445,127.0.0.1:43446' (this definition: "
        "'thrift:127.0.0.1:43999,127.0.0.1:43446'); tables 'orders' (this definition: "
        "'users'); a migration keeps its definition once anything is copied: to start over "
        "with this one, give it another name ([migration] name in the config, or the "
        "migration Param) and run `hbase-migrate prepare` with it (this leaves 'notable' and "
        "its target tables as they are; `hbase-migrate config show notable --ledger "
        f"{ledger.url}` prints its definition)")
    assert len(ledger.definitions(record.id)) == 1
    assert ledger.migration("notable") == record


def test_settings_change_any_time_and_are_kept_in_the_history(
        ledger: Ledger, tmp_path: Path) -> None:
    record = ledger.ensure_spec(load_config(write_config(tmp_path)), now=10)
    with ledger.step(record.id, "snapshot"):
        pass
    changed = write_config(tmp_path, extra='[replay]\nmargin = "10m"\n[spark]\nmaster = '
                                           '"in-process"\n')
    assert ledger.ensure_spec(load_config(changed), now=20).id == record.id
    ledger.ensure_spec(load_config(changed), now=30)  # the same again: nothing new
    history = ledger.definitions(record.id)
    assert [(at, change) for at, _, change in history] == [
        (10, None), (20, 'replay.margin 300000 -> 600000; spark.master "auto" -> "in-process"')]
    assert history[-1][1]["replay"]["margin"] == 600_000


def test_a_migration_recorded_before_definitions_gets_one_from_its_next_step(
        ledger: Ledger, tmp_path: Path) -> None:
    path = write_config(tmp_path)
    old = ledger.ensure_migration("notable", f"cluster_json:{tmp_path}/source/cluster.json",
                                  "thrift:127.0.0.1:43445,127.0.0.1:43446",
                                  [TableMapping("orders", "orders")], now=5)
    assert ledger.definition("notable") is None
    record = ledger.ensure_spec(load_config(path), now=10)
    assert (record.id, record.source) == (old.id, "thrift:127.0.0.1:33445,127.0.0.1:33446")
    assert [change for _, _, change in ledger.definitions(old.id)] == [
        "recorded for a migration made before schema 8"]


def test_no_secret_enters_the_definition(ledger: Ledger, tmp_path: Path) -> None:
    path = write_config(tmp_path, extra='[cdc]\nbootstrap = "k:9092"\n[cdc.producer]\n'
                                        '"sasl.password" = "hunter2"\n"sasl.username" = "u"\n'
                                        '"ssl.key.password" = "pw2"\n'
                                        '"compression.type" = "lz4"\n')
    spec = load_config(path)
    spec = MigrationSpec(**{**spec.__dict__,
                            "ledger_url": "postgresql://migrator:s3cret@db/ledger"})
    ledger.ensure_spec(spec)
    stored: dict[str, Any] | None = ledger.definition("notable")
    assert stored is not None
    assert stored["cdc"]["producer"] == {"sasl.username": "u", "compression.type": "lz4"}
    text = json.dumps(stored)
    assert "hunter2" not in text and "pw2" not in text and "s3cret" not in text
