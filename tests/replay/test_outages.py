"""``replay --follow`` outlasts outages, as a user runs it: the command in a child process,
embedded clusters in this one, a writer on the source the whole time.

The target's Thrift2 gateway is closed for 5 s and then for 12 s (four probes, backoff
doubling from 1 s; its cap, 30 s, is test_outage_backoff's, read there without waiting it
out), the source's WebHDFS for 5 s: the follow says whom it waits for, resumes by itself,
and the target ends equal to the source (read through Thrift2 on both sides) with no gap
and no restart; while it waits,
its Prometheus endpoint and ``status --json`` say for whom, and once drained both report
the same figures; SIGTERM then prints the summary of the whole follow with each outage and
its length. With a short
``outage_tolerance``, the follow gives up on a longer outage with exit 2 and one line saying
why, its summary printed too.
"""

from __future__ import annotations

import json
import logging
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepStatus
from hbase_migrate.cluster.errors import MigrationLockedError
from hbase_migrate.config import load_config
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.lock import migration_lock
from hbase_migrate.replay.run import follow_replay
from hbase_migrate.replay.summary import RunSummary
from hbase_migrate.wal.model import Cell, CellType
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from minihbase.zookeeper import ZooKeeperServer
from stackprocs.process import free_port
from tests.support.minicluster import (
    EmbeddedClusters,
    compare,
    copy_table_schema,
    run_workload,
    set_watermark,
    t2,
    write_migration,
)
from tests.support.replay_child import REPO, Lines, follow
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration

TABLE = "orders"
SETTINGS = WalSettings(region_servers=2, roll_period=3600)


