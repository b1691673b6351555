"""``scripts/check_injection.py`` (run by ``make lint``) fails on a test that injects a
part into a client by assignment, and passes the ways a test may still set things up."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from scripts import check_injection

REPO = Path(__file__).resolve().parents[1]

SAMPLE = '''\
import pytest
from hbase_migrate.rpc import writes as writes_module
from hbase_migrate.rpc.client import RpcClient


def test_bad(client, monkeypatch: pytest.MonkeyPatch) -> None:
    client.locator = object()
    client._pool = None
    client.transport.pool = []
    setattr(client, "_locator", None)
    monkeypatch.setattr(client, "scanner", None)


def test_allowed(client, server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writes_module, "_decode", None)
    RpcClient._pool = None
    server.stall_calls = 1
    monkeypatch.setattr(client, "_list", None)
    client.__dict__


class Fake:
    def __init__(self) -> None:
        self._pool = []
        self.locator = None
'''
BAD_LINES = [7, 8, 9, 10, 11]  # the five lines of test_bad


def test_the_check_names_each_injection_in_a_sample(tmp_path: Path) -> None:
    sample = tmp_path / "test_sample.py"
    sample.write_text(SAMPLE, encoding="utf-8")
    found = list(check_injection.findings(sample))
    assert [int(line.split(":")[1]) for line in found] == BAD_LINES, found
    assert all("give the part to the constructor" in line for line in found)
    run = subprocess.run([sys.executable, str(REPO / "scripts" / "check_injection.py"),
                          str(sample)], capture_output=True, text=True, check=False)
    assert run.returncode == 1 and "5 injection(s)" in run.stderr


def test_the_suite_passes_the_check() -> None:
    run = subprocess.run([sys.executable, str(REPO / "scripts" / "check_injection.py")],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout
