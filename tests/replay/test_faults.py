"""Replay under faults, against embedded clusters: the replay process killed mid-file, the
target restarted mid-replay, and the source's log cleaner deleting a file before it was
replayed. The truth is the source's own contents read through Thrift2.

(A file archived while it is being read is covered by ``test_run_catchup``.)"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import WalFileRecord, WalStatus
from hbase_migrate.cli import cli
from hbase_migrate.config import MigrationSpec, load_config
from hbase_migrate.replay.discovery import SOURCE
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.run import run_replay
from hbase_migrate.replay.summary import RunSummary
from hbase_migrate.wal.model import Cell, CellType
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from tests.support.minicluster import (
    EmbeddedClusters,
    compare,
    copy_table_schema,
    run_workload,
    set_watermark,
    t2,
    write_migration,
)
from tests.support.wait import load_stretch, wait_for

pytestmark = pytest.mark.integration

TABLE = "orders"
REPO = Path(__file__).resolve().parents[2]
ONE_BIG_FILE = WalSettings(region_servers=1, roll_period=3600)  # 64 MiB roll size


def _write_bulk(cluster: MiniHBase, calls: int, cells_per_call: int) -> None:
    """Many cells in few calls: one large WAL file, replayed in several batches."""
    with t2(cluster) as client:
        for c in range(calls):
            client.put_cells(TABLE, [
                Cell(b"bulk-%03d-%04d" % (c, i), b"d", b"a", 1_000_000 + i, CellType.PUT,
                     b"v%d" % i) for i in range(cells_per_call)])


def _big_file_source(tmp_path: Path, src: MiniHBase, dst: MiniHBase) -> tuple[Path, str]:
    """Config, watermark, a workload plus bulk writes in one WAL file, archived by a roll;
    returns the config and the archived file's name."""
    config = write_migration(tmp_path, src, dst, TABLE)
    set_watermark(config)
    run_workload(src, TABLE, seed=31, ops=200)
    _write_bulk(src, calls=60, cells_per_call=2000)  # 120 000 cells: six 20 000-cell batches
    copy_table_schema(src, dst, TABLE)
    assert src.region_servers is not None
    archived, = src.region_servers.roll()
    return config, archived


def _row(spec: MigrationSpec, name: str) -> WalFileRecord | None:
    with Ledger.open(spec.ledger_url) as ledger:
        migration = ledger.migration(spec.name)
        if migration is None:
            return None
        rows = [r for r in ledger.wal_files(migration.id, SOURCE) if r.path.endswith(name)]
    return rows[0] if rows else None


def _in_progress(spec: MigrationSpec, name: str, offsets: list[int]) -> bool:
    """True once the ledger holds an acknowledged offset inside the file (not at its end)."""
    row = _row(spec, name)
    if row is None:
        return False
    offsets.append(row.offset_reached)
    return row.status is WalStatus.REPLAYING and row.offset_reached > 0


