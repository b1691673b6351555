"""The session's real HBase stacks, one per configuration (its :class:`RealHBaseOptions`),
started on first use and lent to every module that asks for the same one, as HBase's own
suite shares one mini-cluster per test class. A stack stays up while a module holds it and
after, until another configuration is asked for (then the idle ones stop, so one at a time
runs beside the session's ``real_hbase`` and ``secured_stack``) or the session ends;
``tests/conftest.py`` puts the modules that share one next to each other, on one worker.

A module that breaks the stack it borrows (kills a server) puts it back as configured before
it hands it back (:func:`restore_region_servers`); one whose test cannot be undone (masters
killed, settings changed on the running servers) starts its own and says why.

Every real stack this process starts (through the registry or not) is counted:
:func:`started` lists them for the session's summary."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict

import pytest

from realstack.hbase import RealHBase, RealHBaseOptions
from realstack.maven import RealStackError
from stackprocs.admin_client import call_admin

_STARTS: list[str] = []  # every real stack started in this process, in order


def describe(options: RealHBaseOptions) -> str:
    """``options`` as the settings that differ from the defaults (the summary's line)."""
    default = asdict(RealHBaseOptions())
    changed = {k: v for k, v in asdict(options).items() if v != default[k] and k != "name"}
    return f"{options.name} {options.hbase_version}" + "".join(
        f" {k}={v}" for k, v in sorted(changed.items()) if k != "hbase_version")


def count_starts() -> None:
    """Count every :meth:`RealHBase.start` of this process from now on (once)."""
    start = RealHBase.start
    if getattr(start, "counted", False):
        return

    def counted(self: RealHBase, timeout: float = 600.0) -> RealHBase:
        _STARTS.append(describe(self.options))
        return start(self, timeout)

    counted.counted = True  # type: ignore[attr-defined]
    RealHBase.start = counted  # type: ignore[method-assign,assignment]


def started() -> list[str]:
    """The real stacks this process started, in order."""
    return list(_STARTS)


class Stacks:
    """Real stacks by configuration; :meth:`lend` one to a module."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self._factory = factory
        self._stacks: dict[RealHBaseOptions, RealHBase] = {}
        self._holders: Counter[RealHBaseOptions] = Counter()

    @contextmanager
    def lend(self, options: RealHBaseOptions) -> Iterator[RealHBase]:
        """The running stack of ``options``, started if none is (a test failure when it
        cannot start); the module must hand it back as it found it."""
        if options.kerberos:
            raise ValueError("a Kerberos-secured stack is the session's secured_stack, or "
                             "kerberos_stack() for a realm of its own")
        stack = self._stacks.get(options)
        if stack is None or not stack.running:
            self._stop_idle()
            stack = RealHBase(self._factory.mktemp(options.name), options)
            try:
                stack.start()
            except RealStackError as exc:
                pytest.fail(f"real HBase {describe(options)} did not start: {exc}")
            self._stacks[options] = stack
        self._holders[options] += 1
        try:
            yield stack
        finally:
            self._holders[options] -= 1

    def _stop_idle(self) -> None:
        for options, stack in list(self._stacks.items()):
            if not self._holders[options]:
                stack.stop()
                del self._stacks[options]

    def close(self) -> None:
        for stack in self._stacks.values():
            stack.stop()
        self._stacks.clear()


def restore_region_servers(stack: RealHBase, timeout: float = 180.0) -> None:
    """Put ``stack`` back to its configured number of live region servers, each killed one
    replaced by a new one (HBase's ``startRegionServer``): what a module that killed servers
    of a lent stack does before handing it back."""
    def live() -> int:  # neither stopped nor aborted (a killed one's thread may linger)
        return sum(1 for s in call_admin(stack.cluster_json, "info", {})["servers"]
                   if s["alive"])

    for _ in range(stack.options.region_servers - live()):
        call_admin(stack.cluster_json, "restart", {})
    deadline = time.monotonic() + timeout
    while live() < stack.options.region_servers:
        assert time.monotonic() < deadline, f"{stack.options.name}: region servers not back"
        time.sleep(0.5)
