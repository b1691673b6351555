"""A migration from the embedded cluster to the Bigtable emulator: prepare, the scan copy
while a writer keeps writing, the replay of every delete type and of puts an earlier delete
masks, versions and TTLs, and the validation; judged by reading Bigtable with Google's own
client (its classic API, not the project's reads), with HBase's retention rules applied by
the test, against what the source returns."""

from __future__ import annotations

import datetime
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate import lifecycle
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepRecord, StepStatus
from hbase_migrate.bigtable.emulator import Emulator
from hbase_migrate.bigtable.errors import BigtablePreflightError
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.config import load_config
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType
from minihbase.server import MiniHBase
from tests.bigtable.classic import google_table
from tests.bigtable.emulator_migration import put, source, write_config
from tests.bigtable.loss_names import key_name

__all__ = ["source"]  # the fixture
pytestmark = [pytest.mark.integration,
              pytest.mark.filterwarnings("ignore:Connecting to Bigtable emulator")]
HOUR = 3_600_000
TABLE = "shop:orders"
# (VERSIONS, TTL in ms or None, MIN_VERSIONS) by family, as the test states HBase keeps them
RULES = {b"d": (2, None, 0), b"t": (1, HOUR, 0), b"m": (3, HOUR, 1)}
FAMILIES = (FamilyDescriptor(b"d", max_versions=2),
            FamilyDescriptor(b"t", max_versions=1, ttl=3600),
            FamilyDescriptor(b"m", max_versions=3, ttl=3600, min_versions=1))


def mark(kind: CellType, row: bytes, family: bytes, qualifier: bytes, ts: int) -> Cell:
    return Cell(row, family, qualifier, ts, kind)


def as_hbase_reads(table: Any, now: int) -> set[tuple[bytes, bytes, bytes, int, bytes]]:
    """Every cell Bigtable holds, read with Google's client, kept as HBase would return it
    by :data:`RULES` (newest first per column: at most VERSIONS, and those older than the
    TTL only among the newest MIN_VERSIONS)."""
    columns: dict[tuple[bytes, bytes, bytes], list[tuple[int, bytes]]] = {}
    for row in table.read_rows():
        for family, qualifiers in row.cells.items():
            for qualifier, cells in qualifiers.items():
                columns[(row.row_key, family.encode(), qualifier)] = [
                    (int(c.timestamp.timestamp() * 1000 + 0.5), c.value) for c in cells]
    kept = set()
    for (row, family, qualifier), cells in columns.items():
        versions, ttl, least = RULES[family]
        for i, (ts, value) in enumerate(sorted(cells, reverse=True)[:versions]):
            if ttl is None or i < least or ts >= now - ttl:
                kept.add((row, family, qualifier, ts, value))
    return kept


def source_reads(client: Thrift2Client, table: str) -> set[tuple[bytes, bytes, bytes, int, bytes]]:
    return {(c.row, c.family, c.qualifier, c.timestamp, c.value)
            for piece in client.scan(table) for c in piece}


