"""A chaos monkey on a seeded schedule, as HBase's ChaosMonkey runs beside its integration tests.

The schedule is a pure function of the seed and the soak's length: the same seed gives the
same actions at the same moments with the same durations, so a failed soak can be repeated.
Which server, region or process an action picks is drawn from the event's own seeded random
generator. The actions themselves belong to the stack (its admin endpoint, its processes):
the caller maps each action's name to a function. Every action runs in its own thread (so
faults overlap) and is recorded in the migration's ledger as a step of kind ``chaos``,
spanning the fault, with what it did; the report shows those steps on its timeline.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.errors import HBaseMigrateError

log = logging.getLogger(__name__)

CHAOS_KIND = "chaos"

# action -> (weight, shortest and longest duration in seconds; 0: at once)
ACTIONS: dict[str, tuple[int, float, float]] = {
    "roll-wals": (4, 0, 0),
    "move-regions": (4, 0, 0),
    "kill-server": (2, 5, 20),  # a source region server down, then restarted
    "kill-replay": (2, 0, 5),  # the replay process (or its Airflow task), back after that
    "target-outage": (2, 3, 30),  # the target's Thrift2 gateway stopped, then started
    "slow-webhdfs": (2, 10, 30),  # the source's WebHDFS answers each request late
    "restart-scheduler": (1, 0, 0),  # Airflow's scheduler stopped and started
}


@dataclass(frozen=True)
class ChaosEvent:
    index: int
    at: float  # seconds after the monkey starts
    action: str
    seconds: float  # how long the fault lasts (0: a single act)

    @property
    def ends(self) -> float:
        return self.at + self.seconds

    def rng(self, seed: int) -> random.Random:
        """The event's own generator: the targets it picks depend on the seed alone."""
        return random.Random(f"{seed}:{self.index}:{self.action}")

    def line(self) -> str:
        lasting = f" for {self.seconds:.1f} s" if self.seconds else ""
        return f"#{self.index} at +{self.at:.1f} s: {self.action}{lasting}"


def schedule(seed: int, seconds: float, actions: Mapping[str, tuple[int, float, float]] = ACTIONS,
             mean_gap: float = 15.0, first: float = 5.0) -> list[ChaosEvent]:
    """Events from ``first`` until ``seconds``, about ``mean_gap`` apart; every fault ends
    by ``seconds``, and a fault never overlaps another of its own kind (one server down, one
    outage at a time), while faults of different kinds do overlap."""
    if not actions:
        raise HBaseMigrateError("chaos schedule: no action to choose from")
    rng = random.Random(seed)
    names = sorted(actions)
    weights = [actions[n][0] for n in names]
    busy_until: dict[str, float] = {}
    events: list[ChaosEvent] = []
    at = first
    while at < seconds:
        name = rng.choices(names, weights)[0]
        _, shortest, longest = actions[name]
        lasts = round(rng.uniform(shortest, longest), 1) if longest else 0.0
        if busy_until.get(name, -1.0) < at and at + lasts <= seconds:
            events.append(ChaosEvent(len(events), round(at, 1), name, lasts))
            busy_until[name] = at + lasts
        at += rng.expovariate(1 / mean_gap)
    return events


Act = Callable[[ChaosEvent, random.Random], dict[str, Any]]


class ChaosMonkey:
    """Runs a schedule against a stack: ``acts[action](event, rng)`` does the fault (and
    undoes it after ``event.seconds``) and returns what it did. Each event is a ``chaos``
    step of migration ``migration`` in the ledger at ``ledger_url``."""

    def __init__(self, events: list[ChaosEvent], acts: Mapping[str, Act], seed: int,
                 ledger_url: str, migration: str,
                 say: Callable[[str], None] = lambda line: None) -> None:
        missing = sorted({e.action for e in events} - set(acts))
        if missing:
            raise HBaseMigrateError(f"chaos: this stack cannot {', '.join(missing)}")
        self.events, self.acts, self.seed = events, acts, seed
        self.ledger_url, self.migration, self.say = ledger_url, migration, say
        self.done: list[dict[str, Any]] = []
        self.stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._runner: threading.Thread | None = None

    def start(self) -> ChaosMonkey:
        self._runner = threading.Thread(target=self._run, name="chaos-monkey", daemon=True)
        self._runner.start()
        return self

    def _run(self) -> None:
        began = time.monotonic()
        for event in self.events:
            if self.stop.wait(max(0.0, began + event.at - time.monotonic())):
                return
            thread = threading.Thread(target=self._act, args=(event,), daemon=True,
                                      name=f"chaos-{event.index}")
            thread.start()
            self._threads.append(thread)

    def _act(self, event: ChaosEvent) -> None:
        with Ledger.open(self.ledger_url) as ledger:
            record = ledger.migration(self.migration)
            if record is None:
                raise HBaseMigrateError(f"chaos: no migration {self.migration!r} in the "
                                        f"ledger {self.ledger_url}")
            outcome: dict[str, Any] = {"index": event.index, "action": event.action,
                                       "at": event.at, "seconds": event.seconds}
            try:
                with ledger.step(record.id, CHAOS_KIND) as step:
                    step.metrics.update(action=event.action, seed=self.seed,
                                        index=event.index, planned_seconds=event.seconds)
                    did = self.acts[event.action](event, event.rng(self.seed))
                    step.metrics["detail"] = _detail(did)
                    step.metrics["did"] = did
                    outcome["did"] = did
            except Exception as exc:  # recorded as a failed step; the soak goes on
                outcome["error"] = f"{type(exc).__name__}: {exc}"
                log.warning("chaos %s failed: %s", event.line(), outcome["error"])
        with self._lock:
            self.done.append(outcome)
        self.say(f"chaos {event.line()}: " + (outcome.get("error") or _detail(outcome["did"])))

    def join(self) -> list[dict[str, Any]]:
        """Stop scheduling; wait for the faults under way to end (each undoes itself)."""
        self.stop.set()
        if self._runner is not None:
            self._runner.join()
        for thread in self._threads:
            thread.join()
        with self._lock:
            return sorted(self.done, key=lambda d: int(d["index"]))


def _detail(did: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in did.items())[:300]
