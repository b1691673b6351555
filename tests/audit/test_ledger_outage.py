"""A PostgreSQL ledger that goes away under a ``--follow``: the follow waits for it (the
outage is recorded once the ledger is back), goes on by itself, and the target converges;
nothing the target acknowledged while the ledger was away is lost or recorded twice."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepStatus
from hbase_migrate.config import load_config
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.outage import RiddenOutage
from hbase_migrate.replay.run import follow_replay
from hbase_migrate.replay.summary import FollowSummary, Observer
from minihbase.regionserver import WalSettings
from tests.audit.conftest import new_postgres_server
from tests.support.minicluster import (
    EmbeddedClusters,
    compare,
    copy_table_schema,
    run_workload,
    set_watermark,
    write_migration,
)
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration
TABLE = "orders"


class Recorder(Observer):
    def __init__(self) -> None:
        self.waits: list[str] = []
        self.resumed_after: list[float] = []

    def waiting(self, outage: RiddenOutage, retry_in: float, lag: int | None) -> None:
        self.waits.append(outage.outage.service)

    def resumed(self, outage: RiddenOutage) -> None:
        self.resumed_after.append(outage.seconds)


def test_follow_waits_for_its_postgresql_ledger(tmp_path: Path,
                                                make_embedded: EmbeddedClusters) -> None:
    server = new_postgres_server()
    server.start()
    try:
        url = server.url(server.create_database("ledger"))
        src, dst = make_embedded.pair(wal=WalSettings(region_servers=2, roll_period=3600))
        config = write_migration(tmp_path, src, dst, TABLE)
        text = config.read_text()
        config.write_text(text.replace(text.split("\n")[2], f'ledger = "{url}"'))
        run_workload(src, TABLE, seed=81, ops=20)
        copy_table_schema(src, dst, TABLE)
        set_watermark(config)
        recorder, stop = Recorder(), threading.Event()
        runs: list[int] = []
        done: list[FollowSummary] = []
        follower = threading.Thread(target=lambda: done.append(follow_replay(
            ReplayJob.from_spec(load_config(config)), 0.3, stop, recorder,
            on_run=lambda s: runs.append(s.exit_code))), daemon=True)
        follower.start()
        try:
            wait_for(lambda: len(runs) >= 2, 60, "two follow runs")
            server.pause()
            try:
                run_workload(src, TABLE, seed=82, ops=60)  # edits while it is away
                wait_for(lambda: recorder.waits, 60, "the follow to wait")
                time.sleep(5)
            finally:
                server.run()
            wait_for(lambda: recorder.resumed_after, 60, "the follow to resume")
            wait_for(lambda: compare(src, dst, TABLE).equal, 60, "the target to converge")
        finally:
            stop.set()
            follower.join(60)
        follow, = done
        assert set(recorder.waits) == {"ledger"}, recorder.waits
        assert follow.exit_code == 0 and set(runs) == {0}, runs
        assert 5 <= follow.outages[0].seconds < 5 + 30, follow.outages
        spec = load_config(config)
        with Ledger.open(spec.ledger_url) as ledger:
            record = ledger.migration(spec.name)
            assert record is not None
            steps = ledger.steps(record.id, "outage")
            assert ledger.gaps(record.id) == []
        assert [(s.status, s.metrics["service"]) for s in steps] == [
            (StepStatus.SUCCEEDED, "ledger")], steps
        # the ledger named by its URL, its password masked
        assert "postgres:***@" in steps[0].metrics["endpoint"]
        assert server.password not in steps[0].metrics["endpoint"]
    finally:
        server.stop()
