"""The range engine with real Apache HBase 2.6.1 as the source (the session's one JVM) and the
embedded cluster as the target, range tasks in-process: prepare, snapshot copy and validate
agree cell for cell; then writes the WAL never carried (an admin bulk load, a Thrift2 put
with durability SKIP_WAL) are named by range by validate and fixed by ``validate --repair``."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.config import IN_PROCESS, load_config
from hbase_migrate.lifecycle import prepare, replay, snapshot, validate
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.thrift.thrift2_idl import hbase2
from hbase_migrate.validate.compare import compare_tables
from hbase_migrate.wal.model import Cell, CellType
from minihbase.workload import SPLITS, Workload, WorkloadSpec
from realstack.hbase import RealHBase
from stackprocs.admin_client import call_admin
from tests.support.minicluster import EmbeddedClusters
from tests.support.ranges import failing, holding, planned

pytestmark = [pytest.mark.integration, pytest.mark.realstack]
TABLE = "ranges_real"
BUDGET = 150  # cells per range: several ranges a region


def configure(folder: Path, source: Path, target: Path, table: str = TABLE,
              target_table: str | None = None, admin_shell: str | None = None,
              target_client: str | None = None) -> Path:
    path = folder / "migration.toml"
    shell = f'admin_shell = "{admin_shell}"\n' if admin_shell else ""
    shell += f'client = "{target_client}"\n' if target_client else ""
    path.write_text(
        f'[migration]\nname = "mig"\nledger = "sqlite:///{folder / "ledger.db"}"\n'
        f'[source]\ncluster_json = "{source}"\n[target]\ncluster_json = "{target}"\n{shell}'
        f'[[tables]]\nsource = "{table}"\ntarget = "{target_table or table}"\n'
        f'[replay]\nroll_period = "1h"\nmargin = "1m"\n'
        f'[spark]\nmaster = "{IN_PROCESS}"\n[ranges]\nmax_cells = {BUDGET}\n'
        '[snapshot]\nmethod = "scan"\n',  # these tests are about the key ranges
        encoding="utf-8")
    return path


def run_workload(cluster: ClusterEndpoints, seed: int, ops: int,
                 rate: float | None = None, table: str = TABLE) -> None:
    runner = Workload(cluster, WorkloadSpec(table, seed, ops, rate=rate))
    try:
        runner.ensure_table()  # pre-split: several real regions
        runner.run()
    finally:
        runner.close()


def every_version(address: str) -> list[Any]:
    with Thrift2Client(address) as client:
        return sorted(c for row in client.scan(TABLE) for c in row)


def test_copy_validate_bulk_load_and_skip_wal_on_real_hbase(
        real_hbase: RealHBase, tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    real = ClusterEndpoints.from_json(real_hbase.described)
    assert real.thrift2 is not None
    run_workload(real, seed=41, ops=300)
    dst = make_embedded("target", folder=tmp_path / "dst")
    assert dst.endpoints.thrift2 is not None
    spec = load_config(configure(tmp_path, real_hbase.cluster_json,
                                 dst.write_cluster_json()))
    prepare(spec)
    live = threading.Thread(target=run_workload, args=(real, 42, 150, 300.0))
    live.start()  # puts and every kind of delete while the copy runs, after T0
    copied = snapshot(spec).to_json()
    live.join()
    ranges = planned(spec)
    assert copied["ranges"] == len(ranges) == copied["ranges_copied"] > 2
    with Thrift2Client(real.thrift2) as source:
        regions = source.regions(TABLE)
    assert [r.start_key for r in regions] == [b"", *SPLITS]
    for r in ranges:  # each range inside one real region
        assert any(g.start_key <= r.start and (not g.end_key or b"" < r.stop <= g.end_key)
                   for g in regions), r
    # The live workload back-dates some writes (timestamps up to 5 s old) and deletes
    # older versions after T0, so what the source shows at [0, T0) afterwards is not what
    # the copy could see; the copy holds only timestamps before T0, and replay (from
    # T0 - margin) makes the target exact: the validation below proves it.
    copied_cells = every_version(dst.endpoints.thrift2)
    assert copied["cells"] == len(copied_cells) > 0
    assert all(c.timestamp < copied["watermark"] for c in copied_cells)

    call_admin(real_hbase.cluster_json, "roll")
    caught_up = replay(spec).to_json()  # what came after T0, from the real WALs
    assert caught_up["cells"].get("Put", 0) > 0 and len(caught_up["cells"]) > 1, caught_up[
        "cells"]  # puts and deletes
    matched = validate(spec, recompare_wait=0).to_json()
    assert matched["verdict"] == "match", matched

    # Writes the WAL never carried: a bulk load (only a BULK_LOAD marker in the WAL),
    # and a SKIP_WAL put into the other region.
    now = int(time.time() * 1000)
    bulk = [b"row-00150-bulk", b"row-00250-bulk"]
    call_admin(real_hbase.cluster_json, "bulk-load", {"table": TABLE, "cells": [
        {"row": row.decode(), "family": "d", "qualifier": "b", "timestamp": now,
         "value": "B"} for row in bulk]})
    skip = hbase2.TPut(row=b"row-00700-skip", columnValues=[hbase2.TColumnValue(
        family=b"d", qualifier=b"s", value=b"S", timestamp=now)],
        durability=hbase2.TDurability.SKIP_WAL)
    with Thrift2Client(real.thrift2) as source:
        source._call("put", lambda c: c.put(TABLE.encode(), skip))
    call_admin(real_hbase.cluster_json, "roll")  # the marker in a closed WAL
    replayed = replay(spec).to_json()
    assert [b["table"] for b in replayed["bulk_loads"]] == [TABLE], replayed["bulk_loads"]

    found = validate(spec, recompare_wait=0).to_json()
    assert found["verdict"] == "mismatch"
    assert failing(found) == holding(ranges, b"row-00700-skip", *bulk)
    differences = " ".join(d for t in found["tables"] for m in t["mismatched"]
                           for d in m["differences"])
    assert all(row.decode() in differences for row in (b"row-00700-skip", *bulk)), differences

    fixed = validate(spec, repair=True, recompare_wait=0).to_json()
    assert fixed["verdict"] == "match", json.dumps(fixed, indent=1, default=str)
    (recopied,) = fixed["bulk_loads_recopied"]
    assert recopied["puts"] == len(bulk)
    with Thrift2Client(real.thrift2) as src, Thrift2Client(dst.endpoints.thrift2) as tgt:
        assert compare_tables(src, tgt, TABLE).equal  # cell for cell, every version
    with Ledger.open(spec.ledger_url) as ledger:
        reasons = sorted(r.reason for r in ledger.repairs(1))
    assert reasons == ["bulk_load", "mismatch"]


def test_divergences_on_a_real_target_are_named_and_repaired(real_hbase: RealHBase,
                                                            tmp_path: Path) -> None:
    """Source and target tables on the one real cluster: a changed value, an extra version
    and an extra row on the target, a cell the target never got; validate names exactly
    their ranges, and the repair's puts and exact-version deletes on real HBase fix them."""
    source_table, target_table = "ranges_div", "ranges_div_copy"
    real = ClusterEndpoints.from_json(real_hbase.described)
    assert real.thrift2 is not None
    run_workload(real, seed=43, ops=200, table=source_table)
    spec = load_config(configure(tmp_path, real_hbase.cluster_json, real_hbase.cluster_json,
                                 source_table, target_table))
    prepare(spec)
    snapshot(spec)
    with Ledger.open(spec.ledger_url) as ledger:
        ranges = [KeyRange(source_table, r.range_start, r.range_end)
                  for r in ledger.key_ranges(1)]
    with Thrift2Client(real.thrift2) as client:
        rows = [r for r in client.scan(source_table) if len(r) > 1]
        changed, versioned = rows[len(rows) // 2][0], rows[-1][0]
        gone = Cell(rows[0][0].row, b"d", b"missing", 3, CellType.PUT, b"m")
        client.put_cells(source_table, [gone])
        client.put_cells(target_table, [
            changed._replace(value=b"changed!"),
            versioned._replace(timestamp=versioned.timestamp + 1, value=b"x"),
            Cell(b"row-00000-extra", b"d", b"e", 5, CellType.PUT, b"extra")])
    expected = {next(r.id for r in ranges if r.contains(row)) for row in
                (gone.row, changed.row, versioned.row, b"row-00000-extra")}

    found = validate(spec, recompare_wait=0).to_json()
    assert found["verdict"] == "mismatch"
    assert {f"{m['table']}:{m['start']}-{m['stop']}" for t in found["tables"]
            for m in t["mismatched"]} == expected
    fixed = validate(spec, repair=True, recompare_wait=0).to_json()
    assert fixed["verdict"] == "match", json.dumps(fixed, indent=1, default=str)
    with Thrift2Client(real.thrift2) as client:
        assert compare_tables(client, client, source_table, target_table).equal
    with Ledger.open(spec.ledger_url) as ledger:
        recorded = ledger.repairs(1)
    assert (sum(r.puts for r in recorded), sum(r.deletes for r in recorded)) == (2, 2)


def test_repair_past_delete_markers_on_a_real_target(real_hbase: RealHBase,
                                                    tmp_path: Path) -> None:
    """Real HBase 2.6 as the specification of the repair past delete markers: a cell deleted
    with a newer tombstone and a row deleted on the target stay hidden after the repair's
    puts; the repair asks the Thrift1 gateway's majorCompact, which reaches Admin.compact
    (a policy-selected compaction that leaves a lone store file and the memstore alone), so
    within the wait they stay hidden and are named with the shell command; the changed value
    is repaired."""
    source_table, target_table = "tomb_src", "tomb_dst"
    real = ClusterEndpoints.from_json(real_hbase.described)
    assert real.thrift2 is not None
    spec = load_config(configure(tmp_path, real_hbase.cluster_json, real_hbase.cluster_json,
                                 source_table, target_table))
    with Thrift2Client(real.thrift2) as client:
        client.create_table(TableDescriptor(source_table, (FamilyDescriptor(b"d"),)))
        client.put_cells(source_table, [Cell(b"r%02d" % i, b"d", q, 1000 + i, CellType.PUT,
                                             b"v%d" % i) for i in range(10) for q in (b"a", b"b")])
    prepare(spec)
    snapshot(spec)
    with Thrift2Client(real.thrift2) as client:
        client.write_cells(target_table, [
            Cell(b"r02", b"d", b"a", 5000, CellType.DELETE_COLUMN, b""),   # newer tombstone
            Cell(b"r05", b"d", b"", 5000, CellType.DELETE_FAMILY, b"")])    # the row deleted
        client.put_cells(target_table, [Cell(b"r08", b"d", b"b", 1008, CellType.PUT, b"x")])
    call_admin(real_hbase.cluster_json, "flush", {"table": target_table})  # an old marker
    hidden = {"row=r02 column=d:a ts=1002", "row=r05 column=d:a ts=1005",
              "row=r05 column=d:b ts=1005"}

    began = time.monotonic()
    fixed = validate(spec, repair=True, recompare_wait=0, compact_wait=3).to_json()
    assert time.monotonic() - began < 30
    (repaired,) = fixed["tables"][0]["repaired"]
    tombs = repaired["tombstones"]
    assert set(tombs["hidden"]) == hidden and tombs["regions"], tombs
    assert set(tombs["still_hidden"]) == hidden  # the gateway's compaction did not drop them
    assert any("flush 'tomb_dst'; major_compact 'tomb_dst'" in a for a in repaired["actions"])
    with Thrift2Client(real.thrift2) as client:
        result = compare_tables(client, client, source_table, target_table)
    assert (result.only_in_source, result.only_in_target, result.different_values) == (3, 0, 0)

    # With an admin shell (realstack's stand-in for `hbase shell -n`): flushed and
    # major-compacted through it, the markers go and the cells show: the target equals the
    # source.
    shell = f"{sys.executable} -m realstack.shell {real_hbase.cluster_json}"
    spec = load_config(configure(tmp_path, real_hbase.cluster_json, real_hbase.cluster_json,
                                 source_table, target_table, admin_shell=shell))
    fixed = validate(spec, repair=True, recompare_wait=0, compact_wait=30).to_json()
    (repaired,) = fixed["tables"][0]["repaired"]
    tombs = repaired["tombstones"]
    assert set(tombs["hidden"]) == hidden and tombs["shell"] == shell, tombs
    assert tombs["still_hidden"] == [], tombs
    assert any("run through the admin shell" in a for a in repaired["actions"])
    with Thrift2Client(real.thrift2) as client:
        assert compare_tables(client, client, source_table, target_table).equal

    # A target whose client is native: no Thrift1, no shell; its table flushed and
    # major-compacted over HBase's own RPC, waited for, before the first put.
    with Thrift2Client(real.thrift2) as client:
        client.write_cells(target_table, [
            Cell(b"r03", b"d", b"b", 6000, CellType.DELETE_COLUMN, b""),
            Cell(b"r06", b"d", b"", 6000, CellType.DELETE_FAMILY, b"")])
    call_admin(real_hbase.cluster_json, "flush", {"table": target_table})
    spec = load_config(configure(tmp_path, real_hbase.cluster_json, real_hbase.cluster_json,
                                 source_table, target_table, target_client="native"))
    fixed = validate(spec, repair=True, recompare_wait=0, compact_wait=30).to_json()
    (repaired,) = fixed["tables"][0]["repaired"]
    tombs = repaired["tombstones"]
    assert set(tombs["hidden"]) == {"row=r03 column=d:b ts=1003", "row=r06 column=d:a ts=1006",
                                    "row=r06 column=d:b ts=1006"}, tombs
    assert tombs["native"] and tombs["shell"] is None and tombs["still_hidden"] == [], tombs
    assert any("over HBase's own RPC" in a for a in repaired["actions"])
    with Thrift2Client(real.thrift2) as client:
        assert compare_tables(client, client, source_table, target_table).equal
