"""A replay run's backlog bulk-loaded into real HBase 2.6.1 (the session's stack) leaves the
target equal to the source cell for cell, by raw scans of both (delete markers included).

The source table gets a "copy" (two versions of every column) which is written to the
target tables as the snapshot copy would, at T0; then edits after T0 through the source's
write path: puts around the copy's versions, deletes of the four types (many covering cells
of the copy), a key written twice in one WAL file, and after a roll of every WAL a key
written again in the next file. A migration per target table replays them with ``[replay]
bulk = "always"`` (the source and the target the same cluster, tables mapped): once with
every file's edits in one window, once a load per file (``bulk_window`` as small as it
goes). Compactions are off on the three tables, so that the raw scans keep every marker.
The runs record every file's offsets as loaded, the step says it bulk-loaded, and a run
after writes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.audit.ledger import Ledger, now_ms
from hbase_migrate.audit.records import WalStatus
from hbase_migrate.cluster.endpoints import ClusterEndpoints, load_cluster_json
from hbase_migrate.config import load_config
from hbase_migrate.hbase.connect import connect
from hbase_migrate.replay.client_target import ClientTarget
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.run import run_replay
from hbase_migrate.wal.model import Cell, CellType
from realstack.hbase import RealHBase
from stackprocs.admin_client import call_admin

from .bulk_rpc import expected_raw, fresh_table, raw_scan
from .bulk_window import T, copy_cells, mutations, window_entries
from .fixtures import native_cluster_json

pytestmark = [pytest.mark.integration, pytest.mark.realstack]
SOURCE = "bulk_replay_src"
TARGETS = {"one_window": "bulk_replay_one", "per_file": "bulk_replay_each"}
WINDOWS = {"one_window": "256MiB", "per_file": "1KiB"}
REWRITTEN = (b"r011", b"g", b"q1", T + 900)  # written in one WAL file, again in the next
# no compaction: one that takes every file of a store drops the delete markers and what they
# cover, at its own time on each side (four loads into a region start one), and the raw
# scans compare every cell, markers included
KEPT = ((b"COMPACTION_ENABLED", b"false"),)


def rewrite(value: bytes) -> list[Cell]:
    return [Cell(*REWRITTEN, CellType.PUT, value)]


@pytest.fixture(scope="module")
def replayed(real_hbase: RealHBase, tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[dict[str, Any]]:
    """The source's copy, T0, the copy written to every target table, the edits after T0
    (a roll of every WAL among them); the tables dropped after."""
    folder = tmp_path_factory.mktemp("bulk-replay")
    cluster_json = native_cluster_json(real_hbase, folder)
    endpoints = load_cluster_json(cluster_json)
    first, second = window_entries()[:300], window_entries()[300:]
    with fresh_table(endpoints, SOURCE, KEPT), \
            fresh_table(endpoints, TARGETS["one_window"], KEPT), \
            fresh_table(endpoints, TARGETS["per_file"], KEPT), connect(endpoints) as client:
        client.write_cells(SOURCE, copy_cells())
        copied = raw_scan(endpoints, SOURCE)
        for table in TARGETS.values():  # the snapshot copy
            client.write_cells(table, copied)
        t0 = now_ms()
        source = ClientTarget(client, owned=False)
        for entry in mutations([*first, rewrite(b"before the roll")]):
            source.apply(SOURCE, entry)
        call_admin(real_hbase.cluster_json, "roll")
        for entry in mutations([*second, rewrite(b"after the roll")]):
            source.apply(SOURCE, entry)
        yield {"folder": folder, "cluster_json": cluster_json, "endpoints": endpoints,
               "t0": t0, "entries": [*first, rewrite(b"before the roll"), *second,
                                     rewrite(b"after the roll")]}


def migration(replayed: dict[str, Any], key: str) -> Path:
    folder: Path = replayed["folder"]
    config = folder / f"{key}.toml"
    config.write_text(
        f'[migration]\nname = "bulk-{key}"\nledger = "sqlite:///{folder / key}.db"\n'
        f'[source]\ncluster_json = "{replayed["cluster_json"]}"\n'
        f'[target]\ncluster_json = "{replayed["cluster_json"]}"\n'
        f'[[tables]]\nsource = "{SOURCE}"\ntarget = "{TARGETS[key]}"\n'
        f'[replay]\nbulk = "always"\nbulk_window = "{WINDOWS[key]}"\n', encoding="utf-8")
    return config


@pytest.mark.parametrize("key", list(TARGETS))
def test_a_backlog_bulk_loaded_leaves_the_target_equal_to_the_source(
        replayed: dict[str, Any], key: str) -> None:
    endpoints: ClusterEndpoints = replayed["endpoints"]
    spec = load_config(migration(replayed, key))
    job = ReplayJob.from_spec(spec, start=replayed["t0"])
    summary = run_replay(job)
    assert summary.exit_code == 0, summary.to_json()
    path = summary.to_json()["replay_path"]
    assert path["path"] == "bulk load", path
    assert path["reason"].startswith('[replay] bulk = "always", and the target is HBase')
    loads = path["bulk"]
    assert loads["regions"] == 2 and loads["files"] >= 4 and loads["bytes"] > 0, loads
    files = [o for o in summary.outcomes if o.run.cells]
    assert len(files) >= 2, [o.path for o in summary.outcomes]  # the roll: a file after
    if key == "per_file":
        assert loads["loads"] >= len(files), loads
    else:
        assert loads["loads"] == 1, loads

    source, target = raw_scan(endpoints, SOURCE), raw_scan(endpoints, TARGETS[key])
    assert source == expected_raw(copy_cells(), replayed["entries"])
    assert {c.type for c in source} == {4, 8, 10, 12, 14}
    assert target == source
    assert Cell(*REWRITTEN, CellType.PUT, b"after the roll") in target

    rows = {c.row for entry in replayed["entries"] for c in entry}
    assert summary.touched() == {TARGETS[key]: frozenset(rows)}
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None
        steps = [s for s in ledger.steps(record.id) if s.kind == "replay"]
        assert steps[-1].metrics["replay_path"] == path
        recorded = {r.path: r for r in ledger.wal_files(record.id, job.stream)}
    for outcome in summary.outcomes:
        row = recorded[outcome.path]
        assert row.offset_reached == outcome.offset, (row, outcome)
        assert row.status in (WalStatus.REPLAYED, WalStatus.REPLAYING), row
    again = run_replay(job)
    # only what was written since (the loads' own markers, in the target table's WAL)
    assert again.exit_code == 0 and not again.cells(), again.to_json()
    assert raw_scan(endpoints, TARGETS[key]) == source
