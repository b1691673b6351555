"""Clients kept per process and lent to one task at a time (``hbase_migrate.ranges.lent``),
on two embedded clusters reached over HBase's own RPC: range tasks and replay tasks of one
process reuse the clients an earlier task gave back, a region that moved meanwhile is found
again, and a task that fails closes its client instead of giving it back. What landed is
read back through Thrift2, an independent path."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.cluster.retry import Kind
from hbase_migrate.config import load_config
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.lent import close_idle, idle_clients, lent_client
from hbase_migrate.ranges.tasks import ChecksumJob, CopyJob, checksum_range_task, copy_range_task
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.job_target import lent_job_target
from hbase_migrate.replay.mutations import Kind as MutationKind
from hbase_migrate.replay.mutations import RowMutation, WalPosition
from hbase_migrate.wal.model import Cell, CellType
from minihbase.server import MiniHBase
from minihbase.zookeeper import ZooKeeperServer
from stackprocs.admin_client import call_admin
from tests.support.minicluster import (
    clusters_over_rpc,
    compare,
    copy_table_schema,
    run_workload,
    t2,
    write_migration,
)

pytestmark = [pytest.mark.integration]
TABLE = "lent"


def move_every_region(cluster: MiniHBase) -> None:
    """Each region of the cluster to another region server."""
    def hosts() -> dict[str, int]:
        return {r: s["slot"] for s in call_admin(cluster.write_cluster_json(), "info")["servers"]
                if s["alive"] for r in s["regions"]}

    before = hosts()
    assert before
    slots = sorted(set(before.values()) | {0, 1})
    for region, slot in before.items():
        call_admin(cluster.write_cluster_json(), "move",
                   {"region": region, "server": next(s for s in slots if s != slot)})
    after = hosts()
    assert all(after[r] != before[r] for r in before)


def test_range_and_replay_tasks_reuse_their_clients_across_a_region_move(
        tmp_path: Path, zookeeper: ZooKeeperServer) -> None:
    close_idle()
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        run_workload(src, TABLE, seed=41, ops=300)
        copy_table_schema(src, dst, TABLE)
        spec = load_config(write_migration(tmp_path, src, dst, TABLE))
        with t2(src) as client:
            bounds = [(r.start_key, r.end_key) for r in client.regions(TABLE)]
        assert len(bounds) > 2
        ranges = [KeyRange(TABLE, start, stop) for start, stop in bounds]
        job = CopyJob(spec.source, spec.target, ((TABLE, TABLE),), (0, 2**62))

        copy_range_task(job, ranges[0])
        assert (idle_clients(spec.source), idle_clients(spec.target)) == (1, 1)
        with lent_client(spec.target) as kept:
            pass  # the client the first task gave back: every later task gets it again
        move_every_region(dst)  # the kept client's region locations are now stale
        move_every_region(src)
        for key_range in ranges:  # the first again: idempotent, and where it was cached
            copy_range_task(job, key_range)
        with lent_client(spec.target) as again:
            assert again is kept
        # it met the moved regions where it had left them, and looked them up again
        assert kept.data.retried[Kind.RELOCATE] > 0  # type: ignore[attr-defined]
        assert compare(src, dst, TABLE).equal

        pairs = [checksum_range_task(ChecksumJob(spec.source, spec.target,
                                                 ((TABLE, TABLE),)), r) for r in ranges]
        assert all(p.equal for p in pairs) and sum(p.source.cells for p in pairs) > 0
        assert idle_clients(spec.target) == 1

        # replay tasks: the target's writers are lent the same way, and find moved regions
        replay_job = ReplayJob.from_spec(spec)
        row = bounds[-1][0] + b"-replayed"
        written = []
        for n in range(2):
            cell = Cell(row, b"d", b"q%d" % n, 1_000 + n, CellType.PUT, b"v%d" % n)
            with lent_job_target(replay_job) as target:
                target.apply(TABLE, [RowMutation(row, MutationKind.PUT, (cell,),
                                                 WalPosition("test-wal", n, n))])
            written.append(cell)
            if n == 0:
                move_every_region(dst)
        with lent_client(spec.target) as after_replay:
            assert after_replay is kept
        with t2(dst) as client:
            assert [c for r in client.scan(TABLE, start=row, stop=row + b"\0")
                    for c in r] == written

        # a task that fails closes its client: the next one connects anew
        with pytest.raises(RuntimeError), lent_client(spec.target):
            raise RuntimeError("the task failed")
        assert idle_clients(spec.target) == 0
        with lent_client(spec.target) as fresh:
            assert fresh is not kept
    close_idle()