class Writer:
    """Puts rows into the source until stopped; counts what the source acknowledged."""

    def __init__(self, source: MiniHBase) -> None:
        self.source, self.written = source, 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="writer", daemon=True)

    def _run(self) -> None:
        with t2(self.source) as client:
            while not self.stop.wait(0.05):
                client.put_cells(TABLE, [Cell(b"row-%06d" % (self.written + i), b"d", b"q",
                                              1_000_000 + self.written + i, CellType.PUT,
                                              b"v%d" % i) for i in range(20)])
                self.written += 20

    def __enter__(self) -> Writer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The samples the metrics endpoint serves: (name, labels but migration and stream)."""
    with urllib.request.urlopen(url, timeout=10) as answer:
        text = answer.read().decode()
    return {(sample.name, tuple(sorted((k, v) for k, v in sample.labels.items()
                                      if k not in ("migration", "stream")))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def status_json(config: Path) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "hbase_migrate", "status", "--config",
                           str(config), "--json"], cwd=REPO, capture_output=True, text=True,
                          check=True, timeout=60)
    report = json.loads(done.stdout)
    return dict(report["migrations"][0]["streams"]["source"])


def outage(cluster: MiniHBase, service: str, seconds: float, out: Lines, err: Lines,
           waiting: str, during: Callable[[], None] = lambda: None) -> None:
    """Close ``service`` for ``seconds`` (calling ``during`` once the follow waits); the
    follow must have said it waits for it, and must end a run once it is back (an outage
    lasts until a run ends)."""
    before = err.count(waiting)
    cluster.stop_service(service)
    wait_for(lambda: err.count(waiting) > before, max(seconds, 30), f"a {waiting!r} line")
    noticed = time.monotonic()  # closed this long after the follow said it waits, however
    during()                    # long a busy machine took it to notice
    time.sleep(max(0.0, seconds - (time.monotonic() - noticed)))
    runs = out.count(r"^result: ok")
    cluster.start_service(service)
    assert err.count(waiting) > before, f"no {waiting!r} line:\n{err.text[-3000:]}"
    wait_for(lambda: out.count(r"^result: ok") > runs, 60, f"a run after {service} came back")


# seconds of the long outage: the probes 1, 3 and 7 s after it began fail, the one at 15 s
# finds the gateway back (no probe ends at the next doubling, 31 s, but on a busy machine)
LONG = 12


def started(config: Path, src: MiniHBase, dst: MiniHBase) -> None:
    copy_table_schema(src, dst, TABLE)
    set_watermark(config)


def test_follow_rides_out_gateway_and_webhdfs_outages_and_converges(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    src, dst = make_embedded.pair(wal=SETTINGS)  # over Thrift2: its gateway is the outage
    config = write_migration(tmp_path, src, dst, TABLE)
    run_workload(src, TABLE, seed=71, ops=20)  # the table exists with its families
    started(config, src, dst)
    proc, out, err = follow(config, "--metrics-port", "0")
    gateway = dst.endpoints.thrift2

    def waiting_everywhere() -> None:  # metrics and status say whom the follow waits for
        key = ("hbase_migrate_waiting", (("endpoint", gateway),
                                         ("service", "target gateway")))
        wait_for(lambda: scrape(url).get(key) == 1, 30, "the waiting metric")
        waiting = status_json(config)["waiting"]
        assert (waiting["service"], waiting["endpoint"]) == ("target gateway", gateway)

    try:
        wait_for(lambda: err.count(r"^metrics at http://127\.0\.0\.1:\d+/metrics$"), 30,
                 "the metrics address")
        url = next(ln for ln in err.lines if ln.startswith("metrics at ")).split()[-1]
        with Writer(src) as writer:
            wait_for(lambda: out.count(r"^result: ok") >= 2, 60, "two follow runs")
            outage(dst, "thrift2", 5, out, err, r"waiting for the target gateway")
            outage(src, "webhdfs", 5, out, err, r"waiting for the source WebHDFS")
            outage(dst, "thrift2", LONG, out, err, r"waiting for the target gateway",
                   during=waiting_everywhere)
        written = writer.written
        wait_for(lambda: compare(src, dst, TABLE).equal, 90, "the target to converge")
        assert proc.poll() is None, f"the follow ended:\n{err.text[-3000:]}"
        # drained: the metrics and status --json agree, and count what the source took
        def drained() -> dict[str, Any] | None:  # status --json's figures once at lag 0
            figures = status_json(config)
            return figures if figures["lag"] == 0 else None

        figures = wait_for(drained, 30, "lag 0")  # the figures of that same status call
        metrics = scrape(url)
        assert figures["waiting"] is None
        assert metrics[("hbase_migrate_lag_seconds", ())] == 0
        assert {k[1][0][1]: v for k, v in metrics.items()
                if k[0] == "hbase_migrate_cells_total"} == figures["cells"]
        assert figures["cells"]["Put"] >= writer.written
        assert {k[1][0][1]: v for k, v in metrics.items()
                if k[0] == "hbase_migrate_wal_files"} == figures["wal_files"]
        assert metrics[("hbase_migrate_open_gaps", ())] == figures["open_gaps"] == 0
        assert metrics[("hbase_migrate_outage_seconds_total", ())] >= 5 + 5 + LONG
        assert metrics[("hbase_migrate_runs_total", ())] >= 4
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(60)
    out.thread.join(10)
    print(f"\n{written} cells written during the outages; follow summary:\n"
          + "\n".join(out.lines[-8:]))
    assert code == 0, err.text[-3000:]
    summary = out.text[out.text.rindex("follow of migration"):]
    assert "outages ridden out: 3" in summary, summary
    lengths = [seconds(text) for text in re.findall(r" for ([^(]+) \(\d+ probes\)",
                                                    summary)]
    assert len(lengths) == 3, summary
    # each as long as the service was closed, and at most one capped backoff (30 s) more
    assert 5 <= lengths[0] < 5 + 30 and 5 <= lengths[1] < 5 + 30, lengths
    assert LONG <= lengths[2] < LONG + 31, lengths
    assert summary.rstrip().endswith("result: ok"), summary
    spec = load_config(config)
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None
        assert ledger.gaps(record.id) == []
        steps = ledger.steps(record.id, "outage")
    assert [s.status for s in steps] == [StepStatus.SUCCEEDED] * 3, steps
    assert [s.metrics["service"] for s in steps] == [
        "target gateway", "source WebHDFS", "target gateway"]


def test_an_outage_past_the_tolerance_ends_the_follow_with_its_reason(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    src, dst = make_embedded.pair(wal=SETTINGS)  # over Thrift2: its gateway is the outage
    config = write_migration(tmp_path, src, dst, TABLE, outage_tolerance="3s")
    run_workload(src, TABLE, seed=72, ops=20)
    started(config, src, dst)
    proc, out, err = follow(config)
    try:
        wait_for(lambda: out.count(r"^result: ok") >= 1, 60, "a follow run")
        gateway = dst.endpoints.thrift2
        dst.stop_service("thrift2")
        run_workload(src, TABLE, seed=73, ops=20)  # edits that wait for the target
        code = proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    out.thread.join(10)
    err.thread.join(10)
    assert code == 2, err.text[-3000:]
    errors = [ln for ln in err.lines if ln.startswith("hbase-migrate: error: ")]
    assert len(errors) == 1, err.text[-3000:]
    assert f"the target gateway {gateway} has not answered for " in errors[0], errors
    assert "longer than [replay] outage_tolerance 3s" in errors[0], errors
    summary = out.text[out.text.rindex("follow of migration"):]
    assert "outages ridden out: 1" in summary and "result: error" in summary, summary


SESSION_PAST = 12  # seconds: past the session timeout (10 s) of the lock's ZooKeeper client


def test_follow_goes_on_through_a_zookeeper_outage_and_keeps_its_lock(
        tmp_path: Path, make_embedded: EmbeddedClusters,
        caplog: pytest.LogCaptureFixture) -> None:
    """The source's quorum (its replication state, and the migration's lock) down past the
    lock's session timeout: replay needs no ZooKeeper to read WALs, so the follow goes on
    (the retention is then unknown, and said so), and once the quorum is back the lock is
    its own: kept by its session, or taken again before the next run when the session
    expired meanwhile. No other run can hold it."""
    caplog.set_level(logging.WARNING, logger="hbase_migrate.replay.retention")

    def unknown() -> int:  # the runs' warnings that the replication state is unknown
        return sum("unknown (retention assumed unpinned)" in r.getMessage()
                   for r in caplog.records)
    with ZooKeeperServer(tmp_path / "zk", free_port("127.0.0.1")) as zk, \
            make_embedded:  # the clusters stop before their ZooKeeper
        src = make_embedded("source", folder=tmp_path / "src", wal=SETTINGS,
                            zookeeper=zk.address)
        dst = make_embedded("target", folder=tmp_path / "dst")
        config = write_migration(tmp_path, src, dst, TABLE)
        run_workload(src, TABLE, seed=74, ops=20)
        started(config, src, dst)
        job = ReplayJob.from_spec(load_config(config), lock_timeout=5)
        stop, ended = threading.Event(), []
        runs: list[int] = []
        unknown_by_run: list[int] = []  # the warnings said as each run ended

        def on_run(summary: RunSummary) -> None:
            unknown_by_run.append(unknown())
            runs.append(summary.exit_code)

        follower = threading.Thread(target=lambda: ended.append(follow_replay(
            job, 0.3, stop, on_run=on_run)), daemon=True)
        follower.start()
        try:
            wait_for(lambda: len(runs) >= 2, 60, "two follow runs")
            assert unknown() == 0, caplog.text
            zk.stop()
            down = time.monotonic()
            try:
                run_workload(src, TABLE, seed=75, ops=40)  # edits while the quorum is away
                # a run that found the replication state unknown, and ended all the same
                wait_for(lambda: unknown_by_run and unknown_by_run[-1] > 0, 90,
                         "a run without ZooKeeper")
                # the quorum away past the lock session's timeout (10 s): it expires
                time.sleep(max(0.0, SESSION_PAST - (time.monotonic() - down)))
            finally:
                zk.start()
            after = len(runs)
            wait_for(lambda: len(runs) >= after + 2, 60, "runs after the quorum came back")
            wait_for(lambda: compare(src, dst, TABLE).equal, 60, "the target to converge")
            other = ReplayJob.from_spec(load_config(config), lock_timeout=1)

            def held_again() -> bool:  # at the follow's first run after its client is back
                try:
                    with migration_lock(other):
                        return False
                except MigrationLockedError:
                    return True

            wait_for(held_again, 60, "the follow to hold its lock again")
        finally:
            stop.set()
            follower.join(60)
        done, = ended
        assert done.exit_code == 0 and set(runs) == {0}, runs


def test_a_one_shot_replay_waits_for_its_target_too(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    """What an Airflow task's catch-up does: the run waits for the target and then replays;
    its summary says how long it waited and for whom."""
    src, dst = make_embedded.pair(wal=SETTINGS)  # over Thrift2: its gateway is the outage
    config = write_migration(tmp_path, src, dst, TABLE)
    run_workload(src, TABLE, seed=76, ops=20)
    started(config, src, dst)
    run_workload(src, TABLE, seed=77, ops=40)
    gateway = dst.endpoints.thrift2
    dst.stop_service("thrift2")
    # the gateway comes back 2 s after the run says it waits for it, however long the
    # run took to get there on a busy machine
    with subprocess.Popen([sys.executable, "-m", "hbase_migrate", "replay", "--config",
                           str(config)], cwd=REPO, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as run:
        assert run.stdout is not None and run.stderr is not None
        out: list[str] = []
        reader = threading.Thread(target=lambda: out.extend(run.stdout), daemon=True)
        reader.start()
        err = []
        for line in run.stderr:
            err.append(line)
            if "waiting for the target gateway" in line:
                break
        time.sleep(2)
        dst.start_service("thrift2")
        err.extend(run.stderr)
        assert run.wait(120) == 0, "".join(err)[-3000:]
        reader.join(10)
    waited = re.search(rf"^waited (\d+\.\d) s for the target gateway {gateway}: ",
                       "".join(out), re.MULTILINE)
    assert waited and 2 <= float(waited.group(1)) < 120, "".join(out)
    assert compare(src, dst, TABLE).equal


UNITS = {"ms": 0.001, "s": 1, "min": 60, "h": 3600, "d": 86400}


def seconds(human: str) -> float:
    """A duration as ``timeutil.human_duration`` prints it (``7.0 s``, ``1 min 1 s``)."""
    parts = human.split()
    return sum(float(n) * UNITS[u] for n, u in zip(parts[::2], parts[1::2], strict=True))
