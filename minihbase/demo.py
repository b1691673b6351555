"""The main job on the embedded stack, end to end.

1. Start a real ZooKeeper and two miniclusters: the source with region servers writing real
   (dictionary-compressed) WAL files that roll every few seconds, and an empty target.
2. Write a first seeded workload to the source; write the migration config and its ledger.
3. Fix the watermark T0, start the workload again in the background (the source stays live),
   copy the schema (families, split points) and every version of every cell to the target.
4. Replay the source's WAL edits since T0 - margin in ``--follow`` mode while the workload
   writes; then roll the source's WALs, stop following and run a final catch-up.
5. Compare source and target cell for cell: that decides the result.

Everything started is stopped at the end, also on Ctrl-C.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.thrift2 import Thrift2Client
from hbase_migrate.config import MigrationSpec, load_config
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.run import RunSummary, follow_replay, run_replay
from hbase_migrate.replay.watermark import fix_watermark
from hbase_migrate.snapshot.copy import copy_table
from hbase_migrate.snapshot.schema import copy_schema
from hbase_migrate.validate.compare import Comparison, compare_tables
from minihbase.cli.minicluster import call_admin
from minihbase.stack import EmbeddedStack
from minihbase.workload import Workload, WorkloadSpec

SOURCE_ARGS = ["--region-servers", "2", "--roll-period", "3s", "--wal-compression", "dict+tags"]


@dataclass(frozen=True)
class DemoSpec:
    root: Path
    table: str = "orders"
    ops: int = 3000
    seed: int = 7
    live_seconds: float = 8.0  # how long the workload writes while the migration runs


@dataclass
class DemoResult:
    steps: list[dict[str, Any]] = field(default_factory=list)
    replay: RunSummary | None = None
    comparison: Comparison | None = None

    @property
    def ok(self) -> bool:
        replay_ok = self.replay is not None and self.replay.exit_code == 0
        return replay_ok and self.comparison is not None and self.comparison.equal


Report = Callable[[str, dict[str, Any]], None]


@contextmanager
def _step(result: DemoResult, name: str, report: Report) -> Iterator[dict[str, Any]]:
    facts: dict[str, Any] = {}
    started = time.monotonic()
    yield facts
    facts["seconds"] = round(time.monotonic() - started, 2)
    result.steps.append({"step": name, **facts})
    report(name, facts)


def write_config(root: Path, table: str) -> Path:
    """The migration config the demo runs under, as a user would write it."""
    path = root / "migration.toml"
    path.write_text(
        '[migration]\nname = "demo"\nledger = "sqlite:///ledger.db"\n'
        '[source]\ncluster_json = "source/cluster.json"\n'
        '[target]\ncluster_json = "target/cluster.json"\n'
        f'[[tables]]\nsource = "{table}"\n'
        '[replay]\nroll_period = "3s"\nmargin = "1m"\n', encoding="utf-8")
    return path


def _workload(endpoints: ClusterEndpoints, spec: WorkloadSpec) -> dict[str, Any]:
    runner = Workload(endpoints, spec)
    try:
        runner.ensure_table()
        return runner.run().to_json()
    finally:
        runner.close()


def run_demo(spec: DemoSpec, report: Report) -> DemoResult:
    """Run the flow; ``report(step, facts)`` is called as each step ends."""
    if spec.root.exists():
        shutil.rmtree(spec.root)
    spec.root.mkdir(parents=True)
    result = DemoResult()
    with EmbeddedStack(spec.root) as stack:
        with _step(result, "start ZooKeeper", report) as facts:
            facts["zookeeper"] = stack.start_zookeeper()
        with _step(result, "start source and target miniclusters", report) as facts:
            source = stack.start_cluster("source", SOURCE_ARGS)
            target = stack.start_cluster("target")
            facts.update(source=source.thrift2, target=target.thrift2, webhdfs=source.webhdfs)
        with _step(result, "first workload on the source", report) as facts:
            facts.update(_workload(source, WorkloadSpec(spec.table, spec.seed, spec.ops // 2)))
        migration = load_config(write_config(spec.root, spec.table))
        _migrate(spec, migration, source, target, result, report)
    return result


def _migrate(spec: DemoSpec, migration: MigrationSpec, source: ClusterEndpoints,
             target: ClusterEndpoints, result: DemoResult, report: Report) -> None:
    assert source.thrift2 and target.thrift2
    live_spec = WorkloadSpec(spec.table, spec.seed + 1, ops=None, duration=spec.live_seconds,
                             rate=max(1.0, spec.ops / 2 / spec.live_seconds))
    live: dict[str, Any] = {}
    failed: list[BaseException] = []

    def write() -> None:
        try:
            live.update(_workload(source, live_spec))
        except BaseException as exc:  # re-raised in the main thread after the join
            failed.append(exc)

    writer = threading.Thread(target=write, name="live-workload", daemon=True)
    with Thrift2Client(source.thrift2) as src, Thrift2Client(target.thrift2) as dst, \
            Ledger.open(migration.ledger_url) as ledger:
        record = ledger.ensure_spec(migration)
        with _step(result, "watermark T0, live workload, snapshot copy", report) as facts:
            watermark = fix_watermark(migration, state="copying")
            writer.start()
            with ledger.step(record.id, "snapshot") as metrics:
                copy_schema(src, dst, spec.table)
                stats = copy_table(src, dst, spec.table, spec.table)
                metrics.update(rows=stats.rows, cells=stats.cells)
            facts.update(watermark=watermark, rows=stats.rows, cells=stats.cells,
                         regions=len(dst.regions(spec.table)))
        job = ReplayJob.from_spec(migration)
        with _step(result, "replay WALs in --follow mode while the workload writes",
                   report) as facts:
            stop = threading.Event()
            runs: list[RunSummary] = []

            def follow() -> None:
                try:
                    follow_replay(job, 1.0, stop, on_run=runs.append)
                except BaseException as exc:  # re-raised below, in this thread
                    failed.append(exc)

            follower = threading.Thread(target=follow, name="follow", daemon=True)
            follower.start()
            writer.join()
            call_admin(Path(migration.source.cluster_json or ""), "roll")
            stop.set()
            follower.join()
            if failed:
                raise failed[0]
            facts.update(live_workload_ops=live.get("total_ops", 0), follow_runs=len(runs),
                         cells_replayed=sum(sum(r.cells().values()) for r in runs))
        with _step(result, "final catch-up replay", report) as facts:
            result.replay = run_replay(job)
            summary = result.replay.to_json()
            facts.update({k: summary[k] for k in ("files_listed", "files_read", "entries")},
                         cells_replayed=sum(result.replay.cells().values()),
                         exit_code=result.replay.exit_code)
        with _step(result, "compare source and target cell for cell", report) as facts:
            result.comparison = compare_tables(src, dst, spec.table)
            facts.update(result.comparison.to_json())
        ledger.update_migration(record.id, state="validated" if result.ok else "diverged")
