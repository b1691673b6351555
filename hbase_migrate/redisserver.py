"""A Redis server on 127.0.0.1 as the Celery broker of a local Airflow: Debian's
``redis-server``, its settings on the command line (no config file), no persistence (no RDB
snapshot, no append-only file: queued messages live as long as the server)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.services import HOST, log_tail, spawn


class RedisError(HBaseMigrateError):
    """redis-server is missing or did not start."""


def start_redis(folder: Path, port: int, timeout: float = 30.0) -> subprocess.Popen[bytes]:
    """Start ``redis-server`` on ``127.0.0.1:port`` with ``folder`` as its working folder
    (its log there); returns once it answers PING."""
    exe = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not Path(exe).exists():
        raise RedisError("redis-server not found: install Debian's redis-server package "
                         "(scripts/system-deps.sh celery)")
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "redis.log"
    proc = spawn([exe, "--bind", HOST, "--port", str(port), "--protected-mode", "yes",
                  "--save", "", "--appendonly", "no", "--dir", str(folder),
                  "--daemonize", "no", "--logfile", ""], log, cwd=folder)
    deadline = time.monotonic() + timeout
    while not _pong(port):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RedisError(f"redis-server did not answer on {HOST}:{port}:\n{log_tail(log)}")
        time.sleep(0.1)
    return proc


def _pong(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False
