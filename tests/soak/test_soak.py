"""Chaos soaks with a fixed seed, end to end on the embedded stack over HBase's own RPC (the
default client): linked lists written under seeded faults, the migration through the command
line (``replay --follow`` in a child process the monkey kills), and the verify. The suite runs
a short one whose seed gives one fault of every command-line kind; the 2-minute one, with
several of each, runs in ``make soak`` (``HBASE_MIGRATE_LONG_SOAK=1``). Both run ``--cli``:
the live Airflow of tests/airflow is one per module with a database copied per run, and a
soak through it would add its own scheduler restarts and several minutes of DAG rounds to
the suite's budget; ``make soak`` runs a soak through Airflow too."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepStatus
from hbase_migrate.config import load_config
from minihbase.soak import SoakSpec

pytestmark = [pytest.mark.integration, pytest.mark.e2e, pytest.mark.timeout(900)]

CLI_ACTIONS = {"roll-wals", "move-regions", "kill-server", "kill-replay", "target-outage",
               "slow-webhdfs"}
OVERHEAD = 4 * 60  # seconds a soak may take beyond its own minutes (stack, drain, verify)
LONG = "HBASE_MIGRATE_LONG_SOAK"  # set by make soak


def _counts(text: str, side: str) -> tuple[int, int, int]:
    block = text.split(f"Verify counts of lists on the {side}:", 1)[1]
    found = [int(re.search(rf"\t{name}=(\d+)", block).group(1))  # type: ignore[union-attr]
             for name in ("REFERENCED", "UNREFERENCED", "UNDEFINED")]
    return found[0], found[1], found[2]


def test_a_short_soak_with_every_fault_loses_nothing(tmp_path: Path) -> None:
    # 42 s: chaos for 22 s, 6 actions (one of each), then the settling and the drain
    soak_and_judge(tmp_path, minutes=0.7, seed=620, mean_gap=3)


@pytest.mark.skipif(not os.environ.get(LONG), reason=f"make soak runs it ({LONG}=1)")
def test_a_two_minute_soak_under_chaos_loses_nothing(tmp_path: Path) -> None:
    # 14 actions in the two minutes, every kind
    soak_and_judge(tmp_path, minutes=2, seed=1, mean_gap=8)


def soak_and_judge(tmp_path: Path, minutes: float, seed: int, mean_gap: float) -> None:
    """Run the soak through the command line and check its output, ledger and report."""
    root = tmp_path / "soak"
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "minihbase.cli.soak", "--minutes", str(minutes), "--seed",
         str(seed), "--cli", "--dir", str(root), "--mean-gap", str(mean_gap)],
        capture_output=True, text=True, timeout=840, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    assert f"OK: seed {seed}" in done.stdout
    # the writer, the verify and the migration reach both clusters over HBase's RPC
    assert "stack up: source over HBase's native RPC" in done.stderr
    source, target = _counts(done.stderr, "source"), _counts(done.stderr, "target")
    assert source == target and source[0] > 500 * minutes and source[1:] == (0, 0)
    assert time.monotonic() - began < minutes * 60 + OVERHEAD

    # the ledger: one chaos step per planned event, the schedule the seed gives
    planned = SoakSpec(root, minutes, seed, airflow=False, mean_gap=mean_gap).events()
    migration = load_config(root / "migration.toml")
    assert migration.source.endpoints().native and migration.target.endpoints().native
    with Ledger.open(migration.ledger_url) as ledger:
        record = ledger.migration(migration.name)
        assert record is not None
        chaos = ledger.steps(record.id, "chaos")
        replays = ledger.steps(record.id, "replay")
        verified, = ledger.steps(record.id, "verify-lists")
    assert sorted((s.metrics["index"], s.metrics["action"]) for s in chaos) == \
        [(e.index, e.action) for e in planned]
    assert {e.action for e in planned} == CLI_ACTIONS
    assert all(s.status is StepStatus.SUCCEEDED for s in chaos), [s.error for s in chaos]
    # the target's outage closed the door the migration uses: its RPC ports
    assert {s.metrics["did"]["service"] for s in chaos
            if s.metrics["action"] == "target-outage"} == {"target rpc"}
    assert verified.metrics["tables"][0]["target_counts"]["REFERENCED"] == target[0]
    # after each kill the follow came back: a replay run started within 30 s of its return
    drain = max(s.started_at for s in replays)
    for kill in (s for s in chaos if s.metrics["action"] == "kill-replay"):
        assert kill.ended_at is not None
        if kill.ended_at + 30_000 < drain:
            assert any(kill.ended_at <= r.started_at <= kill.ended_at + 30_000
                       for r in replays), kill.metrics
    report = (root / "report.html").read_text()
    assert "chaos · CLI" in report and "verify-lists" in report
