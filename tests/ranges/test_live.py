"""The range engine on the embedded stack, on Spark ``local[2]``: copy and validate a live
table, a copy killed mid-job and rerun, divergences injected through Thrift1 found range by
range and repaired, a write during validation that the recompare clears, and writes the WAL
never carried (a bulk load, SKIP_WAL) caught and repaired. (The bulk-load and SKIP_WAL cases
on a real HBase belong with the real stack's own tests.)"""

from __future__ import annotations

import collections
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import happybase
import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import Verdict
from hbase_migrate.config import load_config
from hbase_migrate.lifecycle import prepare, replay, snapshot, validate
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.thrift.thrift2_idl import hbase2
from hbase_migrate.wal.model import Cell, CellType
from minihbase.regionserver import WalSettings
from minihbase.zookeeper import ZooKeeperServer
from tests.support.minicluster import EmbeddedClusters, clusters_over_rpc, compare, run_workload, t2
from tests.support.ranges import BUDGET, TABLE, configure, failing, holding, planned
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]
class StallWhenCopied:
    """Stands in for the target gateway's ``call_sizes`` log: once the ledger shows
    ``ranges`` copied ranges, every later put stalls (never answers), so a job killed then
    is caught mid-range whatever the machine's speed."""

    def __init__(self, gateway: Any, copied: Callable[[], int], ranges: int) -> None:
        self.gateway, self.copied, self.ranges = gateway, copied, ranges
        self.stalled = threading.Event()

    def append(self, call: tuple[str, int, int]) -> None:
        if call[0] == "putMultiple" and (self.stalled.is_set()
                                         or self.copied() >= self.ranges):
            self.stalled.set()
            self.gateway.stall_calls += 1  # the gateway stalls the call it just logged


def test_copy_then_validate_a_live_table(
        spark: Any, tmp_path: Path, zookeeper: ZooKeeperServer) -> None:
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        run_workload(src, TABLE, seed=31, ops=400)
        config = configure(tmp_path, src, dst)
        spec = load_config(config)
        prepare(spec)
        live = threading.Thread(target=run_workload, args=(src, TABLE, 32, 200, 300.0))
        live.start()  # writes during the copy come after T0: the copy leaves them out
        copied = snapshot(spec).to_json()
        live.join()
        ranges = planned(config)
        assert copied["ranges"] == len(ranges) == copied["ranges_copied"] > 4
        assert copied["engine"] == "local[2]"
        with t2(src) as source:  # exactly [0, T0) of the source, every version
            before = [c for row in source.scan(TABLE, time_range=(0, copied["watermark"]))
                      for c in row]
        assert copied["cells"] == len(before)
        with t2(dst) as target:
            assert sorted(c for row in target.scan(TABLE) for c in row) == sorted(before)

        replay(spec)  # what came after T0
        result = validate(spec, recompare_wait=5).to_json()
        assert result["verdict"] == "match", result
        table, = result["tables"]
        assert table["ranges"] == table["ranges_matching"] == len(ranges)
        assert compare(src, dst, TABLE).equal
        with Ledger.open(spec.ledger_url) as ledger:
            rows = ledger.last_validations(1)
        assert sorted(KeyRange(TABLE, v.range_start, v.range_end) for v in rows) == ranges
        assert all(v.verdict is Verdict.MATCH and v.source_digest == v.target_digest
                   for v in rows)
        gx_result = Path(rows[0].gx_result or "")
        assert json.loads(gx_result.read_text())["success"] is True
        docs = Path(rows[0].data_docs or "")
        assert docs.is_file() and docs.is_relative_to(spec.artifact_dir)
        assert "https://cdn" not in docs.read_text() and "unpkg.com" not in docs.read_text()


