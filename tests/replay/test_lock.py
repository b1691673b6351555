"""A lock always: without ZooKeeper a lease row in the ledger keeps two replays of one
migration apart, a dead holder's lease is taken over at once; with ZooKeeper a SIGKILLed
holder's lock node is taken over at once, before its session expires."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cluster.errors import MigrationLockedError
from hbase_migrate.config import load_config
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.lock import migration_lock
from hbase_migrate.replay.run import run_replay
from minihbase.zookeeper import ZooKeeperServer
from tests.support.replay import RS1, Clusters, HBaseRoot, T, puts, source_endpoints, write_config

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]


def job_for(clusters: Clusters, table: str, folder: Path, zookeeper: str | None = None,
            timeout: float = 0.5) -> tuple[Path, ReplayJob]:
    clusters.create(table)
    root = HBaseRoot(folder / "hbase")
    root.write(RS1, T, table, puts("x", 0, 2))
    source = source_endpoints("localhost:9090", root=root.root, zookeeper=zookeeper)
    config = write_config(folder, source=source, target=clusters.dst_endpoints,
                          tables=[table], name=f"lock-{table}")
    return config, ReplayJob.from_spec(load_config(config), start=T, lock_timeout=timeout)


def test_without_zookeeper_a_ledger_lease_keeps_two_replays_apart(
        clusters: Clusters, table: str, tmp_path: Path) -> None:
    _, job = job_for(clusters, table, tmp_path)
    with migration_lock(job) as lock:
        held = lock.identifier
        with pytest.raises(MigrationLockedError) as caught:
            run_replay(job)  # refused before anything: no final-status error
        assert caught.value.holder == held
        assert "alive" in str(caught.value) and "lease expires at" in str(caught.value)
    results: list[int] = []
    slow = ReplayJob.from_spec(job.spec, start=T, lock_timeout=30)
    runs = [threading.Thread(target=lambda j=j: results.append(run_replay(j).exit_code))
            for j in (slow, slow)]
    for thread in runs:
        thread.start()
    for thread in runs:
        thread.join()
    assert results == [0, 0]  # one after the other


def test_a_lease_whose_holder_process_is_gone_is_taken_over_at_once(
        clusters: Clusters, table: str, tmp_path: Path) -> None:
    _, job = job_for(clusters, table, tmp_path, timeout=0.0)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = f"{socket.gethostname()}:{gone.stdout.strip()}/abcdef replay (catch-up)"
    with Ledger.open(job.ledger_url) as ledger:
        holder, _ = ledger.take_lease(f"migration/{job.name}", dead, 3_600_000)
        assert holder == dead
    with migration_lock(job) as lock, Ledger.open(job.ledger_url) as ledger:
        held = lock.identifier
        assert ledger.take_lease(f"migration/{job.name}", "someone else", 1)[0] == held


HOLD = """
import sys, time
from hbase_migrate.config import load_config
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.lock import migration_lock
job = ReplayJob.from_spec(load_config(sys.argv[1]), start=0)
with migration_lock(job):
    print("locked", flush=True)
    time.sleep(600)
"""


def test_a_sigkilled_holder_of_the_zookeeper_lock_is_taken_over_at_once(
        clusters: Clusters, table: str, tmp_path: Path, zookeeper: ZooKeeperServer,
        caplog: pytest.LogCaptureFixture) -> None:
    config, job = job_for(clusters, table, tmp_path, zookeeper=zookeeper.address)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(config)], cwd=REPO,
                              stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        # its session has not expired (10 s after its last heartbeat): its node is still
        # there, and a process of this host that is gone holds nothing
        with caplog.at_level(logging.INFO, "hbase_migrate.cluster.zk.zookeeper"), \
                migration_lock(job):
            pass
        assert f":{holder.pid}/" in caplog.text and "that is gone" in caplog.text
    finally:
        holder.kill()
