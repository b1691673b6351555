"""The chaos monkey's acts on the embedded stack (:mod:`hbase_migrate.soak.chaos`): each takes
its event and the event's seeded generator, does the fault through the clusters' admin
endpoints or on the processes the soak started, undoes it after ``event.seconds``, and
returns what it did (the ledger's ``chaos`` step keeps it)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hbase_migrate.soak.chaos import Act, ChaosEvent
from stackprocs.admin_client import call_admin


def _live(cluster_json: Path) -> list[dict[str, Any]]:
    return [s for s in call_admin(cluster_json, "info")["servers"] if s["alive"]]


def cluster_acts(source: Path, target: Path, *, target_native: bool = False) -> dict[str, Act]:
    """Faults of the source's region servers and WebHDFS and of the target's front door:
    its RPC ports when the migration reaches it natively (``target_native``), else its
    Thrift2 gateway."""
    door = "rpc" if target_native else "thrift2"

    def roll(event: ChaosEvent, rng: random.Random) -> dict[str, Any]:
        server = rng.choice([None, *(s["slot"] for s in _live(source))])
        return {"server": "all" if server is None else server,
                "rolled": len(call_admin(source, "roll", {"server": server}))}

    def move(event: ChaosEvent, rng: random.Random) -> dict[str, Any]:
        live = _live(source)
        hosted = sorted((r, s["slot"]) for s in live for r in s["regions"])
        moved = []
        for region, slot in rng.sample(hosted, min(len(hosted), rng.randint(1, 3))):
            dest = rng.choice([s["slot"] for s in live if s["slot"] != slot])
            moved.append(call_admin(source, "move", {"region": region, "server": dest}))
        return {"moved": len(moved), "regions": [m["region"][:8] for m in moved]}

    def kill(event: ChaosEvent, rng: random.Random) -> dict[str, Any]:
        slot = rng.choice([s["slot"] for s in _live(source)])
        dead = call_admin(source, "kill", {"server": slot})  # real HBase: the name alone
        time.sleep(event.seconds)
        back = call_admin(source, "restart", {"server": slot})  # real: a new server
        return {"killed": dead if isinstance(dead, str) else dead["server"],
                "restarted": back["server"]}

    def outage(event: ChaosEvent, rng: random.Random) -> dict[str, Any]:
        call_admin(target, "service", {"name": door, "running": False})
        try:
            time.sleep(event.seconds)
        finally:
            call_admin(target, "service", {"name": door, "running": True})
        return {"service": f"target {door}", "down_seconds": event.seconds}

    def slow(event: ChaosEvent, rng: random.Random) -> dict[str, Any]:
        latency = round(rng.uniform(0.2, 1.0), 2)
        call_admin(source, "webhdfs-latency", {"seconds": latency})
        try:
            time.sleep(event.seconds)
        finally:
            call_admin(source, "webhdfs-latency", {"seconds": 0})
        return {"latency_seconds": latency, "for_seconds": event.seconds}

    return {"roll-wals": roll, "move-regions": move, "kill-server": kill,
            "target-outage": outage, "slow-webhdfs": slow}


def process_act(kill: Callable[[], dict[str, Any]], start: Callable[[], None]) -> Act:
    """Kill a process (the replay follow, an Airflow task...), start it again after the
    event's seconds."""

    def act(event: ChaosEvent, rng: random.Random) -> dict[str, Any]:
        did = kill()
        time.sleep(event.seconds)
        start()
        return {**did, "back_after_seconds": event.seconds}

    return act
