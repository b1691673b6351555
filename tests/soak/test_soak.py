"""A 2-minute chaos soak with a fixed seed, end to end on the embedded stack over HBase's own
RPC (the default client): linked lists written under seeded faults, the migration through the
command line (``replay --follow`` in a child process the monkey kills), and the verify. The
in-suite soak runs ``--cli``: the live Airflow of tests/airflow is one per module with a
database copied per run, and a soak through it would add its own scheduler restarts and
several minutes of DAG rounds to the suite's budget; ``make soak`` runs the same soak
through Airflow."""

from __future__ import annotations

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

SEED = 1  # a schedule with every action of the command-line soak
MINUTES = 2
MEAN_GAP = 8  # seconds between chaos events: 14 in the two minutes, every action


def _counts(text: str, side: str) -> tuple[int, int, int]:
    block = text.split(f"Verify counts of lists on the {side}:", 1)[1]
    found = [int(re.search(rf"\t{name}=(\d+)", block).group(1))  # type: ignore[union-attr]
             for name in ("REFERENCED", "UNREFERENCED", "UNDEFINED")]
    return found[0], found[1], found[2]


def test_a_two_minute_soak_under_chaos_loses_nothing(tmp_path: Path) -> None:
    root = tmp_path / "soak"
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "minihbase.cli.soak", "--minutes", str(MINUTES), "--seed",
         str(SEED), "--cli", "--dir", str(root), "--mean-gap", str(MEAN_GAP)],
        capture_output=True, text=True, timeout=840, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    assert f"OK: seed {SEED}" in done.stdout
    # the writer, the verify and the migration reach both clusters over HBase's RPC
    assert "stack up: source over HBase's native RPC" in done.stderr
    source, target = _counts(done.stderr, "source"), _counts(done.stderr, "target")
    assert source == target and source[0] > 1000 and source[1:] == (0, 0)
    assert time.monotonic() - began < 6 * 60

    # the ledger: one chaos step per planned event, the schedule the seed gives
    planned = SoakSpec(root, MINUTES, SEED, airflow=False, mean_gap=MEAN_GAP).events()
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
    assert {e.action for e in planned} == {"roll-wals", "move-regions", "kill-server",
                                           "kill-replay", "target-outage", "slow-webhdfs"}
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
