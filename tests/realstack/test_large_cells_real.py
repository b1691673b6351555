"""Issue 29 on real Apache HBase 2.6.1 (the session's JVM): a table of about 270 MB in cells
of 3-9.9 MB with several versions, and a row of 50 MB over 500 columns. ``snapshot``,
``replay`` and ``validate`` finish and the target (the embedded cluster: replay's writes to
a table of the same cluster would land in the very WALs it reads) equals the source cell
for cell; a copy of the wide row and two rows of large cells, run
alone in a child process, stays within a bounded memory (its peak is printed).

It writes about 320 MB into the in-JVM HDFS and reads it back several times: about a minute
on 2 cores (`-s` prints the figures)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.config import IN_PROCESS, load_config
from hbase_migrate.lifecycle import prepare, replay, snapshot, validate
from hbase_migrate.replay.discovery import open_wal_store
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.validate.compare import compare_tables
from hbase_migrate.wal.model import Cell, CellType
from realstack.hbase import RealHBase
from stackprocs.admin_client import call_admin
from tests.support.minicluster import EmbeddedClusters
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.realstack]
SOURCE, TARGET, SCRATCH = "bigcells", "bigcells_copy", "bigcells_mem"
MB = 1_000_000
WIDE = b"row-wide"
SPLIT = b"row-big-07"
ROOT = Path(__file__).resolve().parents[2]


def value(seed: int, size: int) -> bytes:
    return random.Random(seed).randbytes(size)


def big_cells(start_ts: int) -> list[tuple[bytes, bytes, int, int, int]]:
    """(row, qualifier, timestamp, seed, size): 14 rows x 3 versions of 3-9.9 MB."""
    rng = random.Random(29)
    return [(b"row-big-%02d" % r, b"doc", start_ts + v, r * 10 + v,
             rng.randrange(3 * MB, 9_900_000)) for r in range(14) for v in range(3)]


def configure(folder: Path, cluster_json: Path, target_json: Path) -> Path:
    path = folder / "migration.toml"
    path.write_text(
        f'[migration]\nname = "bigcells"\nledger = "sqlite:///{folder / "ledger.db"}"\n'
        f'[source]\ncluster_json = "{cluster_json}"\n[target]\ncluster_json = "{target_json}"\n'
        f'[[tables]]\nsource = "{SOURCE}"\ntarget = "{TARGET}"\n'
        f'[replay]\nroll_period = "1h"\nmargin = "1s"\n'
        f'[spark]\nmaster = "{IN_PROCESS}"\n[ranges]\nmax_cells = 200\n', encoding="utf-8")
    return path


def rolled_and_archived(spec: Any, since: int) -> bool:
    """Whether each server writes a WAL created at ``since`` or later, its only one in
    ``WALs/`` (meta WALs aside): the roll (asynchronous in HBase 2: the RPC only asks the
    log roller) happened and the rolled WALs were archived. A rolled WAL HBase has not
    closed yet is known to the NameNode by a prefix only, and the replay's WebHDFS OPEN past
    that prefix (the trailer lookup of a WAL larger than its first read) is refused
    ("Offset=... out of the range"): a WAL-reading issue of its own, kept out of this test
    by waiting."""
    live = [f for f in open_wal_store(spec.source).list_wal_files()
            if f.state == "live" and ".meta" not in f.name]
    servers = {f.server for f in live}
    return bool(live) and len(live) == len(servers) and all(
        (f.timestamp or 0) >= since for f in live)


COPY_ALONE = """
import json, sys, time, tracemalloc
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.ranges.copy import copy_range

def high_water_kib():  # VmHWM: this process's peak RSS (ru_maxrss counts the parent's)
    with open("/proc/self/status") as status:
        return int(next(l for l in status if l.startswith("VmHWM")).split()[1])

address, source, target, start = sys.argv[1:]
base = high_water_kib()
tracemalloc.start()
began = time.monotonic()
with Thrift2Client(address) as src, Thrift2Client(address) as dst:
    stats = copy_range(src, dst, source, target, start.encode())
traced = tracemalloc.get_traced_memory()[1]
print(json.dumps({"rows": stats.rows, "cells": stats.cells, "traced_peak": traced,
                  "peak_rss_kib": high_water_kib(), "rss_before_kib": base,
                  "seconds": time.monotonic() - began}))
