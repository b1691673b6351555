"""A throw-away PostgreSQL server on 127.0.0.1: Airflow's metadata database (and a ledger)
of a local Celery stack, and the ledger tests' server.

The server is Debian's (``/usr/lib/postgresql/<version>/bin``): ``initdb`` into a fresh
temporary folder, then ``postgres`` on a free port, its socket in that folder and durability
off (``fsync``) for speed: what it holds lives as long as the server. Its superuser has a
random password (SCRAM), so another user of the machine cannot reach its databases; the
password is in :meth:`PostgresServer.url` and :meth:`~PostgresServer.dsn` only, never in a
process's arguments (initdb reads it from a file it then deletes). initdb refuses to run
as root, so as root both run as the ``postgres`` system user, in a folder that user owns.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg

from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.services import HOST, free_port, log_tail, spawn, stop_groups

PG_BIN_GLOB = "/usr/lib/postgresql/*/bin"


class PgServerError(HBaseMigrateError):
    """No PostgreSQL server can run here, or it did not start."""


def find_pg_bin() -> Path | None:
    """The newest Debian PostgreSQL bin folder holding initdb and postgres."""
    found = [Path(p) for p in glob.glob(PG_BIN_GLOB)
             if (Path(p) / "initdb").exists() and (Path(p) / "postgres").exists()]
    return max(found, key=lambda p: int(p.parent.name), default=None) if found else None


class PostgresServer:
    """One server in its own temporary folder; :meth:`create_database` adds databases."""

    def __init__(self, bin_dir: Path, run_as: pwd.struct_passwd | None) -> None:
        self.bin_dir = bin_dir
        self.run_as = run_as
        self.base = Path(tempfile.mkdtemp(prefix="hbase-migrate-pg-"))
        self.port = free_port(HOST)
        self.password = secrets.token_hex(16)  # URL-safe as it is
        self.proc: subprocess.Popen[bytes] | None = None

    @classmethod
    def local(cls) -> PostgresServer:
        """A server not yet started, with this machine's binaries (as root: run as the
        ``postgres`` user)."""
        bin_dir = find_pg_bin()
        if bin_dir is None:
            raise PgServerError(f"PostgreSQL server binaries not found ({PG_BIN_GLOB}/initdb):"
                                " install Debian's postgresql package (scripts/system-deps.sh)")
        run_as = None
        if os.geteuid() == 0:
            try:
                run_as = pwd.getpwnam("postgres")
            except KeyError:
                raise PgServerError("running as root and there is no 'postgres' user to run "
                                    "initdb as") from None
        return cls(bin_dir, run_as)

    def _as_user(self) -> dict[str, Any]:
        if self.run_as is None:
            return {}
        return {"user": self.run_as.pw_uid, "group": self.run_as.pw_gid, "extra_groups": []}

    def start(self) -> None:
        """initdb, then :meth:`run`."""
        (self.base / "sock").mkdir()
        pwfile = self.base / "pwfile"
        pwfile.touch(mode=0o600)
        pwfile.write_text(self.password)
        if self.run_as is not None:
            for path in (self.base, self.base / "sock", pwfile):
                os.chown(path, self.run_as.pw_uid, self.run_as.pw_gid)
        try:
            done = subprocess.run(
                [str(self.bin_dir / "initdb"), "-D", str(self.base / "data"), "-U", "postgres",
                 f"--pwfile={pwfile}", "-A", "scram-sha-256", "-E", "UTF8", "--no-sync",
                 "--no-instructions"],
                cwd=self.base, capture_output=True, timeout=120, check=False,
                **self._as_user())
        finally:
            pwfile.unlink()
        if done.returncode:
            raise PgServerError(f"initdb failed: {done.stderr.decode(errors='replace')[-800:]}")
        self.run()

    def run(self) -> None:
        """Start the server on its data folder and port; return once it answers."""
        log = self.base / "postgres.log"
        self.proc = spawn(
            [str(self.bin_dir / "postgres"), "-D", str(self.base / "data"), "-h", HOST,
             "-p", str(self.port), "-k", str(self.base / "sock"), "-c", "fsync=off",
             "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
             "-c", "max_connections=200"],
            log, cwd=self.base, **self._as_user())
        deadline = time.monotonic() + 60
        while True:
            try:
                psycopg.connect(self.dsn("postgres"), connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise PgServerError(f"PostgreSQL did not start on {HOST}:{self.port}:\n"
                                        f"{log_tail(log)}") from None
                time.sleep(0.1)

    def dsn(self, database: str) -> str:
        return (f"host={HOST} port={self.port} user=postgres password={self.password} "
                f"dbname={database}")

    def url(self, database: str, driver: str = "") -> str:
        """``postgresql[+driver]://`` URL of ``database`` (SQLAlchemy's form), with the
        password: hand it on in an environment variable or a file, never as an argument."""
        scheme = f"postgresql+{driver}" if driver else "postgresql"
        return f"{scheme}://postgres:{self.password}@{HOST}:{self.port}/{database}"

    def _admin(self, sql: str) -> None:
        with psycopg.connect(self.dsn("postgres"), autocommit=True) as conn:
            conn.execute(sql.encode())

    def create_database(self, name: str) -> str:
        self._admin(f'CREATE DATABASE "{name}"')
        return name

    def drop_database(self, name: str) -> None:
        self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def pause(self) -> None:
        """Stop the server and keep its data: :meth:`run` starts it again (an outage)."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGINT)  # fast shutdown: clients are cut off
        self.proc.wait(30)

    def stop(self) -> None:
        """Stop the server (fast shutdown) and remove its folder."""
        if self.proc is not None:
            stop_groups([self.proc], 30, first=signal.SIGINT)
        shutil.rmtree(self.base, ignore_errors=True)