def test_a_copy_killed_mid_job_reruns_only_the_missing_ranges(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    # through the gateways: the target's Thrift2 gateway stalls the puts the job is killed in
    src, dst = make_embedded.pair()
    run_workload(src, TABLE, seed=33, ops=500)
    # the pass that plans copies the first two ranges or so, then a range at a time
    config = configure(tmp_path, src, dst, master="in-process", plan_copy_cells=2 * BUDGET)
    spec = load_config(config)
    prepare(spec)
    cli = [sys.executable, "-m", "hbase_migrate", "snapshot", "--config", str(config),
           "--json"]

    def copied() -> int:
        if not (tmp_path / "ledger.db").exists():
            return 0
        with Ledger.open(spec.ledger_url) as ledger:
            return sum(r.copied_at is not None for r in ledger.key_ranges(1))
    gateway = dst.thrift2_handler
    assert gateway is not None
    stall = StallWhenCopied(gateway, copied, 2)
    gateway.call_sizes = stall  # type: ignore[assignment]
    job = subprocess.Popen(cli, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for(stall.stalled.is_set, 120, "a put after two copied ranges")
    job.send_signal(signal.SIGKILL)
    job.wait(30)
    gateway.call_sizes, gateway.stall_calls = collections.deque(), 0
    done_before = copied()
    ranges = planned(config)  # the regions whose pass ended (it records as each ends)
    assert 2 <= done_before <= len(ranges)

    out = subprocess.run(cli, capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    rerun = json.loads(out.stdout)
    assert rerun["ranges_skipped"] == done_before
    # the regions the killed pass had not finished are planned by the rerun
    whole = planned(config)
    assert set(ranges) <= set(whole) and done_before < len(whole)  # killed mid-job
    assert rerun["ranges_copied"] == len(whole) - done_before == len(rerun["copied"])
    assert all(r.copied_at is not None for r in
               Ledger.open(spec.ledger_url).key_ranges(1))
    with t2(src) as source, t2(dst) as target:
        expect = sorted(c for row in source.scan(TABLE, time_range=(0, rerun["watermark"]))
                        for c in row)
        assert sorted(c for row in target.scan(TABLE) for c in row) == expect


def test_divergences_are_named_by_range_and_repaired(
        spark: Any, tmp_path: Path, zookeeper: ZooKeeperServer) -> None:
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        run_workload(src, TABLE, seed=34, ops=400)
        config = configure(tmp_path, src, dst)
        spec = load_config(config)
        prepare(spec)
        snapshot(spec)
        ranges = planned(config)
        with t2(src) as source:
            rows = [r for r in source.scan(TABLE) if len(r) > 1]
            changed, versioned = rows[len(rows) // 2][0], rows[-1][0]
            # Cells the target never got (a tombstone written on the target would hide any
            # repair until a major compaction, in HBase as here): an old-timestamp cell, and
            # the row ("ab", "c") whose boundary the target shifts to ("a", "bc").
            gone = Cell(rows[0][0].row, b"d", b"missing", 3, CellType.PUT, b"m")
            source.put_cells(TABLE, [gone, Cell(b"row-zab", b"d", b"c", 7, CellType.PUT, b"v")])
        host, port = (dst.endpoints.thrift or "").rsplit(":", 1)
        hb = happybase.Connection(host, int(port))
        try:
            target = hb.table(TABLE)
            target.put(changed.row, {changed.family + b":" + changed.qualifier: b"changed!"},
                       timestamp=changed.timestamp)  # a changed value
            target.put(versioned.row, {versioned.family + b":" + versioned.qualifier: b"x"},
                       timestamp=versioned.timestamp + 1)  # an extra version
            target.put(b"row-00000-extra", {b"d:e": b"extra"}, timestamp=5)  # an extra row
            target.put(b"row-za", {b"d:bc": b"v"}, timestamp=7)  # the boundary shifted
        finally:
            hb.close()
        expected = holding(ranges, gone.row, changed.row, versioned.row, b"row-00000-extra",
                           b"row-zab", b"row-za")

        found = validate(spec, recompare_wait=0).to_json()
        assert found["verdict"] == "mismatch"
        assert failing(found) == expected
        differences = [d for t in found["tables"] for m in t["mismatched"]
                       for d in m["differences"]]
        assert any("different value" in d and repr(changed.row)[2:-1] in d
                   for d in differences), differences

        fixed = validate(spec, repair=True, recompare_wait=0).to_json()
        assert fixed["verdict"] == "match", fixed
        repaired = {f"{r['table']}:{r['start']}-{r['stop']}" for t in fixed["tables"]
                    for r in t["repaired"]}
        assert repaired == expected
        assert compare(src, dst, TABLE).equal  # the cell-for-cell comparison agrees
        with Ledger.open(spec.ledger_url) as ledger:
            recorded = ledger.repairs(1)
        assert {KeyRange(TABLE, r.range_start, r.range_end).id for r in recorded} == expected
        assert all(r.verdict is Verdict.MATCH for r in recorded)
        assert sum(r.puts for r in recorded) == 3  # missing, changed, shifted
        assert sum(r.deletes for r in recorded) == 3  # extra version, extra row, shifted


def test_writes_during_validation_are_cleared_by_the_recompare(
        spark: Any, tmp_path: Path, zookeeper: ZooKeeperServer) -> None:
    """One write after the last replay (the first pass must see it), one while the first
    pass runs; replay catches up after the first pass, and the recompare reports neither."""
    wal = WalSettings(region_servers=1, roll_period=1.0)
    with clusters_over_rpc(tmp_path, zookeeper, wal=wal) as (src, dst):
        run_workload(src, TABLE, seed=35, ops=200)
        config = configure(tmp_path, src, dst)
        spec = load_config(config)
        prepare(spec)
        snapshot(spec)
        replay(spec)
        with t2(src) as source:  # written after the last replay: the target lacks it
            source.put_cells(TABLE, [Cell(b"row-00100", b"d", b"late", int(time.time() * 1000),
                                          CellType.PUT, b"late")])
        replays: list[threading.Thread] = []
        written: list[bool] = []

        def during_validation(done: int, total: int) -> None:
            if not written:  # a write while the first pass runs
                written.append(True)
                with t2(src) as source:
                    source.put_cells(TABLE, [Cell(b"row-00101", b"d", b"during",
                                                  int(time.time() * 1000), CellType.PUT, b"d")])
            if done == total and not replays:  # replay catches up after the first pass
                replays.append(threading.Thread(target=replay, args=(spec,)))
                replays[0].start()

        result = validate(spec, recompare_wait=120, progress=during_validation).to_json()
        replays[0].join()
        assert result["verdict"] == "match", result
        assert not result["tables"][0]["mismatched"]
        assert result["recompare"]["note"].startswith("a replay run started after")
        assert compare(src, dst, TABLE).equal
        with Ledger.open(spec.ledger_url) as ledger:
            rows = ledger.last_validations(1)
        late = [v for v in rows if KeyRange(TABLE, v.range_start, v.range_end)
                .contains(b"row-00100")]
        assert [(v.verdict, v.recompare_verdict) for v in late] == [
            (Verdict.MISMATCH, Verdict.MATCH)]
        assert all(v.final_verdict is Verdict.MATCH for v in rows)


def test_bulk_loads_and_skip_wal_writes_are_caught_and_repaired(
        spark: Any, tmp_path: Path, zookeeper: ZooKeeperServer) -> None:
    wal = WalSettings(region_servers=1, roll_period=1.0)
    with clusters_over_rpc(tmp_path, zookeeper, wal=wal) as (src, dst):
        run_workload(src, TABLE, seed=36, ops=200)
        config = configure(tmp_path, src, dst)
        spec = load_config(config)
        prepare(spec)
        snapshot(spec)
        now = int(time.time() * 1000)
        bulk = [Cell(b"row-00%d50-bulk" % i, b"d", b"b", now, CellType.PUT, b"B")
                for i in range(1, 3)]
        assert src.region_servers is not None
        src.region_servers.bulk_load(TABLE, bulk)
        # another region than the bulk load (the workload splits at row-00500)
        skip = hbase2.TPut(row=b"row-00700-skip", columnValues=[hbase2.TColumnValue(
            family=b"d", qualifier=b"s", value=b"S", timestamp=now)],
            durability=hbase2.TDurability.SKIP_WAL)
        with t2(src) as source:
            source._call("put", lambda c: c.put(TABLE.encode(), skip))
        replayed = replay(spec).to_json()
        assert [b["table"] for b in replayed["bulk_loads"]] == [TABLE]
        ranges = planned(config)

        found = validate(spec, recompare_wait=0).to_json()
        assert found["verdict"] == "mismatch"
        assert failing(found) == holding(ranges, b"row-00700-skip", *(c.row for c in bulk))

        fixed = validate(spec, repair=True, recompare_wait=0).to_json()
        assert fixed["verdict"] == "match", fixed
        (recopied,) = fixed["bulk_loads_recopied"]
        assert recopied["puts"] == len(bulk)
        assert compare(src, dst, TABLE).equal
        with Ledger.open(spec.ledger_url) as ledger:
            reasons = sorted(r.reason for r in ledger.repairs(1))
        assert reasons == ["bulk_load", "mismatch"]