"""


def test_multi_mb_cells_and_a_50_mb_row_are_copied_replayed_and_validated(
        real_hbase: RealHBase, tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    real = ClusterEndpoints.from_json(real_hbase.described)
    assert real.thrift2 is not None
    figures: dict[str, float] = {}
    began = time.monotonic()
    ts = int(time.time() * 1000) - 60_000
    family = (FamilyDescriptor(b"d", max_versions=3),)
    with Thrift2Client(real.thrift2, timeout=60.0) as client:
        for table in (SOURCE, SCRATCH):
            if client.table_exists(table):
                client.disable_table(table)
                client.delete_table(table)
        client.create_table(TableDescriptor(SOURCE, family), [SPLIT])
        client.create_table(TableDescriptor(SCRATCH, family))
        written = 0
        for row, qualifier, t, seed, size in big_cells(ts):
            client.put_cells(SOURCE, [Cell(row, b"d", qualifier, t, CellType.PUT,
                                           value(seed, size))])
            written += size
        assert written >= 250 * MB
        wide = [Cell(WIDE, b"d", b"c%04d" % q, ts, CellType.PUT, value(10_000 + q, 100_000))
                for q in range(500)]  # 50 MB in one row
        client.put_cells(SOURCE, wide)
        written += 50 * MB
    figures["write_s"] = time.monotonic() - began
    time.sleep(2)  # the copy's watermark after every write above, beyond the 1 s margin

    dst = make_embedded("target", folder=tmp_path / "dst")
    spec = load_config(configure(tmp_path, real_hbase.cluster_json,
                                 dst.write_cluster_json()))
    prepare(spec)
    t = time.monotonic()
    copied = snapshot(spec).to_json()
    figures["snapshot_s"] = time.monotonic() - t
    assert copied["cells"] == 42 + 500 and copied["ranges"] == copied["ranges_copied"] >= 2

    # after the watermark: a new 9.9 MB version, a deleted version, a new wide column
    later = [Cell(b"row-big-03", b"d", b"doc", ts + 10, CellType.PUT, value(1, 9_900_000)),
             Cell(b"row-big-05", b"d", b"doc", ts + 1, CellType.DELETE, b""),
             Cell(WIDE, b"d", b"c9999", ts + 10, CellType.PUT, value(2, 5 * MB))]
    with Thrift2Client(real.thrift2, timeout=60.0) as client:
        client.write_cells(SOURCE, later)
    call_admin(real_hbase.cluster_json, "flush")  # rolled WALs can then be archived
    rolled_at = int(time.time() * 1000)
    call_admin(real_hbase.cluster_json, "roll")
    wait_for(lambda: rolled_and_archived(spec, rolled_at), 120, "the WAL roll and archiving",
             every=0.2)
    t = time.monotonic()
    caught_up = replay(spec).to_json()
    figures["replay_s"] = time.monotonic() - t
    assert caught_up["cells"].get("Put", 0) >= 2 and caught_up["cells"].get("Delete") == 1, \
        caught_up["cells"]

    t = time.monotonic()
    checked = validate(spec, recompare_wait=0).to_json()
    figures["validate_s"] = time.monotonic() - t
    assert checked["verdict"] == "match", json.dumps(checked, default=str)[:2000]
    assert dst.endpoints.thrift2 is not None
    with Thrift2Client(real.thrift2, timeout=60.0) as src, \
            Thrift2Client(dst.endpoints.thrift2, timeout=60.0) as copy:
        result = compare_tables(src, copy, SOURCE, TARGET)
    assert result.equal, result.examples
    # 42 large versions (row-big-03 shows 3 of its 4: as many as before; one of
    # row-big-05's deleted) and 501 wide columns
    assert result.source_cells == 42 - 1 + 501, result.to_json()

    # one range copy alone: two rows of large cells and the 50 MB row
    t = time.monotonic()
    done = subprocess.run([sys.executable, "-c", COPY_ALONE, real.thrift2, SOURCE, SCRATCH,
                           "row-big-12"], capture_output=True, text=True, timeout=600,
                          cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    alone = json.loads(done.stdout.strip().splitlines()[-1])
    figures.update(copy_alone_s=time.monotonic() - t, **{
        k: alone[k] for k in ("traced_peak", "peak_rss_kib", "rss_before_kib")})
    figures["total_s"] = time.monotonic() - began
    print(f"\nissue 29 figures: {json.dumps(figures)}")
    assert alone["cells"] == 6 + 501 and alone["rows"] == 3
    # about 90 MB copied: the Python heap stays within a few budgets (4 MiB scan calls,
    # two queued and one pending put batch of 4 MiB, one cell of up to 9.9 MB twice)
    assert alone["traced_peak"] < 64 * 2**20, alone

    with Thrift2Client(real.thrift2, timeout=60.0) as client:
        for table in (SOURCE, SCRATCH):
            client.disable_table(table)
            client.delete_table(table)
