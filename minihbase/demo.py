"""The main job on the embedded stack, end to end.

1. Start a real ZooKeeper and two miniclusters: the source with region servers writing real
   (dictionary-compressed) WAL files that roll every few seconds, and an empty target.
2. Write a first seeded workload to the source and the migration config.
3. Run the lifecycle steps (:mod:`hbase_migrate.lifecycle`) as a user would: prepare the
   target schema; start the workload again in the background (the source stays live) and
   take the snapshot at a watermark T0; replay the WAL edits since T0 in ``--follow`` mode
   while the workload writes, roll, stop following, run a final catch-up; replay a past
   window again (a backfill of the first seconds after T0); validate.
4. The cutover gate gives its verdict, and the audit report is written from the ledger.
5. The validation's verdict, the replay's exit code and the gate's verdict decide the result.

Only the embedded stack and the workload belong here; the steps are the core's.
Everything started is stopped at the end, also on Ctrl-C.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hbase_migrate import lifecycle
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.config import MigrationSpec, load_config
from hbase_migrate.lifecycle.replay import follow, replay_job, run
from hbase_migrate.lifecycle.result import StepResult
from hbase_migrate.replay.summary import RunSummary
from hbase_migrate.snapshot.choose import MethodChoice
from hbase_migrate.workdir import claim_workdir
from minihbase.stack import EmbeddedStack
from minihbase.workload import Workload, WorkloadSpec
from stackprocs.admin_client import call_admin

SOURCE_ARGS = ["--region-servers", "2", "--roll-period", "3s", "--wal-compression", "dict+tags"]


@dataclass(frozen=True)
class DemoSpec:
    root: Path
    table: str = "orders"
    ops: int = 3000
    seed: int = 7
    live_seconds: float = 8.0  # how long the workload writes while the migration runs
    client: str = "native"     # how the migration reaches both clusters: HBase's RPC, or
    #                            "thrift" (the gateways); the workload writes through Thrift2


@dataclass
class DemoResult:
    steps: list[dict[str, Any]] = field(default_factory=list)
    replay: RunSummary | None = None
    backfill: RunSummary | None = None
    validation: StepResult | None = None
    gate: StepResult | None = None
    report: StepResult | None = None
    started: float = field(default_factory=time.monotonic)  # the run's clock, for each step

    @property
    def ok(self) -> bool:
        replay_ok = self.replay is not None and self.replay.exit_code == 0 and \
            self.backfill is not None and self.backfill.exit_code == 0
        return replay_ok and self.validation is not None and self.validation.passed and \
            self.gate is not None and self.gate.passed


Report = Callable[[str, dict[str, Any]], None]


@contextmanager
def _step(result: DemoResult, name: str, report: Report) -> Iterator[dict[str, Any]]:
    """A step of the run: ``seconds`` it took, and ``at``: seconds since the run began, as
    it ended (one clock for the whole run)."""
    facts: dict[str, Any] = {}
    started = time.monotonic()
    yield facts
    ended = time.monotonic()
    facts["seconds"] = round(ended - started, 2)
    facts["at"] = round(ended - result.started, 2)
    result.steps.append({"step": name, **facts})
    report(name, facts)


def copy_fact(metrics: Mapping[str, Any]) -> dict[str, str]:
    """The copy method a snapshot step used, with ``auto``'s reason: ``copy=scan (auto:
    ...)``."""
    if "method_reason" in metrics:
        return {"copy": MethodChoice.of(metrics).summary}
    return {"copy": str(metrics.get("method"))}


def write_config(root: Path, table: str, client: str = "native") -> Path:
    """The migration config the demo runs under, as a user would write it."""
    path = root / "migration.toml"
    path.write_text(
        '[migration]\nname = "demo"\nledger = "sqlite:///ledger.db"\n'
        f'[source]\ncluster_json = "source/cluster.json"\nclient = "{client}"\n'
        f'[target]\ncluster_json = "target/cluster.json"\nclient = "{client}"\n'
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
    result = DemoResult()
    with claim_workdir(spec.root, "demo"), EmbeddedStack(spec.root) as stack:
        with _step(result, "start ZooKeeper", report) as facts:
            facts["zookeeper"] = stack.start_zookeeper()
        with _step(result, "start source and target miniclusters", report) as facts:
            source = stack.start_cluster("source", SOURCE_ARGS)
            target = stack.start_cluster("target")
            facts.update(source=source.thrift2, target=target.thrift2, webhdfs=source.webhdfs,
                         client=spec.client)
        with _step(result, "first workload on the source", report) as facts:
            facts.update(_workload(source, WorkloadSpec(spec.table, spec.seed, spec.ops // 2)))
        migration = load_config(write_config(spec.root, spec.table, spec.client))
        _migrate(spec, migration, source, result, report)
    return result


def _migrate(spec: DemoSpec, migration: MigrationSpec, source: ClusterEndpoints,
             result: DemoResult, report: Report) -> None:
    """The lifecycle steps, as a user runs them, while the workload keeps writing."""
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
    with _step(result, "target schema (families, split points)", report) as facts:
        prepared = lifecycle.prepare(migration)
        facts.update(tables=[t["target"] for t in prepared.metrics["tables"]],
                     split_points=sum(t["split_points"] for t in prepared.metrics["tables"]))
    with _step(result, "watermark T0, live workload, snapshot copy", report) as facts:
        writer.start()
        copied = lifecycle.snapshot(migration)
        facts.update({k: copied.metrics[k] for k in ("watermark", "rows", "cells", "anchors")})
        facts.update(copy_fact(copied.metrics))
    job = replay_job(migration)
    with _step(result, "replay WALs in --follow mode while the workload writes",
               report) as facts:
        stop = threading.Event()
        runs: list[RunSummary] = []

        def keep_following() -> None:
            try:
                follow(job, 1.0, stop, on_run=runs.append)
            except BaseException as exc:  # re-raised below, in this thread
                failed.append(exc)

        follower = threading.Thread(target=keep_following, name="follow", daemon=True)
        follower.start()
        writer.join()
        call_admin(Path(migration.source.cluster_json or ""), "roll")
        seen, deadline = len(runs), time.monotonic() + 60
        while len(runs) <= seen and time.monotonic() < deadline and follower.is_alive():
            time.sleep(0.1)  # one follow run after the roll, however long the copy took
        stop.set()
        follower.join()
        if failed:
            raise failed[0]
        facts.update(live_workload_ops=live.get("total_ops", 0), follow_runs=len(runs),
                     cells_replayed=sum(sum(r.cells().values()) for r in runs))
    with _step(result, "backfill: replay the first seconds after T0 again", report) as facts:
        start = int(copied.metrics["watermark"])
        end = start + int(spec.live_seconds * 500)
        result.backfill = lifecycle.replay(migration, start=start, end=end)
        facts.update(window=[start, end],
                     files_selected=len(result.backfill.manifest.included)
                     if result.backfill.manifest else 0,
                     cells_replayed=sum(result.backfill.cells().values()),
                     exit_code=result.backfill.exit_code)
    with _step(result, "final catch-up replay", report) as facts:
        result.replay = run(job)
        summary = result.replay.to_json()
        facts.update({k: summary[k] for k in ("files_listed", "files_read", "entries")},
                     cells_replayed=sum(result.replay.cells().values()),
                     exit_code=result.replay.exit_code)
    with _step(result, "validate: source and target range by range", report) as facts:
        result.validation = lifecycle.validate(migration)
        table, = result.validation.metrics["tables"]
        facts.update(verdict=result.validation.verdict, state=result.validation.state,
                     **{k: table[k] for k in ("source_cells", "target_cells", "ranges",
                                              "ranges_matching", "examples")})
    with _step(result, "cutover gate", report) as facts:
        result.gate = lifecycle.cutover_check(migration)
        facts.update(verdict=result.gate.verdict, reasons=result.gate.metrics["reasons"],
                     lag=result.gate.metrics["lag"])
    with _step(result, "audit report", report) as facts:
        result.report = lifecycle.report(migration)
        facts.update(path=result.report.metrics["path"], bytes=result.report.metrics["bytes"])
