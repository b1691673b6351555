"""A validation that finds a range differing waits for a replay run before comparing it again:
it says so at once (what it waits for, for how long, that a replay closes the difference)
and shows the wait on its progress line while it lasts; the differing cell's long row key is
printed cut short (head, ``...``, length), never whole."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from hbase_migrate import runstate
from hbase_migrate.bytesutil import short_binary, to_string_binary
from hbase_migrate.cli import cli
from hbase_migrate.config import load_config
from hbase_migrate.hbase.connect import connect
from hbase_migrate.lifecycle import prepare, replay, snapshot, validate
from hbase_migrate.wal.model import Cell, CellType
from tests.support.minicluster import EmbeddedClusters, run_workload, write_migration

pytestmark = pytest.mark.integration
TABLE = "orders"
WAIT = 3.0  # --recompare-wait, seconds
LONG_ROW = b"k" * 5000


def test_the_wait_is_said_at_once_and_a_long_key_is_cut_short(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    src, dst = make_embedded.pair()
    run_workload(src, TABLE, seed=3, ops=60)
    config = write_migration(tmp_path, src, dst, TABLE)
    spec = load_config(config)
    assert prepare(spec).passed
    snapshot(spec)
    assert replay(spec).to_json()["exit_code"] == 0
    with connect(src.endpoints) as client:  # written after the replay: never carried
        client.write_cells(TABLE, [Cell(LONG_ROW, b"d", b"q", int(time.time() * 1000),
                                        CellType.PUT, b"v")])
    said: list[tuple[float, str, str | None]] = []

    def hook(text: str) -> None:
        waiting = runstate.meter.waiting
        said.append((time.monotonic(), text, None if waiting is None else waiting.text()))
    with runstate.announcing(hook):
        result = validate(spec, recompare_wait=WAIT)
        ended = time.monotonic()
        shown = runstate.meter.waiting
    cli_run = CliRunner().invoke(cli, ["validate", "--config", str(config),
                                       "--recompare-wait", "1s"])
    assert result.verdict == "mismatch"
    assert shown is None  # the progress line no longer says it waits
    (at, text, _), = said
    assert ended - at >= WAIT * 0.9, "said only when the wait was over"
    assert f"waiting up to {WAIT:.0f}s for a replay run started after the first " \
           "comparison to finish" in text
    assert "a replay brings the source's newest writes over and is what closes the " \
           "difference" in text
    assert "no replay is under way now" in text and "--recompare-wait 0" in text
    assert result.metrics["recompare"]["waited"] == WAIT

    shortened = short_binary(LONG_ROW)
    assert shortened == "k" * 32 + "...(5000 bytes)"
    differences, = [d["differences"] for t in result.metrics["tables"]
                    for d in t["mismatched"]]
    assert differences == [f"only in source: row={shortened} column=d:q ts="
                           + differences[0].rsplit("ts=", 1)[1]]
    assert cli_run.exit_code == 1, cli_run.output
    assert "waiting up to 1s for a replay run" in cli_run.stderr
    assert f"only in source: row={shortened} column=d:q" in cli_run.stdout
    assert to_string_binary(LONG_ROW) not in cli_run.output

