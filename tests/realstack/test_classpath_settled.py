"""``realstack start`` of a version whose optional artifacts Maven Central does not publish
(3.0.0-alpha-4: no hbase-thrift, no codec modules; ``mvn dependency:get`` of
``org.apache.hbase:hbase-thrift:3.0.0-alpha-4:pom`` is refused): the class path is settled
once, asking Maven for those artifacts once, and every later start reads it with no Maven at
all (before, each start ran Maven twice: has_gateways, then the start itself, each resolving
and failing on hbase-thrift again). What was left out is one short line of the log, not
Maven's error at warning level."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from realstack.hbase import has_gateways, hbase_classpath

from .fixtures import skip_without_real_stack

pytestmark = pytest.mark.realstack
VERSION = "3.0.0-alpha-4"


def test_a_version_is_settled_once_and_read_back_without_maven(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    skip_without_real_stack()
    real = shutil.which("mvn")
    assert real is not None
    calls = tmp_path / "mvn-calls"
    spy = tmp_path / "bin" / "mvn"  # the real Maven, each run's arguments written down
    spy.parent.mkdir()
    spy.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {real} "$@"\n', encoding="utf-8")
    spy.chmod(0o755)
    monkeypatch.setenv("PATH", f"{spy.parent}:/usr/bin:/bin")
    monkeypatch.setenv("HBASE_MIGRATE_CACHE", str(tmp_path / "cache"))

    with caplog.at_level(logging.INFO, logger="realstack.hbase"):
        first = hbase_classpath(VERSION)
    runs = calls.read_text(encoding="utf-8").splitlines()
    asking_thrift = [r for r in runs if "-Dhbase.thrift.artifact=" not in r]
    assert len(asking_thrift) == 1, runs  # the one run that found it is not published
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    said = [r.getMessage() for r in caplog.records if "Maven Central has no" in r.getMessage()]
    assert said == [f"HBase {VERSION}: Maven Central has no hbase-compression-aircompressor, "
                    "hbase-compression-brotli, hbase-thrift of it; resolving without"]
    assert not any("/hbase-thrift-" in entry for entry in first)

    # what the command does on each start: has_gateways, then the stack's own class path
    assert has_gateways(VERSION) is False
    assert hbase_classpath(VERSION) == first
    assert calls.read_text(encoding="utf-8").splitlines() == runs  # no Maven since
