"""The chaos monkey's schedule (a function of the seed alone) and its record: one ``chaos``
step per action in the ledger, spanning the fault, failed with its error when the action
failed, and shown with what it did on the report's step timeline."""

from __future__ import annotations

import random
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepStatus, TableMapping
from hbase_migrate.report import build_report
from hbase_migrate.soak.chaos import ACTIONS, ChaosEvent, ChaosMonkey, schedule


def test_the_schedule_is_the_seeds_and_keeps_its_rules() -> None:
    first, again, other = schedule(7, 1800), schedule(7, 1800), schedule(8, 1800)
    assert first == again and first != other
    assert 80 < len(first) < 160  # one every 15 s on average, minus the overlaps left out
    assert {e.action for e in first} == set(ACTIONS)
    assert all(e.at >= 5 and e.ends <= 1800 for e in first)
    for name, (_, shortest, longest) in ACTIONS.items():
        mine = [e for e in first if e.action == name]
        assert all(shortest <= e.seconds <= longest for e in mine)
        assert all(a.ends <= b.at for a, b in pairwise(mine)), name
    assert [e.index for e in first] == list(range(len(first)))
    assert [e.rng(7).random() for e in first[:3]] == [e.rng(7).random() for e in again[:3]]


def test_each_action_is_a_chaos_step_with_what_it_did(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    with Ledger.open(url) as ledger:
        ledger.ensure_migration("soak", "a", "b", [TableMapping("lists", "lists")])
    events = [ChaosEvent(0, 0.0, "kill-server", 0.6), ChaosEvent(1, 0.2, "target-outage", 0.0)]

    def kill(event: ChaosEvent, rng: random.Random) -> dict[str, Any]:
        time.sleep(event.seconds)
        return {"killed": f"rs{rng.randint(0, 2)}", "restarted": True}

    def outage(event: ChaosEvent, rng: random.Random) -> dict[str, Any]:
        raise OSError("the admin endpoint does not answer")

    said: list[str] = []
    monkey = ChaosMonkey(events, {"kill-server": kill, "target-outage": outage}, 3, url,
                         "soak", said.append).start()
    time.sleep(0.4)  # the schedule's last event has started
    done = monkey.join()
    assert [d["action"] for d in done] == ["kill-server", "target-outage"]
    assert done[0]["did"]["killed"] == f"rs{random.Random('3:0:kill-server').randint(0, 2)}"
    assert "OSError: the admin endpoint does not answer" in done[1]["error"]
    with Ledger.open(url) as ledger:
        record = ledger.migration("soak")
        assert record is not None
        killed, refused = ledger.steps(record.id, "chaos")
        html = build_report(ledger, "soak", now=int(time.time() * 1000))
    assert killed.status is StepStatus.SUCCEEDED and refused.status is StepStatus.FAILED
    assert killed.ended_at is not None and killed.ended_at - killed.started_at >= 600
    assert refused.started_at < killed.ended_at  # faults overlap
    assert killed.metrics["detail"] == f"killed={done[0]['did']['killed']}, restarted=True"
    assert "chaos · CLI" in html
    assert f"action kill-server, detail killed={done[0]['did']['killed']}" in html
    assert any("#1 at +0.2 s: target-outage: OSError" in line for line in said)
