"""Schema versions and opening ledgers: migrations applied once, newer schemas refused without
a write, unusable URLs reported without their password."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, text

from hbase_migrate.audit.engine import parse_url
from hbase_migrate.audit.errors import LedgerOpenError, LedgerSchemaError
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.schema import SQL_DIR, known_migrations, latest_version
from hbase_migrate.pgserver import PostgresServer

TABLES = {"schema_version", "migrations", "steps", "wal_files", "validations", "gaps"}


def table_names(url: str) -> set[str]:
    engine = create_engine(parse_url(url))
    try:
        with engine.connect() as conn:
            return set(inspect(conn).get_table_names())
    finally:
        engine.dispose()


def versions(url: str) -> list[int]:
    engine = create_engine(parse_url(url))
    try:
        with engine.connect() as conn:
            return list(conn.execute(text("SELECT version FROM schema_version ORDER BY 1"))
                        .scalars())
    finally:
        engine.dispose()


def test_first_open_applies_every_migration_once(ledger_url: str) -> None:
    with Ledger.open(ledger_url) as ledger:
        assert ledger.schema_version == latest_version() == len(list(SQL_DIR.glob("*.sql")))
    with Ledger.open(ledger_url) as ledger:
        assert ledger.schema_version == latest_version()
    assert table_names(ledger_url) >= TABLES
    assert versions(ledger_url) == list(range(1, latest_version() + 1))


def test_a_newer_schema_is_refused_without_a_write(ledger_url: str) -> None:
    Ledger.open(ledger_url).close()
    engine = create_engine(parse_url(ledger_url))
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO schema_version (version, description, applied_at) "
                          "VALUES (:v, 'future', 0)"), {"v": latest_version() + 1})
        conn.execute(text("DROP TABLE gaps"))  # a future version could have done anything
    engine.dispose()
    before = (table_names(ledger_url), versions(ledger_url))
    for upgrade_schema in (True, False):
        with pytest.raises(LedgerSchemaError, match=rf"schema version {latest_version() + 1}, "
                                                    rf"but .* up to {latest_version()}"):
            Ledger.open(ledger_url, upgrade_schema=upgrade_schema)
    assert (table_names(ledger_url), versions(ledger_url)) == before


def test_statements_render_for_both_dialects() -> None:
    (initial, *_) = known_migrations()
    for dialect in ("sqlite", "postgresql"):
        statements = initial.statements(dialect)
        assert not any("{" in s or "--" in s for s in statements)
        assert sum(s.startswith("CREATE TABLE") for s in statements) == len(TABLES)
    assert "AUTOINCREMENT" in initial.statements("sqlite")[1]
    assert "IDENTITY" in initial.statements("postgresql")[1]


@pytest.mark.parametrize(("files", "message"), [
    (["001_initial.sql", "003_later.sql"], "expected schema version 2 next, got 3"),
    (["001_initial.sql", "2_bad.sql"], "expected a name like 001_initial.sql"),
    ([], "no schema migrations"),
])
def test_migration_files_are_checked(tmp_path: Path, files: list[str], message: str) -> None:
    for name in files:
        (tmp_path / name).write_text("SELECT 1;\n")
    with pytest.raises(LedgerSchemaError, match=message):
        known_migrations.__wrapped__(tmp_path)


@pytest.mark.parametrize(("url", "message"), [
    ("not a url", "'not a url' cannot be parsed"),
    ("mysql://u:pw@db/ledger", r"expected a sqlite:/// or postgresql:// URL, got the 'mysql'"),
])
def test_unusable_urls(url: str, message: str) -> None:
    with pytest.raises(LedgerOpenError, match=message) as info:
        Ledger.open(url)
    assert ":pw@" not in str(info.value)


def test_unreachable_postgresql_is_named_without_its_password(closed_port: int) -> None:
    port = closed_port
    with pytest.raises(LedgerOpenError) as info:
        Ledger.open(f"postgresql://migrator:s3cret@127.0.0.1:{port}/ledger")
    message = str(info.value)
    assert f"cannot open ledger postgresql+psycopg://migrator:***@127.0.0.1:{port}/ledger" in (
        message)
    assert "s3cret" not in message


def test_sqlite_folder_that_cannot_be_created(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(LedgerOpenError, match=r"cannot create folder .*/file/state"):
        Ledger.open(f"sqlite:///{tmp_path}/file/state/ledger.db")


@pytest.mark.integration
def test_missing_postgresql_database(postgres_server: PostgresServer) -> None:
    with pytest.raises(LedgerOpenError, match='database "no_such_db" does not exist'):
        Ledger.open(postgres_server.url("no_such_db"))