def test_a_live_table_with_every_delete_type_ends_equal_on_bigtable(
        tmp_path: Path, bigtable_emulator: Emulator,
        source: tuple[MiniHBase, Thrift2Client]) -> None:
    cluster, client = source
    client.create_namespace("shop")
    client.create_table(TableDescriptor(TABLE, FAMILIES), [b"r2"])
    now = int(time.time() * 1000)
    rows = [b"r%02d" % i for i in range(40)]
    client.write_cells(TABLE, [put(r, b"d", q, now - 5000 + k * 1000) for r in rows
                               for q in (b"a", b"b") for k in range(3)])
    client.write_cells(TABLE, [put(r, b"t", b"q", now - 1000) for r in rows[:10]] +
                       # the newest within the TTL (the embedded cluster ignores MIN_VERSIONS)
                       [put(r, b"m", b"q", now - age) for r in rows[:10]
                        for age in (2 * HOUR, HOUR // 6)])
    client.write_cells(TABLE, [put(rows[10], b"t", b"q", now - 2 * HOUR)])  # expired
    config = write_config(tmp_path, cluster, bigtable_emulator, TABLE)
    migration = load_config(config)

    prepared = lifecycle.prepare(migration).metrics
    assert prepared["tables"] == [{"source": TABLE, "target": TABLE, "created": True,
                                   "families": ["d", "m", "t"], "split_points": 1}]
    assert prepared["preflight"]["refused"] == [] and prepared["preflight"]["rows_sampled"]
    assert_gc_rules(config)

    stop = threading.Event()

    def live_writer() -> None:  # puts at the server's clock, during the copy
        with Thrift2Client(cluster.endpoints.thrift2 or "") as writer:
            n = 0
            while not stop.is_set() or n < 50:
                ts = int(time.time() * 1000)
                writer.write_cells(TABLE, [put(b"w%03d" % (n % 60), b"d", b"live", ts)])
                n += 1

    live = threading.Thread(target=live_writer)
    live.start()
    t0 = int(time.time() * 1000)
    copied = lifecycle.snapshot(migration, watermark=t0).metrics
    stop.set()
    live.join()
    assert copied["cells"] > 0

    later = now + 10
    client.write_cells(TABLE, [
        mark(CellType.DELETE, rows[1], b"d", b"a", now - 4000),  # one version
        mark(CellType.DELETE_COLUMN, rows[2], b"d", b"a", now - 3500),
        mark(CellType.DELETE_FAMILY, rows[3], b"d", b"", now - 3500),
        mark(CellType.DELETE_FAMILY_VERSION, rows[4], b"d", b"", now - 4000),
        put(rows[30], b"d", b"a", later),
        put(rows[11], b"d", b"new", now - 100),  # a column Bigtable has not got yet,
        mark(CellType.DELETE_FAMILY, rows[11], b"d", b"", now),  # then its family deleted
    ])
    # faults: a split, then a region server killed (its WAL left in -splitting)
    servers = cluster.region_servers
    assert servers is not None
    parent = next(r for slot in (0, 1) for r in servers.hosted(slot).values()
                  if r.table == TABLE and r.start_key == b"r2")
    servers.split(parent.encoded_name, b"r30")
    killed = servers.kill(0)
    assert (cluster.hbase_root_dir / "WALs" / killed["splitting"]).is_dir()
    client.write_cells(TABLE, [
        mark(CellType.DELETE_COLUMN, rows[30], b"d", b"a", later),  # after the move
        # a delete, then an older put it masks (the same row's column, family, version)
        mark(CellType.DELETE_COLUMN, rows[5], b"d", b"a", later),
        put(rows[5], b"d", b"a", later - 100),
        mark(CellType.DELETE_FAMILY, rows[6], b"d", b"", later),
        put(rows[6], b"d", b"z", later - 50),
        mark(CellType.DELETE, rows[7], b"d", b"a", now - 3000),
        put(rows[7], b"d", b"a", now - 3000),
        # newer versions than VERSIONS keeps, and a put past the TTL
        *[put(rows[8], b"d", b"a", later + k) for k in range(3)],
        put(rows[9], b"t", b"q", now - 3 * HOUR),
    ])
    expected = source_reads(client, TABLE)
    assert not any(c[0] == rows[5] and c[2] == b"a" for c in expected)  # HBase hides them

    replayed = lifecycle.replay(migration).to_json()
    verdict = lifecycle.validate(migration).metrics
    assert (verdict["verdict"], verdict["differing"]) == ("match", [])
    assert Path(verdict["gx"]["result"]).is_file()  # Great Expectations judged
    (table,) = verdict["tables"]
    assert table["target_cells"] == len(expected) and table["ranges_matching"] == table["ranges"]
    assert lifecycle.cutover_check(migration).metrics["verdict"] == "go"
    steps = {s.kind: s for s in ledger_steps(config)}
    assert list(steps) == ["prepare", "snapshot", "replay", "validate", "cutover-check"]
    judged = as_hbase_reads(google_table(config, "shop.orders"), int(time.time() * 1000))
    assert judged == expected
    # the three puts written after their markers; more when a moved region's older file is
    # read after the file holding a later delete (the same end state either way)
    assert replayed["files_read"] >= 1 and replayed["cells"].get("DeleteFamilyVersion") == 1
    assert steps["replay"].metrics["bigtable"]["masked_puts"] >= 3
    report = lifecycle.report(migration, out=tmp_path / "report.html").metrics
    assert Path(report["path"]).is_file()

    mended_after_changes_behind_its_back(config, expected, rows[20], now)


def assert_gc_rules(config: Path) -> None:
    """The families' GC rules as Google's client reads them: :data:`RULES` in Bigtable's
    terms."""
    from google.cloud.bigtable import column_family as cf

    families = google_table(config, "shop.orders").list_column_families()
    assert families["d"].gc_rule == cf.MaxVersionsGCRule(2)
    age = cf.MaxAgeGCRule(datetime.timedelta(hours=1))
    assert families["t"].gc_rule == cf.GCRuleUnion([cf.MaxVersionsGCRule(1), age])
    assert families["m"].gc_rule == cf.GCRuleUnion(
        [cf.MaxVersionsGCRule(3), cf.GCRuleIntersection([age, cf.MaxVersionsGCRule(1)])])


def mended_after_changes_behind_its_back(config: Path, expected: set[Any], row: bytes,
                                         now: int) -> None:
    """A validation with repair mends Bigtable changed with Google's client (a stray cell
    added, a column deleted), as Google's client reads it back."""
    migration = load_config(config)
    bigtable = google_table(config, "shop.orders")
    stray = bigtable.direct_row(b"r15")
    stray.set_cell("d", b"stray", b"x", timestamp=datetime.datetime.fromtimestamp(
        now / 1000, datetime.UTC))
    stray.commit()
    lost = bigtable.direct_row(row)
    lost.delete_cells("d", [b"b"])
    lost.commit()
    assert as_hbase_reads(bigtable, int(time.time() * 1000)) != expected
    repaired = lifecycle.validate(migration, repair=True, recompare_wait=0).metrics
    assert repaired["verdict"] == "match"
    done = repaired["tables"][0]["repaired"]
    # the stray cell deleted; both versions (family d keeps 2) of the deleted column put
    assert (sum(r["deletes"] for r in done), sum(r["puts"] for r in done)) == (1, 2)
    assert as_hbase_reads(bigtable, int(time.time() * 1000)) == expected


def test_a_key_over_the_limit_is_refused_before_any_write_unless_accepted(
        tmp_path: Path, bigtable_emulator: Emulator,
        source: tuple[MiniHBase, Thrift2Client]) -> None:
    cluster, client = source
    client.create_table(TableDescriptor("big", (FamilyDescriptor(b"f"),)))
    long_key = b"k" * 4097  # Bigtable's row keys end at 4 KiB
    client.write_cells("big", [put(b"a", b"f", b"q", 1000), put(long_key, b"f", b"q", 1000)])
    config = write_config(tmp_path, cluster, bigtable_emulator, "big")

    with pytest.raises(BigtablePreflightError) as refused:
        lifecycle.prepare(load_config(config))
    message = str(refused.value)
    assert "table big" in message and "4097 bytes" in message and "\n" not in message
    assert not google_table(config, "big").exists()  # nothing written, not even the table
    (refusal,) = ledger_steps(config)
    assert refusal.status == StepStatus.FAILED and "4097 bytes" in (refusal.error or "")
    name = key_name("big", long_key)  # the whole key's digest names it
    assert refusal.metrics["preflight"]["refused"] == [name]

    assert f'accept = ["{name}"]' in message
    config = write_config(tmp_path, cluster, bigtable_emulator, "big", accept=[name])
    migration = load_config(config)
    prepared = lifecycle.prepare(migration).metrics
    assert prepared["known_losses"] == [name]
    copied = lifecycle.snapshot(migration).metrics
    assert copied["bigtable"]["known_losses"] == {name: 1}
    assert [r.row_key for r in google_table(config, "big").read_rows()] == [b"a"]
    recorded = {s.kind: s.metrics for s in ledger_steps(config)}
    assert recorded["prepare"]["known_losses"] == [name]
    assert recorded["snapshot"]["bigtable"]["known_losses"] == {name: 1}


def ledger_steps(config: Path) -> list[StepRecord]:
    migration = load_config(config)
    with Ledger.open(migration.ledger_url) as ledger:
        record = ledger.migration(migration.name)
        assert record is not None
        return ledger.steps(record.id)



def test_a_put_an_earlier_runs_delete_masks_stays_hidden_in_a_new_process(
        tmp_path: Path, bigtable_emulator: Emulator,
        source: tuple[MiniHBase, Thrift2Client]) -> None:
    """Two replay runs, each its own ``hbase-migrate replay`` process: the second meets a put
    that a delete the first applied masks (an older timestamp, written after the delete)."""
    cluster, client = source
    client.create_table(TableDescriptor("t", (FamilyDescriptor(b"f", max_versions=3),)))
    client.write_cells("t", [put(b"a", b"f", b"q", 1000), put(b"b", b"f", b"q", 1000)])
    config = write_config(tmp_path, cluster, bigtable_emulator, "t")
    migration = load_config(config)
    lifecycle.prepare(migration)
    lifecycle.snapshot(migration)

    def replay_in_a_new_process() -> None:
        done = subprocess.run([sys.executable, "-m", "hbase_migrate", "replay", "--config",
                               str(config)], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr[-2000:]

    client.write_cells("t", [mark(CellType.DELETE_COLUMN, b"a", b"f", b"q", 5000)])
    replay_in_a_new_process()
    client.write_cells("t", [put(b"a", b"f", b"q", 3000),  # masked by the delete at 5000
                             put(b"b", b"f", b"q", 2000)])
    replay_in_a_new_process()
    expected = source_reads(client, "t")
    assert {(c[0], c[3]) for c in expected} == {(b"b", 1000), (b"b", 2000)}
    table = google_table(config, "t")
    assert {(r.row_key, c.timestamp.timestamp() * 1000, c.value) for r in table.read_rows()
            for c in r.cells["f"][b"q"]} == {(c[0], c[3], c[4]) for c in expected}
