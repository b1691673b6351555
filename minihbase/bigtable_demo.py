"""The main job with Bigtable as the target (``hbase-migrate demo --target bigtable``): the
embedded cluster as the source, the Bigtable emulator as the target, the lifecycle's
steps called directly (:mod:`hbase_migrate.lifecycle`, as for an HBase target) while the
workload writes. Its working folder (``state/demo-bigtable`` by default) is its own: the
HBase demo's is refused, and its files kept (:func:`hbase_migrate.workdir.claim_workdir`)."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hbase_migrate import lifecycle
from hbase_migrate.bigtable.emulator import start_emulator, stop_emulator
from hbase_migrate.config import load_config
from hbase_migrate.workdir import MARKER, claim_workdir
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from minihbase.workload import Workload, WorkloadSpec

WHAT = "demo-bigtable"  # the kind of run its folder's marker names
LEGACY_MARK = ".bigtable-demo"  # what this demo marked its folder with before the marker


def _workload(cluster: MiniHBase, table: str, seed: int, ops: int) -> None:
    runner = Workload(cluster.endpoints, WorkloadSpec(table, seed, ops))
    try:
        runner.ensure_table()
        runner.run()
    finally:
        runner.close()


def _replayed(summary: dict[str, Any]) -> dict[str, Any]:
    """What the demo shows of a replay run."""
    return {k: summary[k] for k in ("files_read", "entries", "cells", "lag")}


def run_bigtable_demo(root: Path, table: str, ops: int, seed: int,
                      report: Callable[[str, dict[str, Any]], None]) -> dict[str, Any]:
    """Prepare, copy while the workload writes, replay, validate, the cutover gate and the
    report (``root/report.html``); the validation.
    ``report`` gets each step's facts with ``at`` (the run's clock) and ``seconds``."""
    began = time.monotonic()

    def timed(step: str, run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        start = time.monotonic()
        result = run()
        shown = {k: v for k, v in result.items() if k not in ("details", "preflight")}
        report(step, {**shown, "at": time.monotonic() - began,
                      "seconds": time.monotonic() - start})
        return result

    if (root / LEGACY_MARK).exists() and not (root / MARKER).exists():
        shutil.rmtree(root)  # an earlier release of this demo made it
    with claim_workdir(root, WHAT):
        return _run(root.absolute(), table, ops, seed, timed)


def _run(root: Path, table: str, ops: int, seed: int,
         timed: Callable[[str, Callable[[], dict[str, Any]]], dict[str, Any]]
         ) -> dict[str, Any]:
    """The steps in ``root``, claimed."""
    emulator = start_emulator(root / "emulator")
    try:
        with MiniHBase(root / "source", "source", wal=WalSettings(region_servers=2)) as source:
            _workload(source, table, seed, ops // 2)
            config = root / "migration.toml"
            config.write_text(
                f'[migration]\nname = "demo-bigtable"\nledger = "sqlite:///{root / "ledger.db"}"\n'
                f'[source]\ncluster_json = "{source.write_cluster_json()}"\n'
                f'[[tables]]\nsource = "{table}"\n[target]\nkind = "bigtable"\n'
                f'project = "demo"\ninstance = "demo"\nemulator_host = "{emulator.host}"\n',
                encoding="utf-8")
            migration = load_config(config)
            timed("prepare", lambda: dict(lifecycle.prepare(migration).metrics))
            live = threading.Thread(target=_workload, args=(source, table, seed + 1, ops // 2))
            live.start()  # the source stays live during the copy
            timed("snapshot", lambda: dict(lifecycle.snapshot(migration).metrics))
            live.join()
            timed("replay", lambda: _replayed(lifecycle.replay(migration).to_json()))
            validated = timed("validate", lambda: dict(lifecycle.validate(migration).metrics))
            timed("cutover check", lambda: {"verdict": lifecycle.cutover_check(
                migration).metrics.get("verdict")})
            timed("report", lambda: dict(lifecycle.report(
                migration, out=root / "report.html").metrics))
            return validated
    finally:
        stop_emulator(root / "emulator")
