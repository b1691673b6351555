"""Replay of a live embedded source into an empty target converges cell for cell.

The source has three region servers writing dictionary- and tag-compressed WAL files; a
seeded workload (every put and delete kind, whole-row deletes, increments) writes in phases
separated by a region move, explicit rolls (archived files) and a server crash (its
directory becomes ``-splitting``). The truth is the source's own store; the target must
equal it with every version, and a second run reads nothing. Once more with every client
timestamp on the same second, so that the same cell is rewritten at one timestamp across a
roll, a move and the crash: the later write wins on both sides."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.config import load_config
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.run import follow_replay, run_replay
from hbase_migrate.replay.summary import RunSummary
from hbase_migrate.wal.model import Cell, CellType
from hbase_migrate.wal.writer import WalOptions
from minihbase.regionserver import WalSettings
from minihbase.zookeeper import ZooKeeperServer
from tests.support.minicluster import (
    cluster_pair,
    clusters_over_rpc,
    compare,
    copy_table_schema,
    run_workload,
    set_watermark,
    t2,
    write_migration,
)
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration

TABLE = "orders"
COMPRESSED = WalOptions(compression=True, tag_compression=True)


def _states(summary: RunSummary) -> set[str | None]:
    assert summary.manifest is not None
    return {item.state for item in summary.manifest.items if item.included}


@pytest.mark.parametrize("same_second", [False, True], ids=["spread", "same-second"])
def test_replay_of_every_operation_across_move_roll_and_crash_converges(
        tmp_path: Path, zookeeper: ZooKeeperServer, transport: str, same_second: bool) -> None:
    # once over each transport: the target written through Thrift2 or over HBase's RPC
    settings = WalSettings(region_servers=3, roll_period=3600, split_delay=3600,
                           options=COMPRESSED)
    with cluster_pair(tmp_path, transport, zookeeper, wal=settings) as (src, dst):
        config = write_migration(tmp_path, src, dst, TABLE)
        set_watermark(config)  # before the first write
        assert src.region_servers is not None
        servers = src.region_servers
        seeds = 200 if same_second else 0  # seeds that rewrite cells across every phase
        reports = [run_workload(src, TABLE, seed=11 + seeds, ops=150, same_second=same_second)]
        copy_table_schema(src, dst, TABLE)

        first = next(s for s in servers.info()["servers"] if s["regions"])
        moved = servers.move(first["regions"][0])
        assert moved["from"] != moved["to"]
        reports.append(run_workload(src, TABLE, seed=12 + seeds, ops=150,
                                    same_second=same_second))
        assert len(servers.roll()) == 3  # every live file archived
        reports.append(run_workload(src, TABLE, seed=13 + seeds, ops=150,
                                    same_second=same_second))
        victim = next(s for s in servers.info()["servers"]
                      if s["regions"] and s["alive"] and s["slot"] != 0)
        killed = servers.kill(victim["slot"])
        reports.append(run_workload(src, TABLE, seed=14 + seeds, ops=150,
                                    same_second=same_second))
        ops = sum((r.ops for r in reports), Counter[str]())
        assert len(ops) == 12, f"the workload did not use every operation: {dict(ops)}"
        root = src.hbase_root_dir
        assert (root / "WALs" / killed["splitting"]).is_dir()
        assert any((root / "oldWALs").iterdir())

        job = ReplayJob.from_spec(load_config(config))
        summary = run_replay(job)
        assert summary.exit_code == 0, summary.to_json()
        assert _states(summary) == {"live", "archived", "splitting"}
        assert summary.cells().get("Put", 0) > 0
        assert {"Delete", "DeleteColumn", "DeleteFamily", "DeleteFamilyVersion"} <= set(
            summary.cells()), summary.cells()
        result = compare(src, dst, TABLE)
        assert result.equal, result.to_json()
        assert result.source_cells > 300

        again = run_replay(job)
        assert again.exit_code == 0, again.to_json()
        assert again.to_json()["bytes"] == 0, again.to_json()["files"]
        assert compare(src, dst, TABLE).equal


def test_a_cell_rewritten_at_one_timestamp_across_a_move_and_a_roll_ends_with_the_last_value(
        tmp_path: Path, zookeeper: ZooKeeperServer, transport: str) -> None:
    # A region moves from the server whose files sort last to the one whose files sort
    # first, which then rolls: its second file is free to go while its first waits for the
    # old server's, and must still come after its first.
    settings = WalSettings(region_servers=2, roll_period=3600, split_delay=3600)
    with cluster_pair(tmp_path, transport, zookeeper, wal=settings) as (src, dst):
        config = write_migration(tmp_path, src, dst, TABLE)
        set_watermark(config)
        assert src.region_servers is not None
        servers = src.region_servers
        with t2(src) as client:  # four regions over the two servers
            client.create_table(TableDescriptor(TABLE, (FamilyDescriptor(b"d"),)),
                                (b"g", b"p", b"w"))
        copy_table_schema(src, dst, TABLE)
        first, last = sorted(servers.info()["servers"], key=lambda s: s["name"])
        held = next(r for r in servers.hosted(last["slot"]).values() if r.table == TABLE)
        region, row = held.encoded_name, held.start_key + b"\x01"  # a row of that region
        ts = 1_700_000_000_000
        for value, act in ((b"v0", lambda: servers.move(region, first["slot"])),
                           (b"v1", lambda: servers.roll(first["slot"])),
                           (b"v2", lambda: None)):
            with t2(src) as client:
                client.put_cells(TABLE, [Cell(row, b"d", b"q", ts, CellType.PUT, value)])
            act()

        summary = run_replay(ReplayJob.from_spec(load_config(config)))
        assert summary.exit_code == 0, summary.to_json()
        result = compare(src, dst, TABLE)
        assert result.equal and result.source_cells == 1, result.to_json()
        with t2(dst) as client:
            assert client.get(TABLE, row)[0].value == b"v2"


def test_follow_while_the_workload_writes_then_a_final_run_converges(
        tmp_path: Path, zookeeper: ZooKeeperServer) -> None:
    settings = WalSettings(region_servers=2, roll_period=0.5, options=COMPRESSED)
    with clusters_over_rpc(tmp_path, zookeeper, wal=settings) as (src, dst):
        config = write_migration(tmp_path, src, dst, TABLE, roll_period="500ms")
        set_watermark(config)
        run_workload(src, TABLE, seed=21, ops=100)
        copy_table_schema(src, dst, TABLE)
        job = ReplayJob.from_spec(load_config(config))
        stop, runs = threading.Event(), list[RunSummary]()
        codes: list[int] = []
        follower = threading.Thread(
            target=lambda: codes.append(
                follow_replay(job, 0.2, stop, on_run=runs.append).exit_code),
            name="follow", daemon=True)
        follower.start()
        try:
            run_workload(src, TABLE, seed=22, ops=300, rate=150)
            assert src.region_servers is not None
            servers = src.region_servers
            # bounds for a loaded machine: each returns as soon as it holds
            wait_for(lambda: servers.counters["rolls"] >= 2,
                     60, "the source to roll its WALs while the workload writes")
            wait_for(lambda: len(runs) >= 3, 180, "three follow runs")
        finally:
            stop.set()
            follower.join(30)
        assert not follower.is_alive(), "follow_replay did not stop within 30s"
        assert codes == [0], [r.to_json()["failures"] for r in runs]
        assert sum(sum(r.cells().values()) for r in runs) > 0  # follow did real work
        servers.roll()
        final = run_replay(job)
        assert final.exit_code == 0, final.to_json()
        result = compare(src, dst, TABLE)
        assert result.equal, result.to_json()
