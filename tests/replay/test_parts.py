"""A catch-up split into parts: one per WAL chain, chains a region move ties in one part; a
part replays only its chains' files, and the parts together leave the target equal to the
source; the command line makes the same split (``replay --parts``, ``--chain``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hbase_migrate import lifecycle
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.lifecycle.replay import replay_parts
from hbase_migrate.replay.job import FileTask
from hbase_migrate.replay.ordering import RegionEvents, chain_id, order_tasks
from hbase_migrate.replay.parts import split_parts
from minihbase.regionserver import WalSettings
from tests.support.minicluster import EmbeddedClusters, compare, edits_after_t0

RS1 = "/hbase/WALs/rs1.example.com,16020,1/rs1.example.com%2C16020%2C1.1700000000000"
RS1_NEXT = "/hbase/WALs/rs1.example.com,16020,1/rs1.example.com%2C16020%2C1.1700000600000"
RS2 = "/hbase/oldWALs/rs2.example.com%2C16020%2C2.1700000100000"
RS2_GROUP = ("/hbase/WALs/rs2.example.com,16020,2/"
             "rs2.example.com%2C16020%2C2.regiongroup-1.1700000100000")
RS3 = "/hbase/WALs/rs3.example.com,16020,3/rs3.example.com%2C16020%2C3.1700000200000"


def task(path: str) -> FileTask:
    return FileTask(path, "", None, None, None)


def test_a_chain_is_a_server_and_its_wal_group() -> None:
    assert chain_id(RS1) == chain_id(RS1_NEXT) == "rs1.example.com,16020,1"
    assert chain_id(RS2) == "rs2.example.com,16020,2"  # archived: the name says the server
    assert chain_id(RS2_GROUP) == "rs2.example.com,16020,2/regiongroup-1"


def test_chains_a_region_move_ties_form_one_part() -> None:
    tasks = [task(p) for p in (RS1, RS1_NEXT, RS2, RS2_GROUP, RS3)]
    alone = {p: RegionEvents({b"r%d" % i: 10}, {}) for i, p in enumerate(
        (RS1, RS1_NEXT, RS2, RS2_GROUP, RS3))}
    assert split_parts(order_tasks(tasks, lambda t: alone[t.path])) == [
        ("rs1.example.com,16020,1",), ("rs2.example.com,16020,2",),
        ("rs2.example.com,16020,2/regiongroup-1",), ("rs3.example.com,16020,3",)]
    # region r0 of rs1's first file opens again on rs3 later: rs1 and rs3 go together
    moved = {**alone, RS3: RegionEvents({b"r0": 50}, {b"r0": 40})}
    assert split_parts(order_tasks(tasks, lambda t: moved[t.path])) == [
        ("rs1.example.com,16020,1", "rs3.example.com,16020,3"), ("rs2.example.com,16020,2",),
        ("rs2.example.com,16020,2/regiongroup-1",)]


@pytest.mark.integration
def test_parts_replay_their_own_chains_and_together_everything(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    src, dst = make_embedded.pair(wal=WalSettings(region_servers=2))
    spec = edits_after_t0(tmp_path, src, dst, "orders")
    parts = replay_parts(spec)
    servers = {p.name.removesuffix("-splitting")
               for p in (src.hbase_root_dir / "WALs").iterdir()}
    assert sorted(c for part in parts for c in part) == sorted(servers)
    assert all(len(part) == 1 for part in parts)  # no region moved

    first = lifecycle.replay(spec, chains=parts[0])
    assert first.exit_code == 0 and first.outcomes
    assert {chain_id(o.path) for o in first.outcomes} == set(parts[0])
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None
        left = {chain_id(f.path) for f in ledger.wal_files(record.id, "source")
                if f.offset_reached == 0 and f.status.value != "skipped"}
    assert set(parts[1]) <= left and not set(parts[0]) & left
    assert not compare(src, dst, "orders").equal  # the other chain is still to come

    # the command line makes the same split and runs a part by its chains
    listed = subprocess.run(
        [sys.executable, "-m", "hbase_migrate", "replay", "--config", str(spec.path),
         "--parts"], capture_output=True, text=True, timeout=120, check=False)
    assert listed.returncode == 0, listed.stderr
    # (the first chain is listed again for its live file, read to its end every run)
    assert parts[1] in [json.loads(line) for line in listed.stdout.splitlines()]
    second = subprocess.run(
        [sys.executable, "-m", "hbase_migrate", "replay", "--config", str(spec.path),
         "--json", *(a for chain in parts[1] for a in ("--chain", chain))],
        capture_output=True, text=True, timeout=300, check=False)
    assert second.returncode == 0, second.stderr
    summary = json.loads(second.stdout)
    assert {chain_id(f["path"]) for f in summary["files"]} == set(parts[1])
    assert compare(src, dst, "orders").equal
