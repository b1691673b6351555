"""A ledger that cannot vanish unnoticed: reading commands create nothing and touch nothing
that is not a ledger; writing commands refuse a foreign database, and stop when their SQLite
file is deleted or replaced under them; a corrupt JSON column names its row."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from hbase_migrate.audit.engine import parse_url
from hbase_migrate.audit.errors import LedgerError, LedgerForeignError, LedgerOpenError
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import TableMapping
from hbase_migrate.cli import main
from tests.support.minicluster import EmbeddedClusters


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    _, err = capsys.readouterr()
    return int(exit_info.value.code or 0), err


def snapshot_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_reading_commands_create_no_ledger(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path}/not/yet/ledger.db"
    for command in (["status"], ["ledger", "info"]):
        code, err = run([*command, "--url", url], capsys)
        assert code == 2 and err.count("\n") == 1 and "no ledger at" in err
    assert list(tmp_path.iterdir()) == []  # no folder, no file


@pytest.mark.parametrize(("tables", "says"), [
    (["customers (id INTEGER PRIMARY KEY, name TEXT)"], "is no hbase-migrate ledger"),
    (["customers (id INTEGER PRIMARY KEY, name TEXT)",
      "schema_version (version INTEGER PRIMARY KEY, description TEXT, applied_at INTEGER)"],
     "not an hbase-migrate ledger"),
])
def test_a_foreign_sqlite_file_is_refused_untouched(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], tables: list[str],
        says: str) -> None:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as conn:
        for table in tables:
            conn.execute(f"CREATE TABLE {table}")
        conn.execute("INSERT INTO customers (name) VALUES ('ada')")
        if len(tables) > 1:
            conn.execute("INSERT INTO schema_version VALUES (1, 'theirs', 0)")
    before = snapshot_of(tmp_path)
    url = f"sqlite:///{path}"
    code, err = run(["status", "--url", url], capsys)
    assert code == 2 and says in err
    code, err = run(["ledger", "upgrade", "--url", url], capsys)
    assert code == 2 and says in err
    with pytest.raises(LedgerForeignError):
        Ledger.open(url)
    assert snapshot_of(tmp_path) == before


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_ledger_file_deleted_or_replaced_in_use_stops_the_next_write(
        tmp_path: Path, how: str) -> None:
    path = tmp_path / "ledger.db"
    with Ledger.open(f"sqlite:///{path}") as ledger:
        mid = ledger.ensure_migration("m", "s", "t", [TableMapping("a", "a")]).id
        for leftover in tmp_path.glob("ledger.db*"):
            leftover.unlink()
        if how == "replaced":
            Ledger.open(f"sqlite:///{path}").close()  # another, empty ledger at the path
        with pytest.raises(LedgerOpenError, match=f"{path} was {how}"):
            ledger.start_step(mid, "replay")


def test_a_replay_whose_ledger_vanishes_fails_loudly(tmp_path: Path,
                                                     make_embedded: EmbeddedClusters) -> None:
    from hbase_migrate.replay.job import ReplayJob
    from hbase_migrate.replay.run import run_replay
    from hbase_migrate.replay.summary import Observer
    from tests.support.minicluster import run_workload, set_watermark, write_migration

    class DeleteLedger(Observer):
        def planned(self, manifest: object, tasks: object) -> None:  # type: ignore[override]
            for leftover in tmp_path.glob("ledger.db*"):
                leftover.unlink()

    src, dst = make_embedded.pair()
    config = write_migration(tmp_path, src, dst, "t")
    spec = set_watermark(config)
    run_workload(src, "t", seed=3, ops=20)
    with pytest.raises(LedgerOpenError, match="was deleted while in use"):
        run_replay(ReplayJob.from_spec(spec), DeleteLedger())


def test_a_corrupt_json_column_names_its_row(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path}/ledger.db"
    with Ledger.open(url) as ledger:
        mid = ledger.ensure_migration("m", "s", "t", [TableMapping("a", "a")]).id
        step = ledger.start_step(mid, "replay")
        ledger.finish_step(step, "succeeded", {"files": 1})
    engine = create_engine(parse_url(url))
    with engine.begin() as conn:
        conn.execute(text("UPDATE steps SET metrics = '{\"files\": 1' WHERE id = :i"), {"i": step})
    engine.dispose()
    with Ledger.open(url) as ledger, pytest.raises(
            LedgerError, match=f"table steps, row id {step}, column metrics: not JSON"):
        ledger.steps(mid)
    code, err = run(["status", "--url", url], capsys)
    assert code == 2 and f"row id {step}, column metrics" in err and err.count("\n") == 1


NOT_A_LEDGER_COMMANDS = [
    ["status", "--url", "{url}"], ["ledger", "info", "--url", "{url}"],
    ["ledger", "upgrade", "--url", "{url}"], ["config", "show", "m", "--ledger", "{url}"],
    ["limits", "show", "--config", "{config}"], ["report", "--config", "{config}"],
    ["cutover", "check", "--config", "{config}"], ["prepare", "--config", "{config}"],
    ["replay", "--config", "{config}"], ["snapshot", "--config", "{config}"],
]


@pytest.mark.parametrize("command", NOT_A_LEDGER_COMMANDS, ids=" ".join)
def test_a_file_that_is_no_database_is_one_line_everywhere(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    path = tmp_path / "ledger.db"
    path.write_bytes(bytes(range(256)) * 16)  # no SQLite header: random bytes to SQLite
    before = snapshot_of(tmp_path)
    config = tmp_path / "m.toml"
    config.write_text(
        f'[migration]\nname = "m"\nledger = "sqlite:///{path}"\n'
        '[source]\nthrift = "127.0.0.1:1"\nthrift2 = "127.0.0.1:1"\n'
        f'hbase_root = "{tmp_path}"\n[target]\nthrift = "127.0.0.1:1"\nthrift2 = "127.0.0.1:1"\n'
        '[[tables]]\nsource = "t"\n', encoding="utf-8")
    before["m.toml"] = config.read_bytes()
    argv = [a.format(url=f"sqlite:///{path}", config=config) for a in command]
    code, err = run(argv, capsys)
    assert (code, err) == (2, f"hbase-migrate: error: cannot open ledger sqlite:///{path}: "
                              "file is not a database\n")
    assert snapshot_of(tmp_path) == before


@pytest.mark.parametrize("command", [["snapshot"], ["validate"], ["replay", "--dry-run"]],
                         ids=" ".join)
def test_a_failed_command_leaves_no_ledger_it_created(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    path = tmp_path / "typo.db"
    config = tmp_path / "m.toml"
    config.write_text(
        f'[migration]\nname = "m"\nledger = "sqlite:///{path}"\n'
        f'[source]\nclient = "native"\nzookeeper = "127.0.0.1:1"\nhbase_root = "{tmp_path}"\n'
        '[target]\nclient = "native"\nzookeeper = "127.0.0.1:1"\n'
        '[[tables]]\nsource = "t"\n', encoding="utf-8")
    code, err = run([*command, "--config", str(config)], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.toml"]
    # a ledger that was there before stays; so does a new one that holds a limit
    run(["ledger", "upgrade", "--config", str(config)], capsys)
    code, _ = run([*command, "--config", str(config)], capsys)
    assert code == 2 and path.is_file()
    path.unlink()
    code, _ = run(["limits", "set", "--config", str(config), "copy_cells_per_second=5"],
                  capsys)
    assert code == 0 and path.is_file()
