"""``hbase-migrate realstack start`` and the Thrift gateways: a version of which Maven Central
has no hbase-thrift starts without them, saying so in one line; ``--no-gateways`` asks for
none on any version; gateways asked for where there are none is one clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.cli import main
from realstack.hbase import RealHBaseOptions, choose_gateways, has_gateways
from realstack.maven import RealStackError
from tests.cli_util import fails

from .fixtures import skip_without_real_stack


def test_a_version_without_hbase_thrift_starts_without_gateways_and_says_so() -> None:
    run, note = choose_gateways("3.0.0-alpha-4", None, available=False)
    assert run is False
    assert len(note.splitlines()) == 1
    assert "no hbase-thrift 3.0.0-alpha-4" in note and "without Thrift gateways" in note


def test_no_gateways_is_honoured_on_any_version_and_gateways_run_where_they_can() -> None:
    assert choose_gateways("2.6.1", False, available=True) == (False, "")
    assert choose_gateways("2.6.1", None, available=True) == (True, "")
    assert choose_gateways("2.6.1", True, available=True) == (True, "")


def test_gateways_asked_for_where_there_are_none_is_one_clear_error() -> None:
    with pytest.raises(RealStackError) as caught:
        choose_gateways("2.6.4", True, available=False)
    message = str(caught.value)
    assert len(message.splitlines()) == 1
    assert "2.6.4" in message and "--no-gateways" in message


def test_the_command_offers_no_gateways(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["realstack", "start", "--help"])
    assert done.value.code == 0
    assert "--gateways / --no-gateways" in capsys.readouterr().out


def test_thrift_http_without_gateways_is_refused_before_anything_starts(
        capsys: pytest.CaptureFixture[str]) -> None:
    message = fails(["realstack", "start", "--no-gateways", "--thrift-http"], capsys)
    assert "--thrift-http needs the gateways" in message


def test_the_default_version_has_hbase_thrift() -> None:
    """The session stack's 2.6.1 tree holds hbase-thrift (the class path Maven resolved)."""
    skip_without_real_stack()
    assert has_gateways("2.6.1")


def test_no_gateways_on_1x_is_refused_naming_the_option() -> None:
    """The 1.x stack is built with its gateways only: refused before any JVM starts."""
    with pytest.raises(RealStackError, match=r"HBase 1\.4\.13: .*does not run --no-gateways"):
        RealHBaseOptions(hbase_version="1.4.13", gateways=False).arguments(Path("unused"))
