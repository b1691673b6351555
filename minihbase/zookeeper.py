"""A real ZooKeeper server on loopback, started from the jars that pyspark ships.

pyspark carries ZooKeeper's server classes (``zookeeper-*.jar``) and the few jars it needs
at run time, so the embedded stack needs no extra download: a JVM runs
``org.apache.zookeeper.server.ZooKeeperServerMain`` with a config that binds 127.0.0.1 only
and keeps the admin HTTP server off (its port 8080 would clash with Airflow's API server).
"""

from __future__ import annotations

import fcntl
import glob
import logging
import os
import socket
import time
from pathlib import Path
from typing import IO, Self

from stackprocs.process import (
    ChildProcess,
    EmbeddedStackError,
    ensure_port_free,
    find_java,
    free_port,
)

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
MAIN_CLASS = "org.apache.zookeeper.server.ZooKeeperServerMain"
# Without metrics-core the JVM exits; without snappy the port opens but nothing is served.
REQUIRED_JARS = ("zookeeper-[0-9]*.jar", "zookeeper-jute-*.jar", "slf4j-api-*.jar",
                 "metrics-core-*.jar", "snappy-java-*.jar")


def pyspark_jars_dir() -> Path:
    """The ``jars`` folder of the installed pyspark package."""
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedStackError("pyspark is not installed; it provides the ZooKeeper jars")
    return Path(next(iter(spec.submodule_search_locations))) / "jars"


def zookeeper_classpath(jars_dir: Path | None = None) -> str:
    """The minimal class path for a standalone ZooKeeper server."""
    jars_dir = jars_dir or pyspark_jars_dir()
    found: list[str] = []
    missing: list[str] = []
    for pattern in REQUIRED_JARS:
        matches = sorted(glob.glob(str(jars_dir / pattern)))
        (found.append(matches[-1]) if matches else missing.append(pattern))
    if missing:
        raise EmbeddedStackError(
            f"ZooKeeper jars missing in {jars_dir}: {', '.join(missing)} "
            "(they come with pyspark; reinstall the project's environment)"
        )
    return os.pathsep.join(found)


def four_letter_word(host: str, port: int, word: bytes = b"ruok", timeout: float = 1.0) -> bytes:
    """Send a ZooKeeper four-letter command and return the answer ('imok' when healthy)."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(word)
        chunks = []
        while chunk := sock.recv(4096):
            chunks.append(chunk)
    return b"".join(chunks)


class ZooKeeperServer(ChildProcess):
    """One ZooKeeper server process; use as a context manager or call start()/stop()."""

    log_name = "zookeeper.log"

    def __init__(self, data_dir: str | os.PathLike[str], port: int = 0) -> None:
        super().__init__(data_dir)
        self.requested_port = port
        self.port = port
        self._lock: IO[str] | None = None

    @property
    def address(self) -> str:
        return f"{HOST}:{self.port}"

    def _write_config(self) -> Path:
        cfg = self.data_dir / "zoo.cfg"
        cfg.write_text(
            "tickTime=2000\n"
            f"dataDir={self.data_dir / 'data'}\n"
            f"clientPort={self.port}\n"
            f"clientPortAddress={HOST}\n"
            "admin.enableServer=false\n"
            "4lw.commands.whitelist=*\n"
            "maxClientCnxns=200\n"
        )
        return cfg

    def start(self, timeout: float = 30.0) -> Self:
        """Launch the JVM and return once the server answers ``ruok`` with ``imok``. A
        server already started is left alone; a data folder another server uses is refused."""
        if self.is_running:
            return self
        java = find_java()
        classpath = zookeeper_classpath()
        try:
            (self.data_dir / "data").mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EmbeddedStackError(f"cannot create the ZooKeeper folder {self.data_dir}: "
                                     f"{exc.strerror}") from None
        self._lock_folder()
        if self.requested_port:
            ensure_port_free(HOST, self.requested_port, "ZooKeeper")
        else:
            self.port = free_port(HOST)
        cfg = self._write_config()
        args = [java, "-Xmx256m", "-Dzookeeper.admin.enableServer=false",
                "-cp", classpath, MAIN_CLASS, str(cfg)]
        self._spawn(args)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            code = self._exited()
            if code is not None:
                self.stop()
                raise EmbeddedStackError(
                    f"ZooKeeper exited with code {code} before answering on "
                    f"{self.address}; {self.log_tail()}")
            try:
                if four_letter_word(HOST, self.port) == b"imok":
                    log.info("ZooKeeper answers on %s (pid %s)", self.address, self.pid)
                    return self
            except OSError:
                pass
            time.sleep(0.1)
        self.stop()
        raise EmbeddedStackError(
            f"ZooKeeper did not answer on {self.address} within {timeout:g} s; "
            f"{self.log_tail()}")

    def _lock_folder(self) -> None:
        """Hold the data folder for the life of the server: one server per folder."""
        try:
            handle = (self.data_dir / "server.lock").open("a+")
        except OSError as exc:
            raise EmbeddedStackError(f"cannot use the ZooKeeper folder {self.data_dir}: "
                                     f"{exc.strerror}") from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            owner = handle.read().strip() or "another process"
            handle.close()
            raise EmbeddedStackError(f"the ZooKeeper folder {self.data_dir} is in use by "
                                     f"{owner}; stop it or give another --dir") from None
        handle.truncate(0)
        handle.write(f"process {os.getpid()}\n")
        handle.flush()
        self._lock = handle

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server; the process is gone when this returns."""
        super().stop(timeout)
        if self._lock is not None:
            self._lock.close()
            self._lock = None
