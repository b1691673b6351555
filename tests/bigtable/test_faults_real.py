"""From real HBase 2.6.1 to the Bigtable emulator under faults: a live writer (puts and every
delete type) through the copy and the replay, a source region split while the copy runs, a
source region server killed before the replay (its WALs split and archived by the master),
families keeping versions and one with a TTL holding expired cells. The end is judged by
Google's Python client, HBase's retention rules applied by the test, against what HBase's
own Java client reads from the source. The source is the shared ``native_hbase``, reached
over HBase's RPC alone (a region server it kills is replaced after the module)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate import lifecycle
from hbase_migrate.bigtable.emulator import Emulator
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.config import IN_PROCESS, load_config
from hbase_migrate.lifecycle.check import check
from hbase_migrate.rpc.admin import NativeAdmin
from hbase_migrate.rpc.client import NativeClient
from hbase_migrate.wal.model import Cell, CellType
from realstack.hbase import RealHBase
from stackprocs.admin_client import call_admin
from tests.bigtable.classic import google_table
from tests.realstack.fixtures import REAL_HBASE_VERSION, native_cluster_json, split_mid_copy
from tests.realstack.java_cells import java_dump
from tests.realstack.lifecycle_parts import (
    FAMILIES,
    SPLITS,
    LiveWriter,
    history,
    kill_a_table_server,
    row,
)

pytestmark = [pytest.mark.own_stack, pytest.mark.integration, pytest.mark.realstack,
              pytest.mark.filterwarnings("ignore:Connecting to Bigtable emulator")]
TABLE = "bt_faults"
ROWS = 300
SPLIT_AT = b"row-0250"  # the source region split while the copy runs
HOUR = 3_600_000
TTL = FamilyDescriptor(b"t", max_versions=1, ttl=3600)
# (VERSIONS, TTL in ms or None) by family, as the test states HBase keeps them
RULES = {b"f": (5, None), b"g": (3, None), b"t": (1, HOUR)}


@pytest.fixture(scope="module")
def source(native_hbase: RealHBase) -> RealHBase:
    """The shared stack of HBase's RPC alone (test_lifecycle_native_real's target too): the
    test kills one of its region servers, which the fixture replaces after the module."""
    return native_hbase


def load(source: RealHBase) -> int:
    """The table (split at SPLITS) with ``history`` in ``f`` and ``g``, and in ``t`` a cell
    of each of the first 40 rows, those of rows 30 to 39 older than its TTL; its time."""
    d = source.described
    with NativeAdmin(d["zookeeper"], d["znode_parent"]) as admin:
        admin.create_table(TableDescriptor(TABLE, (*FAMILIES, TTL)), SPLITS)
    now = int(time.time() * 1000)
    old = now - 60_000
    aged = [Cell(row(i), b"t", b"q", now - (2 * HOUR if i >= 30 else 0), CellType.PUT,
                 b"t%d" % i) for i in range(40)]
    with NativeClient(d["zookeeper"], d["znode_parent"]) as client:
        client.write(TABLE, history(range(ROWS), old) + aged)
    return old


def as_hbase_reads(config: Path, now: int) -> set[tuple[bytes, bytes, bytes, int, bytes]]:
    """Every cell Bigtable holds, read with Google's client, kept as HBase would return it
    by :data:`RULES` (newest first per column: at most VERSIONS, none older than the TTL)."""
    kept: set[tuple[bytes, bytes, bytes, int, bytes]] = set()
    for found in google_table(config, TABLE).read_rows():
        for family, qualifiers in found.cells.items():
            versions, ttl = RULES[family.encode()]
            for qualifier, cells in qualifiers.items():
                newest = sorted(((int(c.timestamp.timestamp() * 1000 + 0.5), c.value)
                                 for c in cells), reverse=True)[:versions]
                kept.update((found.row_key, family.encode(), qualifier, ts, value)
                            for ts, value in newest if ttl is None or ts >= now - ttl)
    return kept


def configure(folder: Path, source: RealHBase, emulator: Emulator) -> Path:
    path = folder / "migration.toml"
    path.write_text(
        f'[migration]\nname = "real-to-bigtable"\nledger = "sqlite:///{folder / "l.db"}"\n'
        f'[source]\ncluster_json = "{native_cluster_json(source, folder)}"\n'
        f'[[tables]]\nsource = "{TABLE}"\n'
        f'[target]\nkind = "bigtable"\nproject = "proj"\ninstance = "real-faults"\n'
        f'emulator_host = "{emulator.host}"\n'
        f'[replay]\nroll_period = "1h"\nmargin = "1m"\n'
        f'[spark]\nmaster = "{IN_PROCESS}"\n'
        f'[ranges]\nmax_cells = 400\nplan_copy_cells = 1\n'  # ranges copied one by one
        f'[limits]\nreplay_cells_per_second = 400\n',  # the kill lands mid-replay
        encoding="utf-8")
    return path


def test_a_live_real_source_split_and_killed_ends_on_bigtable_as_hbase_reads_it(
        source: RealHBase, tmp_path: Path, bigtable_emulator: Emulator) -> None:
    began = time.monotonic()
    old = load(source)
    config = configure(tmp_path, source, bigtable_emulator)
    spec = load_config(config)
    checked = check(spec).metrics["preflight"]
    assert (checked["refused"], checked["rows_sampled"]) == ([], ROWS)
    assert lifecycle.prepare(spec).passed
    d = source.described
    writer = LiveWriter(source, TABLE, old)
    writer.start()
    progress, split = split_mid_copy(source, TABLE, SPLIT_AT)  # a source region splits
    faults: dict[str, Any] = {}
    try:
        copied = lifecycle.snapshot(spec, progress=progress).metrics
        assert split == [len(SPLITS) + 2] and copied["cells"] > 0
        with NativeClient(d["zookeeper"], d["znode_parent"], max_backoff=1.0) as client:
            # during the replay, a region server holding part of the table dies
            def strike() -> None:
                time.sleep(0.5)
                faults["killed"] = kill_a_table_server(source, client, TABLE)
                faults["at"] = time.monotonic()

            striker = threading.Thread(target=strike)
            striker.start()
            first = lifecycle.replay(spec).to_json()
            faults["mid_replay"] = time.monotonic()
            striker.join()
            faults["mid_replay"] = faults["at"] < faults["mid_replay"]
    finally:
        writer.stop()
    assert first["exit_code"] == 0, first
    assert faults["killed"]
    call_admin(source.cluster_json, "roll")
    caught_up = lifecycle.replay(spec).to_json()  # the writer's last rounds
    assert caught_up["exit_code"] == 0, caught_up
    kinds = set(first["cells"]) | set(caught_up["cells"])
    assert {"Put", "Delete", "DeleteColumn", "DeleteFamily", "DeleteFamilyVersion"} <= kinds

    verdict = lifecycle.validate(spec, recompare_wait=0).metrics
    assert (verdict["verdict"], verdict["differing"]) == ("match", [])
    expected = {(c.row, c.family, c.qualifier, c.timestamp, c.value)
                for c in java_dump(d, TABLE).visible}
    assert {c[0] for c in expected if c[1] == b"t"} == {row(i) for i in range(30)}
    assert len(expected) > 1000 and as_hbase_reads(config, int(time.time() * 1000)) == expected
    print(f"\nHBase {REAL_HBASE_VERSION} -> Bigtable emulator: {writer.rounds} live rounds; "
          f"copy {copied['cells']} cells; replay {sum(first['cells'].values())} + "
          f"{sum(caught_up['cells'].values())} cells; killed {faults['killed']} "
          f"(mid-replay: {faults['mid_replay']}); "
          f"{len(expected)} cells judged; test {time.monotonic() - began:.0f} s")
