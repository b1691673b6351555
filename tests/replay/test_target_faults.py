"""The replay target's gateway away, against embedded clusters over their real protocols:
restarted on new ports in the middle of a replay (the run re-reads ``cluster.json`` and
converges); with ``outage_tolerance = "0s"`` (no waiting for outages: ``test_outages`` has
the waiting), down before the run starts (exit 2 at once, one line naming the gateway,
nothing replayed), and gone for good in the middle of a run (one retry budget, then the run
stops with every acknowledged offset kept). The truth is the source's own contents read through
Thrift2 and compared with :func:`hbase_migrate.validate.compare.compare_tables`.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepStatus, WalFileRecord, WalStatus
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.config import ClusterSpec, MigrationSpec, load_config
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.replay.discovery import SOURCE
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.mutations import WalPosition, to_mutations
from hbase_migrate.replay.run import run_replay
from hbase_migrate.replay.summary import RunSummary
from hbase_migrate.replay.targets import open_target
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from tests.support.minicluster import (
    EmbeddedClusters,
    cell_count,
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
FILES = 6
ONE_SERVER = WalSettings(region_servers=1, roll_period=3600)  # files end only by a roll
# What one write waits out on an unreachable gateway with the default client settings
# (5 retries, backoff 0.2 s doubling): 0.2 + 0.4 + 0.8 + 1.6 + 3.2 s.
_client = Thrift2Client("localhost:1")
RETRY_BUDGET = sum(min(_client.backoff * 2 ** i, 10.0) for i in range(_client.retries))


def _files_source(tmp_path: Path, src: MiniHBase, dst: MiniHBase, *, files: int = FILES,
                  cells_per_file: int = 6000, outage_tolerance: str | None = None
                  ) -> tuple[Path, list[str]]:
    """Config, watermark, a workload, then ``files`` WAL files of bulk puts, each ended by
    a roll; the target has the schema. Returns the config and the archived file names."""
    config = write_migration(tmp_path, src, dst, TABLE, outage_tolerance=outage_tolerance)
    set_watermark(config)
    run_workload(src, TABLE, seed=53, ops=150)
    copy_table_schema(src, dst, TABLE)
    assert src.region_servers is not None
    names: list[str] = []
    with t2(src) as client:
        for f in range(files):
            for c in range(cells_per_file // 500):
                client.put_cells(TABLE, [
                    Cell(b"f%02d-%03d-%04d" % (f, c, i), b"d", b"a", 1_000_000 + i,
                         CellType.PUT, b"v%d" % i) for i in range(500)])
            names += src.region_servers.roll()
    return config, names


def _rows(spec: MigrationSpec) -> list[WalFileRecord]:
    with Ledger.open(spec.ledger_url) as ledger:
        migration = ledger.migration(spec.name)
        return [] if migration is None else ledger.wal_files(migration.id, SOURCE)


def _in_progress(spec: MigrationSpec) -> bool:
    """True once the ledger holds an acknowledged offset inside some file."""
    return any(r.status is WalStatus.REPLAYING and r.offset_reached > 0 for r in _rows(spec))


def _last_step_error(spec: MigrationSpec) -> tuple[StepStatus, str | None]:
    with Ledger.open(spec.ledger_url) as ledger:
        migration = ledger.migration(spec.name)
        assert migration is not None
        step = ledger.steps(migration.id, "replay")[-1]
    return step.status, step.error


def _start_replay(job: ReplayJob) -> tuple[threading.Thread, list[RunSummary | BaseException]]:
    results: list[RunSummary | BaseException] = []

    def replay() -> None:
        try:
            results.append(run_replay(job))
        except BaseException as exc:  # reported by the assertions of the test
            results.append(exc)

    runner = threading.Thread(target=replay, name="replay", daemon=True)
    runner.start()
    return runner, results


def test_a_target_restarted_on_new_ports_mid_replay_is_found_again_and_converges(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    src, dst = make_embedded.pair(wal=ONE_SERVER)  # over Thrift2: the gateways' ports move
    config, names = _files_source(tmp_path, src, dst)
    old = dst.endpoints
    spec = load_config(config)
    job = ReplayJob.from_spec(spec, batch_cells=1000)
    began = time.monotonic()
    runner, results = _start_replay(job)
    wait_for(lambda: _in_progress(spec) or not runner.is_alive(), 60,
             "the replay to record progress inside a file", every=0.005)
    assert runner.is_alive(), f"the replay ended before the restart: {results}"
    restarted = time.monotonic()
    dst.stop()
    time.sleep(0.5)  # the gateway is away for a moment...
    dst.start()  # ...and back on new ports
    dst.write_cluster_json()  # as `minicluster start` does
    assert {dst.endpoints.thrift, dst.endpoints.thrift2}.isdisjoint(
        {old.thrift, old.thrift2}), "the restart reused a port"
    runner.join(120)
    assert not runner.is_alive(), "the replay did not end within 120s of the restart"
    ended = time.monotonic()
    print(f"\nrestart on new ports: run {ended - began:.1f}s, "
          f"{ended - restarted:.1f}s after the restart ({len(names)} files, "
          f"retry budget of one write {RETRY_BUDGET:.1f}s)")
    first, = results
    assert isinstance(first, RunSummary), f"the run raised: {first!r}"
    assert first.exit_code == 0, first.to_json()["failures"]
    assert not first.failures
    rows = {Path(r.path).name: r for r in _rows(spec)}
    for name in names:
        assert rows[name].status is WalStatus.REPLAYED, (name, rows[name])
    result = compare(src, dst, TABLE)
    assert result.equal, result.to_json()
    assert result.source_cells >= FILES * 6000


def test_with_no_outage_tolerance_a_target_down_before_the_run_fails_at_once(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    src, dst = make_embedded.pair(wal=ONE_SERVER)  # over Thrift2: the gateway is named
    config, names = _files_source(tmp_path, src, dst, files=4, cells_per_file=1000,
                                  outage_tolerance="0s")
    gateway = dst.endpoints.thrift2
    assert gateway is not None
    dst.stop()
    spec = load_config(config)
    command = [sys.executable, "-m", "hbase_migrate", "replay", "--config", str(config)]
    began = time.monotonic()
    proc = subprocess.run(command, check=False, cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    elapsed = time.monotonic() - began
    print(f"\ntarget down from the start: exit {proc.returncode} after {elapsed:.1f}s "
          f"({len(names)} files, retry budget of one write {RETRY_BUDGET:.1f}s)")
    assert proc.returncode == 2, (proc.stdout[-2000:], proc.stderr[-2000:])
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    line, = lines
    print(line)
    assert line.startswith("hbase-migrate: error: "), line
    assert gateway in line and "thrift2" in line.lower(), line
    assert "Traceback" not in proc.stderr
    # Fast: well within what a single write would wait out before giving up (a bound a
    # busy machine stretches: its process start alone can take seconds)
    assert elapsed < RETRY_BUDGET * load_stretch(), f"took {elapsed:.1f}s"
    # Nothing replayed, no file marked failed or started.
    rows = _rows(spec)
    assert rows, "the run did not even list the source's files"
    assert all(r.offset_reached == 0 for r in rows), rows
    assert not [r for r in rows if r.status in (WalStatus.FAILED, WalStatus.REPLAYING,
                                                WalStatus.REPLAYED)], rows
    status, error = _last_step_error(spec)
    assert status is StepStatus.FAILED and error is not None and gateway in error
    dst.start()
    assert cell_count(dst, TABLE) == 0


def test_with_no_outage_tolerance_a_target_gone_mid_replay_stops_the_run(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    src, dst = make_embedded.pair(wal=ONE_SERVER)  # over Thrift2: the gateway is named
    config, names = _files_source(tmp_path, src, dst, files=4, outage_tolerance="0s")
    gateway = dst.endpoints.thrift2
    assert gateway is not None
    spec = load_config(config)
    runner, results = _start_replay(ReplayJob.from_spec(spec, batch_cells=1000))
    wait_for(lambda: _in_progress(spec) or not runner.is_alive(), 60,
             "the replay to record progress inside a file", every=0.005)
    assert runner.is_alive(), f"the replay ended before the target stopped: {results}"
    acked = {r.path: r.offset_reached for r in _rows(spec)}
    stopped = time.monotonic()
    dst.stop()
    runner.join(300)
    assert not runner.is_alive()
    elapsed = time.monotonic() - stopped
    print(f"\ntarget gone mid-replay: the run ended {elapsed:.1f}s after the target "
          f"stopped ({len(names)} files, retry budget of one write {RETRY_BUDGET:.1f}s)")
    outcome, = results
    assert isinstance(outcome, HBaseMigrateError), f"the run did not stop: {outcome!r}"
    assert gateway in str(outcome) and "\n" not in str(outcome), str(outcome)
    # One retry budget (and a little), not one per remaining file.
    assert elapsed < 2 * RETRY_BUDGET, f"took {elapsed:.1f}s"
    rows = _rows(spec)
    for row in rows:  # every acknowledged offset kept, nothing marked failed
        assert row.offset_reached >= acked.get(row.path, 0), row
        assert row.status is not WalStatus.FAILED, row
    assert any(r.status is WalStatus.REPLAYING and r.offset_reached > 0 for r in rows)
    status, error = _last_step_error(spec)
    assert status is StepStatus.FAILED and error is not None and gateway in error


@pytest.mark.parametrize("gateway", ["thrift2", "thrift"])
def test_an_open_target_follows_its_cluster_json_to_new_ports(
        make_embedded: EmbeddedClusters, gateway: str) -> None:
    """Each gateway's client, through the target a replay uses: writes after a restart on
    new ports reach the restarted cluster."""
    cluster = make_embedded("target")
    spec = ClusterSpec("target", cluster_json=cluster.write_cluster_json())
    with t2(cluster) as client:
        client.create_table(TableDescriptor(TABLE, (FamilyDescriptor(b"d"),)))
    target = open_target(spec, force_thrift1=gateway == "thrift")
    try:
        def put(row: bytes, offset: int) -> None:
            cells = [Cell(row, b"d", b"q", 1_000 + offset, CellType.PUT, row)]
            target.apply(TABLE, to_mutations(cells, WalPosition("w", offset, offset)))

        put(b"before", 1)
        old = cluster.endpoints
        cluster.stop()
        cluster.start()
        cluster.write_cluster_json()
        assert getattr(cluster.endpoints, gateway) != getattr(old, gateway)
        put(b"after", 2)
        assert target.name == getattr(cluster.endpoints, gateway)
    finally:
        target.close()
    with t2(cluster) as client:
        assert sorted((c.row, c.timestamp) for row in client.scan(TABLE) for c in row) \
            == [(b"after", 1_002), (b"before", 1_001)]
