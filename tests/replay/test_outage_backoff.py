"""A service that stays away is probed with capped exponential backoff: 1 s doubling to the
cap (30 s), then every 30 s, until it answers; the pauses are asked of the run's stop event,
so the schedule is read here without waiting through it."""

from __future__ import annotations

import threading

from hbase_migrate.cluster.errors import GatewayUnreachableError
from hbase_migrate.replay.outage import BACKOFF_CAP_S, Outage, OutageRider, outage_of

DOWN = GatewayUnreachableError("thrift2 dst:9090 refused", endpoint="dst:9090")


class Pauses(threading.Event):
    """A stop event that is never set and records each pause asked of it, at once."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[float] = []

    def wait(self, timeout: float | None = None) -> bool:
        assert timeout is not None
        self.asked.append(timeout)
        return False


def test_the_probes_double_from_1_s_and_stay_at_the_cap_until_the_service_answers() -> None:
    failures = 8  # past the cap: 1, 2, 4, 8, 16, 32 -> 30
    probes: list[int] = []

    def probe() -> None:
        probes.append(1)
        if len(probes) <= failures:
            raise DOWN

    stop = Pauses()
    told: list[float] = []
    rider = OutageRider(tolerance_ms=3_600_000, stop=stop, ledger=None, migration_id=None,
                        stream="source", on_wait=lambda ride, delay: told.append(delay))
    outage = outage_of(DOWN)
    assert isinstance(outage, Outage)
    assert rider.ride(outage, probe) is True
    assert BACKOFF_CAP_S == 30
    assert stop.asked == [1, 2, 4, 8, 16, 30, 30, 30, 30]  # a pause before each probe
    assert told == stop.asked  # each said as it began
    assert len(probes) == failures + 1 and rider.ridden[0].probes == failures + 1
