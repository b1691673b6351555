"""The recompare's wait: ranges that differ after the first comparison are compared again once
a replay run started after it has finished, since such a run is what brings the source's
newest writes over and closes the difference. The wait is said at once (what it waits for,
for how long, whether a replay is under way) and shown on the step's progress line while it
lasts (:mod:`hbase_migrate.runstate`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from hbase_migrate import runstate
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepStatus
from hbase_migrate.ranges.keyrange import KeyRange

POLL = 0.5  # seconds between two looks at the ledger's replay steps
AWAITED = "a replay run started after the first comparison to finish"


def wait_notice(differing: Sequence[KeyRange], timeout: float, under_way: int | None) -> str:
    """The line said when the wait starts: what differs, what is awaited and for how long,
    and what closes the difference."""
    ranges = (f"key range {differing[0]} differs" if len(differing) == 1
              else f"{len(differing)} key ranges differ ({differing[0]}, ...)")
    now = (f"replay step {under_way} is under way" if under_way is not None
           else "no replay is under way now: start one (hbase-migrate replay, or the "
                "catch-up DAG)")
    return (f"validate: {ranges} after the first comparison; waiting up to "
            f"{timeout:.0f}s for {AWAITED}, then comparing again: a replay brings the "
            f"source's newest writes over and is what closes the difference ({now}; "
            "--recompare-wait 0 compares again at once)")


def wait_for_replay(ledger: Ledger, migration_id: int, since: int, timeout: float,
                    differing: Sequence[KeyRange]) -> dict[str, Any]:
    """Wait at most ``timeout`` seconds for a replay run of the migration started at or after
    ``since`` (ms) to succeed; at once when the migration is not being replayed. Returns
    the seconds waited and a note, as the step's ``recompare`` metrics."""
    steps = ledger.steps(migration_id, "replay")
    if not steps:
        return {"waited": 0.0, "note": "the migration is not being replayed"}
    under_way = next((s.id for s in reversed(steps) if s.status is StepStatus.RUNNING), None)
    runstate.announce(wait_notice(differing, timeout, under_way))
    wait = runstate.Wait(AWAITED, timeout)
    runstate.meter.waiting = wait
    try:
        while time.monotonic() - wait.began < timeout:
            if any(s.started_at >= since and s.status is StepStatus.SUCCEEDED
                   for s in ledger.steps(migration_id, "replay")):
                return {"waited": round(time.monotonic() - wait.began, 2),
                        "note": "a replay run started after the first comparison finished"}
            runstate.check_stop(f"validate: the wait for {AWAITED}")
            time.sleep(POLL)
    finally:
        runstate.meter.waiting = None
    return {"waited": round(timeout, 2),
            "note": f"no replay run finished within {timeout:.0f}s of the first "
                    "comparison; compared again anyway"}
