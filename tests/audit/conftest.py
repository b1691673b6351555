"""Ledger fixtures: a real PostgreSQL server started for the session, and ``ledger_url``, which
runs each test against a fresh SQLite file and a fresh PostgreSQL database.

The server is Debian's (``/usr/lib/postgresql/<version>/bin``): ``initdb`` into a temporary
folder, then ``postgres`` on 127.0.0.1 and a free port, with its socket in that folder and
durability off (fsync) for speed. initdb refuses to run as root, so as root both run as the
``postgres`` system user, in a folder that user owns.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hbase_migrate.audit.ledger import Ledger
from minihbase.process import free_port, log_tail

PG_BIN_GLOB = "/usr/lib/postgresql/*/bin"
HOST = "127.0.0.1"


def find_pg_bin() -> Path | None:
    """The newest Debian PostgreSQL bin folder holding initdb and postgres."""
    found = [Path(p) for p in glob.glob(PG_BIN_GLOB)
             if (Path(p) / "initdb").exists() and (Path(p) / "postgres").exists()]
    return max(found, key=lambda p: int(p.parent.name), default=None) if found else None


class PostgresServer:
    """A throw-away PostgreSQL server; :meth:`create_database` gives each test its own."""

    def __init__(self, bin_dir: Path, run_as: pwd.struct_passwd | None) -> None:
        self.bin_dir = bin_dir
        self.run_as = run_as
        self.base = Path(tempfile.mkdtemp(prefix="hbase-migrate-pg-"))
        self.port = free_port(HOST)
        self.proc: subprocess.Popen[bytes] | None = None
        self._names = itertools.count(1)

    def _as_user(self) -> dict[str, Any]:
        if self.run_as is None:
            return {}
        return {"user": self.run_as.pw_uid, "group": self.run_as.pw_gid, "extra_groups": []}

    def start(self) -> None:
        (self.base / "sock").mkdir()
        if self.run_as is not None:
            for path in (self.base, self.base / "sock"):
                os.chown(path, self.run_as.pw_uid, self.run_as.pw_gid)
        subprocess.run(
            [str(self.bin_dir / "initdb"), "-D", str(self.base / "data"), "-U", "postgres",
             "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"],
            cwd=self.base, check=True, capture_output=True, timeout=120, **self._as_user())
        self.run()

    def run(self) -> None:
        """Start the server on its data folder and port; return once it answers."""
        log = self.base / "postgres.log"
        with open(log, "ab") as out:
            self.proc = subprocess.Popen(
                [str(self.bin_dir / "postgres"), "-D", str(self.base / "data"), "-h", HOST,
                 "-p", str(self.port), "-k", str(self.base / "sock"), "-c", "fsync=off",
                 "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
                cwd=self.base, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                **self._as_user())
        deadline = time.monotonic() + 60
        while True:
            try:
                psycopg.connect(self.dsn("postgres"), connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"PostgreSQL did not start on {HOST}:{self.port}:\n"
                                       f"{log_tail(str(log))}") from None
                time.sleep(0.1)

    def dsn(self, database: str) -> str:
        return f"host={HOST} port={self.port} user=postgres dbname={database}"

    def url(self, database: str) -> str:
        return f"postgresql://postgres@{HOST}:{self.port}/{database}"

    def _admin(self, sql: str) -> None:
        with psycopg.connect(self.dsn("postgres"), autocommit=True) as conn:
            conn.execute(sql)

    def create_database(self) -> str:
        name = f"ledger_{next(self._names)}"
        self._admin(f"CREATE DATABASE {name}")
        return name

    def drop_database(self, name: str) -> None:
        self._admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def pause(self) -> None:
        """Stop the server and keep its data: :meth:`run` starts it again (an outage)."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGINT)  # fast shutdown: clients are cut off
        self.proc.wait(30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # fast shutdown
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        shutil.rmtree(self.base, ignore_errors=True)


def new_postgres_server() -> PostgresServer:
    """A PostgreSQL server not yet started (the test skips where none can run)."""
    bin_dir = find_pg_bin()
    if bin_dir is None:
        pytest.skip(f"PostgreSQL server binaries not found ({PG_BIN_GLOB}/initdb); install "
                    "Debian's postgresql package to run the PostgreSQL variant")
    run_as = None
    if os.geteuid() == 0:
        try:
            run_as = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to run initdb as")
    return PostgresServer(bin_dir, run_as)


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
    name = server.create_database()
    try:
        yield server.url(name)
    finally:
        server.drop_database(name)


@pytest.fixture
def ledger(ledger_url: str) -> Iterator[Ledger]:
    with Ledger.open(ledger_url) as opened:
        yield opened
