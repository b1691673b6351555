"""Small helpers for the child processes of both stacks (``minihbase``, ``realstack``):
free ports, Java, children that die with their parent, and :class:`ChildProcess`, the life
cycle they share (the embedded ZooKeeper, the real Kafka broker, the KDC)."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import socket
import subprocess
from pathlib import Path
from types import TracebackType
from typing import Self

from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.jvm import maven
from hbase_migrate.services import python_env

MIN_JAVA = maven.MIN_JAVA


class EmbeddedStackError(HBaseMigrateError):
    """A part of the embedded stack could not be started or stopped."""


def free_port(host: str = "127.0.0.1") -> int:
    """A port that is free on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def ensure_port_free(host: str, port: int, what: str) -> None:
    """Fail with a clear message when ``host:port`` is already taken (a listener; the
    connections of a server stopped a moment ago, in TIME_WAIT, do not count: servers bind
    with SO_REUSEADDR)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise EmbeddedStackError(
                f"{what}: port {port} on {host} is already in use ({exc.strerror}); "
                "choose another port or stop the process holding it"
            ) from exc


def find_java() -> str:
    """The ``java`` executable (``$JAVA_HOME/bin/java`` first), checked to be 17 or newer
    (:func:`hbase_migrate.jvm.maven.find_java`, its error as :class:`EmbeddedStackError`)."""
    try:
        return maven.find_java()
    except maven.JvmError as exc:
        raise EmbeddedStackError(str(exc)) from None


def die_with_parent() -> None:
    """preexec_fn: ask the kernel to SIGTERM this child when its parent dies (Linux)."""
    libc_name = ctypes.util.find_library("c")
    if libc_name:
        pr_set_pdeathsig = 1
        ctypes.CDLL(libc_name, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def spawn_child(args: list[str], log_path: str, cwd: str | None = None) -> subprocess.Popen[bytes]:
    """Start ``args`` with output to ``log_path``; the child is terminated with its parent.
    A Python child imports the ``hbase_migrate`` this process imported (``python_env``), not
    one in its working folder."""
    log = open(log_path, "ab")  # noqa: SIM115 - handed to the child, closed below
    try:
        return subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=python_env(),
            preexec_fn=die_with_parent,  # noqa: PLW1509 - only prctl, no locks taken
        )
    finally:
        log.close()


def stop_child(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """SIGTERM, wait, then SIGKILL: the child is gone when this returns."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout)


def log_tail(path: str, lines: int = 15) -> str:
    """The last lines of a log file, for error messages."""
    return maven.log_tail(Path(path), lines)


class ChildProcess:
    """One server process with a data folder and a log in it (``log_name``); a subclass
    builds its command and waits until it serves (:meth:`start`). A context manager."""

    log_name = "server.log"

    def __init__(self, data_dir: str | os.PathLike[str]) -> None:
        self.data_dir = Path(data_dir).resolve()
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def is_running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def log_path(self) -> Path:
        return self.data_dir / self.log_name

    def start(self) -> Self:
        raise NotImplementedError

    def _spawn(self, args: list[str]) -> subprocess.Popen[bytes]:
        self._proc = spawn_child(args, str(self.log_path), cwd=str(self.data_dir))
        return self._proc

    def _exited(self) -> int | None:
        """The exit code when the process has ended (it is then forgotten), else None."""
        if self._proc is None or self._proc.poll() is None:
            return None
        code, self._proc = self._proc.returncode, None
        return code

    def log_tail(self) -> str:
        return f"log {self.log_path}:\n{log_tail(str(self.log_path))}"

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the process (SIGTERM, then SIGKILL after ``timeout``): gone on return."""
        if self._proc is not None:
            stop_child(self._proc, timeout)
        self._proc = None

    def kill(self) -> None:
        """SIGKILL: a crash."""
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait(30)
        self._proc = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
