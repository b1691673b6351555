"""The suite's bounded wait (tests/support/wait.py) on a loaded machine."""

from __future__ import annotations

import os
import time

import pytest

from tests.support import wait


def test_a_wait_is_stretched_by_the_machines_load(monkeypatch: pytest.MonkeyPatch) -> None:
    cores = os.cpu_count() or 1
    monkeypatch.setattr(wait.os, "getloadavg", lambda: (3.0 * cores, 0.0, 0.0))
    began = time.monotonic()
    with pytest.raises(AssertionError, match="waiting for nothing"):
        wait.wait_for(lambda: False, 0.1, "nothing", every=0.01)
    assert time.monotonic() - began >= 0.3  # three times the bound at a load of 3 per core
    monkeypatch.setattr(wait.os, "getloadavg", lambda: (0.1, 0.0, 0.0))
    began = time.monotonic()
    with pytest.raises(AssertionError):
        wait.wait_for(lambda: False, 0.1, "nothing", every=0.01)
    assert time.monotonic() - began < 0.3  # an idle machine: the bound as given
