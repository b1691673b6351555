"""Ledger fixtures: a real PostgreSQL server started for the session
(:class:`hbase_migrate.pgserver.PostgresServer`), and ``ledger_url``, which runs each test
against a fresh SQLite file and a fresh PostgreSQL database."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.pgserver import PgServerError, PostgresServer

_NAMES = itertools.count(1)


def new_postgres_server() -> PostgresServer:
    """A PostgreSQL server not yet started (the test skips where none can run)."""
    try:
        return PostgresServer.local()
    except PgServerError as exc:
        pytest.skip(f"{exc}: the PostgreSQL variant cannot run")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL server on loopback for the whole session."""
    server = new_postgres_server()
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)])
def ledger_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of an empty ledger: a SQLite file (in a folder not yet created), or a fresh
    database on the session's PostgreSQL server."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/state/ledger.db"
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    name = server.create_database(f"ledger_{next(_NAMES)}")
    try:
        yield server.url(name)
    finally:
        server.drop_database(name)


@pytest.fixture
def ledger(ledger_url: str) -> Iterator[Ledger]:
    with Ledger.open(ledger_url) as opened:
        yield opened
