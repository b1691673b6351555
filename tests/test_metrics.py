"""The ``--metrics-port`` endpoint over HTTP: each scrape reads the stream's figures from the
ledger (equal to ``status --json``'s ``streams``), adds the process's own (runs, the outage
waited out now, gateway retries) and the throttle in force while a step runs."""

from __future__ import annotations

import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from hbase_migrate.audit.ledger import Ledger, now_ms
from hbase_migrate.audit.records import TableMapping
from hbase_migrate.audit.status import compute_status
from hbase_migrate.config import LimitSettings
from hbase_migrate.limits import ThrottlePlan, step_limits
from hbase_migrate.metrics import FollowCollector, serve_metrics
from hbase_migrate.replay.outage import Outage, RiddenOutage
from hbase_migrate.replay.summary import FollowSummary


def scrape(url: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    with urllib.request.urlopen(url, timeout=10) as answer:
        text = answer.read().decode()
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_a_scrape_reports_the_ledger_figures_and_the_follow_s_own(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    now = now_ms()
    with Ledger.open(url) as ledger:
        mid = ledger.ensure_migration("orders", "src", "dst",
                                      [TableMapping("orders", "orders")]).id
        for name, cells, closed in (("f1", {"Put": 7, "DeleteColumn": 2}, True),
                                    ("f2", {"Put": 5}, False)):
            path = f"/hbase/oldWALs/{name}"
            ledger.record_wal_seen(mid, "source", "rs1", path, 1000, now - 60_000)
            ledger.record_wal_progress(mid, "source", path, offset_reached=500, entries=3,
                                       cells_by_type=cells, markers={},
                                       approximated_deletes=0, last_write_time=now - 30_000,
                                       closed=closed)
        report = compute_status(ledger, now=now_ms()).to_json()
    status = report["migrations"][0]["streams"]["source"]
    follow = FollowSummary("orders", "source", now, runs=4)
    follow.outages.append(RiddenOutage(Outage("target gateway", "dst:9090", "refused"),
                                       now - 5_000))
    served = serve_metrics(FollowCollector(url, "orders", "source", lambda: follow), 0)
    try:
        plan = ThrottlePlan("replay", "orders", url,
                            LimitSettings(replay_cells_per_second=500))
        with step_limits(plan):
            metrics = scrape(served.url)
        after = scrape(served.url)
    finally:
        served.close()
    mine = frozenset({("migration", "orders"), ("stream", "source")})

    def value(name: str, **labels: str) -> float:
        return metrics[(name, mine | frozenset(labels.items()))]

    assert value("hbase_migrate_ledger_up") == 1
    assert {k: value("hbase_migrate_cells_total", type=k) for k in status["cells"]} == \
        status["cells"] == {"Put": 12, "DeleteColumn": 2}
    assert {k: value("hbase_migrate_wal_files", status=k) for k in status["wal_files"]} == \
        status["wal_files"] == {"replayed": 1, "replaying": 1}
    assert value("hbase_migrate_open_gaps") == status["open_gaps"] == 0
    # lag: now less f2's last acknowledged write (f1 is drained), at each one's own now
    assert 30_000 <= status["lag"] <= value("hbase_migrate_lag_seconds") * 1000 \
        < status["lag"] + 5_000
    assert value("hbase_migrate_runs_total") == 4
    assert value("hbase_migrate_waiting", service="target gateway", endpoint="dst:9090") == 1
    assert value("hbase_migrate_limit_per_second", limit="replay_cells_per_second") == 500
    assert not [k for k in after if k[0] == "hbase_migrate_limit_per_second"]  # step over
