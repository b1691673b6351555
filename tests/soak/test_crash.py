"""A short crash run end to end on the embedded stack (its own ZooKeeper and clusters, so
``make test-stacks`` runs it): one kill of every step of the migration with a fixed seed,
each command run again, and the migration still ends equal to the source. ``make
soak-crash`` runs 50 kills."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepStatus, WalStatus
from hbase_migrate.config import load_config
from hbase_migrate.soak.crash_plan import STEPS

pytestmark = [pytest.mark.own_stack, pytest.mark.integration, pytest.mark.e2e,
              pytest.mark.timeout(600)]

SEED = 76
KILLS = len(STEPS)  # one round: every step killed once


def test_one_kill_of_every_step_converges_and_loses_nothing(tmp_path: Path) -> None:
    root = tmp_path / "crash"
    done = subprocess.run(
        [sys.executable, "-m", "minihbase.cli.soak_crash", "--kills", str(KILLS), "--seed",
         str(SEED), "--dir", str(root)],
        capture_output=True, text=True, timeout=540, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    assert f"OK: seed {SEED}, {KILLS} kills, every invariant held" in done.stdout
    summary = json.loads((root / "summary.json").read_text())
    assert summary["kills"] == KILLS and summary["seed"] == SEED
    assert summary["kills_per_step"] == {step: 1 for step in STEPS}
    assert all(found["holds"] for found in summary["invariants"].values())
    assert [k["step"] for k in summary["per_kill"]] == list(STEPS)
    assert all(k["rerun_exit"] in (0, 1) for k in summary["per_kill"])

    # the judge's own reading: both sides' cells, the lists against the writer's count
    end = summary["end"]
    assert end["gate"] == "go" and end["cells"]["equal"]
    assert end["cells"]["source_cells"] == end["cells"]["target_cells"] > 0
    assert end["lists_source"]["REFERENCED"] == end["written"]["live_nodes"] > 0
    assert end["lists_target"] == end["lists_source"]

    # the ledger read here, apart from the harness: nothing running, every file done
    migration = load_config(root / "migration.toml")
    with Ledger.open(migration.ledger_url) as ledger:
        record = ledger.migration(migration.name)
        assert record is not None
        steps = ledger.steps(record.id)
        files = ledger.wal_files(record.id, "source")
    assert not [s for s in steps if s.status is StepStatus.RUNNING]
    assert files and all(f.status in (WalStatus.REPLAYED, WalStatus.SKIPPED)
                         or (f.size and f.size <= f.offset_reached) for f in files)
    # every kill that hit left its steps failed (reaped) or succeeded, never running
    killed = {i for k in summary["per_kill"] for i in k["killed_steps"]}
    assert killed and all(s.status is not StepStatus.RUNNING for s in steps if s.id in killed)
    logs = sorted(p.name for p in (root / "logs").iterdir())
    assert sum(name.endswith("-killed.log") for name in logs) == KILLS - 1  # + the follow
