"""Ctrl-C during `snapshot`: the command stops at once, says what it copied, leaves the
migration `copying`, and a rerun copies only the ranges the ledger does not hold as copied
(stopped in the pass that plans and copies, and in the range tasks after it)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.config import load_config
from hbase_migrate.lifecycle import prepare, snapshot
from minihbase.zookeeper import ZooKeeperServer
from tests.support.minicluster import (
    cell_count,
    clusters_over_rpc,
    compare,
    edits_after_t0,
    run_workload,
    write_migration,
)
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration

TABLE = "orders"
CELLS_PER_SECOND = 400  # the copy's throttle: a copy of seconds, stopped in its middle


# the command, with Ctrl-C delivered as a terminal delivers it even where this test's process
# inherited SIGINT ignored (a child keeps it ignored, and Python then never raises
# KeyboardInterrupt)
INTERRUPTIBLE = [sys.executable, "-c", "import runpy, signal, sys; "
                 "signal.signal(signal.SIGINT, signal.default_int_handler); "
                 "sys.argv[0] = 'hbase-migrate'; "
                 "runpy.run_module('hbase_migrate', run_name='__main__')"]


def _snapshot(config: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([*INTERRUPTIBLE, "snapshot", "--config",
                             str(config)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


@pytest.mark.parametrize("planning_cells", [1_000_000, 1], ids=["planning-pass", "tasks"])
def test_ctrl_c_keeps_what_was_copied_and_a_rerun_copies_the_rest(
        tmp_path: Path, zookeeper: ZooKeeperServer, planning_cells: int) -> None:
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        run_workload(src, TABLE, seed=57, ops=500)
        total = cell_count(src, TABLE)
        config = write_migration(tmp_path, src, dst, TABLE)
        with config.open("a", encoding="utf-8") as out:
            out.write(f"[limits]\ncopy_cells_per_second = {CELLS_PER_SECOND}\n"
                      f"[ranges]\nmax_cells = 100\nthreads = 2\n"
                      f"plan_copy_cells = {planning_cells}\n"
                      f'[spark]\nmaster = "in-process"\n')
        spec = load_config(config)
        prepare(spec)

        first = _snapshot(config)
        assert first.stdout is not None
        line = first.stdout.readline()  # T0 is said when fixed, before any copying
        assert line.startswith("watermark T0 = "), line
        time.sleep(total / CELLS_PER_SECOND / 3)
        first.send_signal(signal.SIGINT)
        out, err = first.communicate(timeout=60)
        assert first.returncode == 130, err

        with Ledger.open(spec.ledger_url) as ledger:
            migration = ledger.migration(spec.name)
            assert migration is not None and migration.state == "copying"
            copied = [r for r in ledger.key_ranges(migration.id) if r.copied_at is not None]
        kept = sum(r.copied_cells or 0 for r in copied)
        assert copied and 0 < kept < total
        assert err == (f"hbase-migrate: stopped: snapshot of migration 'mig' stopped: "
                       f"{len(copied)} key range(s) copied and recorded ({kept} cells) at "
                       f"{line.strip()}; " + err.split("; ", 1)[1])
        assert "run the same command again to copy only what is left, at the same T0" in err

        second = _snapshot(config)
        out, err = second.communicate(timeout=300)
        assert second.returncode == 0, err
        lines = out.splitlines()
        assert lines[0] == f"{line.strip()} (recorded before: kept)"
        assert f"{len(copied)} key range(s) copied before: skipped" in lines
        again = sum(int(x.split(": ")[1].split(" rows, ")[1].split(" cells")[0])
                    for x in lines if x.startswith(f"{TABLE} [") and "cells copied" in x)
        assert again == total - kept
        assert compare(src, dst, TABLE).equal


def test_ctrl_c_during_validate_leaves_the_migration_as_it_was(
        tmp_path: Path, zookeeper: ZooKeeperServer) -> None:
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        run_workload(src, TABLE, seed=58, ops=300)
        config = write_migration(tmp_path, src, dst, TABLE)
        with config.open("a", encoding="utf-8") as out:
            out.write(f"[limits]\nvalidate_cells_per_second = {CELLS_PER_SECOND // 4}\n"
                      '[ranges]\nmax_cells = 100\n[spark]\nmaster = "in-process"\n')
        spec = load_config(config)
        prepare(spec)
        snapshot(spec)
        proc = subprocess.Popen([*INTERRUPTIBLE, "validate", "--config",
                                 str(config)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        with Ledger.open(spec.ledger_url) as ledger:
            mid = ledger.migration(spec.name).id  # type: ignore[union-attr]
            wait_for(lambda: any(s.status == "running" for s in ledger.steps(mid, "validate")),
                     60, "the validate step")
        time.sleep(1.5)  # checksums under way
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        with Ledger.open(spec.ledger_url) as ledger:
            migration = ledger.migration(spec.name)
            ranges = len(ledger.key_ranges(mid))
        assert migration is not None and migration.state == "copied"
        done = err.split(" stopped after ")[1].split(" of ")[0] if " after " in err else None
        assert err == (f"hbase-migrate: stopped: validate of migration 'mig' stopped after "
                       f"{done} of {ranges} key range(s) before it finished; the migration "
                       "stays copied: run the same command again\n")


def test_ctrl_c_during_replay_says_where_the_files_stand_and_a_rerun_goes_on(
        tmp_path: Path, zookeeper: ZooKeeperServer) -> None:
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        spec = edits_after_t0(tmp_path, src, dst, TABLE)
        config = tmp_path / "migration.toml"
        with config.open("a", encoding="utf-8") as out:
            out.write(f"[limits]\nreplay_cells_per_second = {CELLS_PER_SECOND // 4}\n")
        command = [*INTERRUPTIBLE, "replay", "--config", str(config),
                   "--master", "in-process"]
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        with Ledger.open(spec.ledger_url) as ledger:
            mid = ledger.migration(spec.name).id  # type: ignore[union-attr]
            wait_for(lambda: any(s.status == "running" for s in ledger.steps(mid, "replay")),
                     60, "the replay step")
        time.sleep(1.5)  # edits under way
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        with Ledger.open(spec.ledger_url) as ledger:
            counts = ledger.counts(mid)
        files = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        assert err == (f"hbase-migrate: stopped: replay of migration 'mig' stopped: every "
                       f"edit the target acknowledged is recorded (WAL files: {files}); run "
                       "the same command again to go on from there\n")
        done = subprocess.run(command, capture_output=True, text=True, timeout=300,
                              check=False)
        assert done.returncode == 0, done.stderr
        assert compare(src, dst, TABLE).equal
