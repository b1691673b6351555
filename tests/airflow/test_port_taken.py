"""A local Airflow's api-server port taken by another process between its choice and the
api-server's start (another stack's api-server took the same free port on a busy machine):
the healthy answer of that other process is not taken for this stack's, and a start that
chose the port itself starts again on another."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hbase_migrate.airflow_stack import AirflowStack, PortTakenError
from hbase_migrate.services import HOST, listening_group, spawn
from tests.support.wait import wait_for


@pytest.fixture
def listener() -> Iterator[int]:
    """A port this test process listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        sock.listen()
        yield int(sock.getsockname()[1])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A process of a session of its own, as the stack spawns its api-server, that listens
    on a port it prints."""
    code = ("import socket, sys, time; s = socket.socket(); s.bind(('127.0.0.1', 0)); "
            "s.listen(); print(s.getsockname()[1], flush=True); time.sleep(120)")
    proc = spawn([sys.executable, "-c", code], tmp_path / "server.log")
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def test_the_listener_of_a_port_is_found_by_its_process_group(
        listener: int, server: subprocess.Popen[bytes], tmp_path: Path) -> None:
    assert listening_group(HOST, listener) == os.getpgid(0)
    port = wait_printed(tmp_path / "server.log")
    assert listening_group(HOST, port) == server.pid  # its own session: group == pid
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as closed:
        closed.bind((HOST, 0))  # bound, not listening
        assert listening_group(HOST, int(closed.getsockname()[1])) is None


def test_a_healthy_answer_from_another_process_is_refused(
        listener: int, server: subprocess.Popen[bytes], tmp_path: Path) -> None:
    """The stack's api-server (here ``server``) does not listen on the stack's port: this
    test process does, so the check names the port as another's."""
    stack = AirflowStack(tmp_path, listener, {})
    stack.processes["api-server"] = server
    with pytest.raises(PortTakenError, match=f"port {listener} is another process's"):
        stack._check_listener()
    mine = AirflowStack(tmp_path, wait_printed(tmp_path / "server.log"), {})
    mine.processes["api-server"] = server
    mine._check_listener()  # its own port: nothing to say


def wait_printed(log: Path) -> int:
    """The port ``server`` printed."""
    wait_for(lambda: log.exists() and log.read_text().strip() != "", 30, "the server's port")
    return int(log.read_text().split()[0])
