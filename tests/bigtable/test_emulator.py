"""``hbase-migrate bigtable emulator start|stop``: the emulator in the background, found
again by its folder, answering Google's client, and stopped with its whole process group."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from hbase_migrate.bigtable.client import BigtableClient
from hbase_migrate.bigtable.emulator import STATE, Emulator, emulator_binary
from hbase_migrate.cli import cli
from hbase_migrate.config_bigtable import BigtableSettings
from hbase_migrate.services import group_alive

EMULATOR_VARIABLE = "BIGTABLE_EMULATOR_HOST"  # what Google's clients read
pytestmark = [pytest.mark.integration,
              pytest.mark.filterwarnings("ignore:Connecting to Bigtable emulator")]


@pytest.fixture(autouse=True)
def _needs_emulator() -> None:
    if emulator_binary() is None:
        pytest.skip("cbtemulator is not installed (Debian package "
                    "google-cloud-cli-bigtable-emulator)")


def test_start_answers_google_client_and_stop_ends_it(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "emu"
    started = CliRunner().invoke(cli, ["bigtable", "emulator", "start", "--dir", str(folder)])
    assert started.exit_code == 0, started.output
    line = json.loads(started.output)
    try:
        assert json.loads((folder / STATE).read_text()) == line
        again = CliRunner().invoke(cli, ["bigtable", "emulator", "start", "--dir", str(folder)])
        assert again.exit_code != 0
        assert "already runs at " + line["emulator_host"] in str(again.exception)
        from google.cloud import bigtable

        monkeypatch.setitem(os.environ, "BIGTABLE_EMULATOR_HOST", line["emulator_host"])
        instance = bigtable.Client(project="p", admin=True).instance("i")
        instance.table("t").create()
        assert [t.table_id for t in instance.list_tables()] == ["t"]
    finally:
        stopped = CliRunner().invoke(cli, ["bigtable", "emulator", "stop", "--dir", str(folder)])
    assert stopped.exit_code == 0 and line["emulator_host"] in stopped.output
    assert not group_alive(line["pid"]) and not (folder / STATE).exists()
    gone = CliRunner().invoke(cli, ["bigtable", "emulator", "stop", "--dir", str(folder)])
    assert "no emulator runs" in gone.output


def test_a_client_reaches_its_emulator_and_leaves_the_environment_as_it_found_it(
        bigtable_emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    """The emulator is the client's option, not the process's: a variable set by someone
    else (here pointing nowhere) neither redirects the client nor is changed by it, and a
    client creates none that a child process or a real instance's client would inherit."""
    settings = BigtableSettings("p", "env", emulator_host=bigtable_emulator.host)
    monkeypatch.setenv(EMULATOR_VARIABLE, "127.0.0.1:1")
    with BigtableClient(settings) as client:
        client.probe()
    assert os.environ[EMULATOR_VARIABLE] == "127.0.0.1:1"
    monkeypatch.delenv(EMULATOR_VARIABLE)
    with BigtableClient(settings) as client:
        client.probe()
    assert EMULATOR_VARIABLE not in os.environ