def test_a_replay_killed_mid_file_resumes_from_its_offset_and_converges(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    src, dst = make_embedded.pair(wal=ONE_BIG_FILE)
    config, name = _big_file_source(tmp_path, src, dst)
    spec = load_config(config)
    size = (src.hbase_root_dir / "oldWALs" / name).stat().st_size
    command = [sys.executable, "-m", "hbase_migrate", "replay", "--config", str(config),
               "--json"]
    offsets: list[int] = []
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        wait_for(lambda: _in_progress(spec, name, offsets) or proc.poll() is not None,
                 30, f"the replay to record progress inside {name}", every=0.005)
        assert proc.poll() is None, (
            "the replay ended before it could be killed mid-file: "
            f"{proc.communicate()[0].decode()[-500:]}")
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    killed = _row(spec, name)
    assert killed is not None and killed.status is WalStatus.REPLAYING
    assert 0 < killed.offset_reached < size
    assert offsets == sorted(offsets), f"the offset moved backwards: {offsets}"
    assert not compare(src, dst, TABLE).equal  # the kill left the target behind

    rerun = subprocess.run(command, check=False, cwd=REPO, capture_output=True,
                           timeout=60)
    assert rerun.returncode == 0, rerun.stderr.decode()[-2000:]
    summary = json.loads(rerun.stdout)
    outcome, = (f for f in summary["files"] if f["path"].endswith(name))
    assert outcome["start_offset"] == killed.offset_reached  # resumed, not restarted
    assert outcome["complete"]
    done = _row(spec, name)
    assert done is not None and done.status is WalStatus.REPLAYED
    assert done.offset_reached >= killed.offset_reached
    result = compare(src, dst, TABLE)
    assert result.equal, result.to_json()


def test_the_target_restarted_mid_replay_is_ridden_out_or_fails_loudly_then_converges(
        tmp_path: Path, make_embedded: EmbeddedClusters,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="hbase_migrate.cluster.retry")
    src, dst = make_embedded.pair(wal=ONE_BIG_FILE)  # over Thrift2: its gateway restarts
    assert dst.thrift1 is not None and dst.thrift2 is not None
    ports = dst.thrift1.port, dst.thrift2.port
    config, name = _big_file_source(tmp_path, src, dst)
    spec = load_config(config)
    job = ReplayJob.from_spec(spec)
    results: list[RunSummary | BaseException] = []

    def replay() -> None:
        try:
            results.append(run_replay(job))
        except BaseException as exc:  # reported by the assertions below
            results.append(exc)

    runner = threading.Thread(target=replay, name="replay", daemon=True)
    runner.start()
    wait_for(lambda: _in_progress(spec, name, []) or not runner.is_alive(), 30,
             f"the replay to record progress inside {name}", every=0.005)
    assert runner.is_alive(), f"the replay ended before the restart: {results}"
    dst.stop()
    time.sleep(0.5)  # the gateway is away for a moment
    dst = make_embedded("target", folder=dst.data_dir, thrift_port=ports[0],
                        thrift2_port=ports[1])
    runner.join(60 * load_stretch())  # a bound a busy machine stretches
    assert not runner.is_alive(), "the replay did not end within 60s of the restart"
    first, = results
    assert isinstance(first, RunSummary), f"the run raised: {first!r}"
    if first.exit_code == 0:
        ridden_out = True  # the client's retries carried the run through
        assert not first.failures
        retried = [r.getMessage() for r in caplog.records
                       if r.name == "hbase_migrate.cluster.retry"]
        assert retried, "the run passed without ever meeting the stopped target"
    else:
        ridden_out = False
        assert first.exit_code == 1, first.to_json()
        failure, = first.failures
        assert failure.path.endswith(name) and failure.error
        assert name in failure.error, failure.error
        row = _row(spec, name)
        assert row is not None and row.status is WalStatus.FAILED
        rerun = run_replay(job)
        assert rerun.exit_code == 0, rerun.to_json()
    print(f"target restart: {'ridden out by retries' if ridden_out else 'rerun'}")
    result = compare(src, dst, TABLE)
    assert result.equal, result.to_json()
    done = _row(spec, name)
    assert done is not None and done.status is WalStatus.REPLAYED


def test_a_file_the_cleaner_deletes_before_it_was_replayed_is_a_gap(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    settings = WalSettings(region_servers=2, roll_period=3600, archive_ttl=2.0,
                           cleaner_interval=0.2)
    src, dst = make_embedded.pair(wal=settings)
    config = write_migration(tmp_path, src, dst, TABLE)
    assert src.region_servers is not None
    # the cleaner waits until the first run has listed and failed every file, however
    # slow the machine; then it deletes the archived ones
    src.region_servers.cleaner_switch(False)
    run_workload(src, TABLE, seed=41, ops=100)
    archived = src.region_servers.roll()
    # T0 after the roll: the archived files hold edits inside the margin before it, and
    # the chains from T0 are whole (only the vanished files are gaps)
    spec = set_watermark(config)
    old_wals = src.hbase_root_dir / "oldWALs"
    # The target lacks the table (the schema was not copied yet): every file is seen and
    # fails, the archived ones included.
    first = run_replay(ReplayJob.from_spec(spec))
    assert first.exit_code == 1, first.to_json()
    failed = {Path(o.path).name for o in first.failures}
    assert set(archived) <= failed, first.to_json()["failures"]
    for name in archived:
        row = _row(spec, name)
        assert row is not None and row.status is WalStatus.FAILED

    src.region_servers.cleaner_switch(True)
    wait_for(lambda: not any((old_wals / n).exists() for n in archived), 15,
             f"the log cleaner to delete {archived}")
    copy_table_schema(src, dst, TABLE)
    runner = CliRunner()
    second = runner.invoke(cli, ["replay", "--config", str(config)],
                           catch_exceptions=False)
    assert second.exit_code == 3, second.output
    servers = {s["name"] for s in src.region_servers.info()["servers"]}
    for name in archived:
        line, = (ln for ln in second.output.splitlines() if name in ln and "gap" in ln)
        assert "remedy: re-copy the affected key ranges" in line, line
        assert any(f"of server {server} " in line for server in servers), line

    status = runner.invoke(cli, ["status", "--config", str(config), "--json"],
                           catch_exceptions=False)
    assert status.exit_code == 3, status.output
    report = json.loads(status.output)
    migration, = report["migrations"]
    gaps = {Path(g["path"]).name: g for g in migration["gaps"]}
    assert set(gaps) == set(archived), gaps
    assert all(g["server"] in servers and g["remedy"] for g in gaps.values()), gaps
    assert report["has_gaps"] is True
    assert not compare(src, dst, TABLE).equal  # the lost edits really are missing
