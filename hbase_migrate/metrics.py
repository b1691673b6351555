"""Live metrics of a ``--follow`` for Prometheus (``--metrics-port``).

Each scrape reads the stream's figures from the ledger, the same that ``status --json``
prints (:func:`hbase_migrate.audit.status.stream_figures`: lag, cells by type, WAL files by
status, open gaps, outage seconds), and adds this process's own: its runs, the outage it
waits out now, the gateway calls it retried and the throttle rates in force
(:func:`hbase_migrate.limits.current_rates`). Served with ``prometheus-client`` on
loopback unless a host is given.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from hbase_migrate.audit.ledger import Ledger, now_ms
from hbase_migrate.audit.status import stream_figures
from hbase_migrate.cluster.endpoints import RETRIES
from hbase_migrate.limits import current_rates

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

    from hbase_migrate.replay.summary import FollowSummary

LOOPBACK = "127.0.0.1"
_LABELS = ["migration", "stream"]


class FollowCollector(Collector):
    """The metrics of one follow: ``follow()`` gives its live summary (None before it
    started)."""

    def __init__(self, ledger_url: str, migration: str, stream: str,
                 follow: Callable[[], FollowSummary | None]) -> None:
        self.ledger_url, self.migration, self.stream = ledger_url, migration, stream
        self.follow = follow
        self._ledger: Ledger | None = None
        self._lock = threading.Lock()  # one scrape at a time reads the ledger

    def collect(self) -> Iterator[Metric]:
        labels = [self.migration, self.stream]
        up = GaugeMetricFamily("hbase_migrate_ledger_up",
                               "1 when the ledger answered this scrape", labels=_LABELS)
        try:
            with self._lock:
                yield from self._ledger_figures(labels)
            up.add_metric(labels, 1)
        except Exception:  # the ledger is down: the process's own figures still count
            up.add_metric(labels, 0)
        yield up
        yield from self._process_figures(labels)

    def _ledger_figures(self, labels: list[str]) -> Iterator[Metric]:
        if self._ledger is None:
            self._ledger = Ledger.open(self.ledger_url, upgrade_schema=False)
        record = self._ledger.migration(self.migration)
        if record is None:
            return
        figures = stream_figures(self._ledger, record.id, self.stream, now_ms())
        lag = GaugeMetricFamily("hbase_migrate_lag_seconds",
                                "Replay lag: now less the oldest edit not yet applied",
                                labels=_LABELS)
        if figures.lag is not None:
            lag.add_metric(labels, figures.lag / 1000)
        cells = CounterMetricFamily("hbase_migrate_cells",
                                    "Cells the target (or Kafka) acknowledged, by type",
                                    labels=[*_LABELS, "type"])
        for kind, count in sorted(figures.cells.items()):
            cells.add_metric([*labels, kind], count)
        files = GaugeMetricFamily("hbase_migrate_wal_files", "WAL files by status",
                                  labels=[*_LABELS, "status"])
        for status, count in sorted(figures.wal_files.items()):
            files.add_metric([*labels, status], count)
        gaps = GaugeMetricFamily("hbase_migrate_open_gaps", "Gaps not yet resolved",
                                 labels=_LABELS)
        gaps.add_metric(labels, figures.open_gaps)
        outages = CounterMetricFamily("hbase_migrate_outage_seconds",
                                      "Seconds spent waiting for unreachable services",
                                      labels=_LABELS)
        outages.add_metric(labels, figures.outage_seconds)
        yield from (lag, cells, files, gaps, outages)

    def _process_figures(self, labels: list[str]) -> Iterator[Metric]:
        follow = self.follow()
        runs = CounterMetricFamily("hbase_migrate_runs", "Runs of this follow",
                                   labels=_LABELS)
        runs.add_metric(labels, follow.runs if follow else 0)
        waiting = GaugeMetricFamily("hbase_migrate_waiting",
                                    "1 while this follow waits for an unreachable service",
                                    labels=[*_LABELS, "service", "endpoint"])
        current = next((o for o in (follow.outages if follow else []) if o.ended is None),
                       None)
        if current is not None:
            waiting.add_metric([*labels, current.outage.service, current.outage.endpoint], 1)
        retries = CounterMetricFamily("hbase_migrate_gateway_retries",
                                      "Gateway calls retried after a transport error",
                                      labels=[*_LABELS, "gateway"])
        for gateway, count in sorted(RETRIES.items()):
            retries.add_metric([*labels, gateway], count)
        limits = GaugeMetricFamily("hbase_migrate_limit_per_second",
                                   "The throttle in force here, by [limits] key "
                                   "(absent: unlimited)", labels=[*_LABELS, "limit"])
        for key, rate in sorted(current_rates(self.migration).get(self.migration, {}).items()):
            if rate is not None:
                limits.add_metric([*labels, key], rate)
        yield from (runs, waiting, retries, limits)

    def close(self) -> None:
        if self._ledger is not None:
            self._ledger.close()


@dataclass
class MetricsServer:
    """A running ``/metrics`` endpoint; :meth:`close` stops it."""

    collector: FollowCollector
    server: WSGIServer
    thread: threading.Thread

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/metrics"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)
        self.collector.close()


def serve_metrics(collector: FollowCollector, port: int, host: str = LOOPBACK
                  ) -> MetricsServer:
    """Serve ``collector`` at ``http://host:port/metrics`` (port 0: a free one)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    server, thread = start_http_server(port, addr=host, registry=registry)
    return MetricsServer(collector, server, thread)
