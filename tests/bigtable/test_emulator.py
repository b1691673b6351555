"""``hbase-migrate bigtable emulator start|stop``: the emulator in the background, found
again by its folder, answering Google's client, and stopped with its whole process group."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from hbase_migrate.bigtable.emulator import STATE, emulator_binary
from hbase_migrate.cli import cli
from hbase_migrate.services import group_alive

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
