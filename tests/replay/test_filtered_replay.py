"""Filters and markers on a real target: mapping, families, write-time window, system
tables; markers are read and reported, never written."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.replay.client_target import ClientTarget
from hbase_migrate.replay.file_replay import ReplaySpec, replay_file
from hbase_migrate.replay.filters import (
    SKIP_AFTER,
    SKIP_BEFORE,
    SKIP_SYSTEM,
    SKIP_UNMAPPED,
    ReplayFilter,
)
from hbase_migrate.wal import markers as M
from hbase_migrate.wal.messages import TableName
from hbase_migrate.wal.model import METAFAMILY, Cell, CellType, Tag, WalKey
from tests.support.replay import REGION, Clusters, T, make_wal, scan_all

pytestmark = pytest.mark.integration


def key(table: str, seq: int, write_time: int) -> WalKey:
    return WalKey(REGION, table.encode(), seq, write_time)


def put(row: bytes, family: bytes, ts: int, value: bytes = b"v") -> Cell:
    return Cell(row, family, b"q", T + ts, CellType.PUT, value)


def test_mapping_families_window_system_tables_and_markers(
        clusters: Clusters, table: str, tmp_path: Path) -> None:
    src, dst = f"default:{table}", f"{table}_copy"
    clusters.create(dst, source=False)
    bulk = M.BulkLoadDescriptor(TableName(b"default", table.encode()), REGION,
                                (M.StoreDescriptor(b"d", "d", ("f1",)),), 77)
    event = M.RegionEventDescriptor(M.REGION_OPEN, table.encode(), REGION, 5)
    entries = [
        (key(src, 1, T - 10), [put(b"early", b"d", 1)]),  # before the window
        (key(src, 2, T), [put(b"a", b"d", 1), put(b"a", b"m", 1)]),  # m is filtered
        (key("unmapped", 3, T + 1), [put(b"u", b"d", 1)]),
        (key("hbase:meta", 4, T + 2), [put(b"meta", b"info", 1)]),
        (key(table, 5, T + 3), [M.bulk_load_marker(bulk, T + 3)]),
        (key(table, 6, T + 4), [M.region_event_marker(event, T + 4)]),
        (key(table, 7, T + 5), [M.flush_marker(
            M.FlushDescriptor(M.START_FLUSH, table.encode(), REGION, 6), T + 5)]),
        (key(table, 8, T + 6), [put(b"b", b"d", 2)._replace(tags=(Tag(8, b"\x00\x01"),))]),
        (key(table, 9, T + 100), [put(b"late", b"d", 1)]),  # at the window's end
    ]
    wal = make_wal(tmp_path / "wal.f", entries)
    flt = ReplayFilter.build([f"{src}={dst}"], {table: ["d"]}, start_time=T,
                             end_time=T + 100)
    result = replay_file(wal, ReplaySpec(flt), ClientTarget(clusters.dst))
    assert scan_all(clusters.dst, dst) == [(b"a", b"d", b"q", T + 1, b"v"),
                                           (b"b", b"d", b"q", T + 2, b"v")]
    p = result.progress
    assert dict(p.entries_skipped) == {SKIP_BEFORE: 1, SKIP_UNMAPPED: 1, SKIP_SYSTEM: 1,
                                       SKIP_AFTER: 1}
    assert p.entries == len(entries) and p.entries_applied == 2
    assert p.cells_filtered == 1 and dict(p.cells) == {"Put": 2}
    assert dict(p.markers) == {"BULK_LOAD": 1, "REGION_OPEN": 1, "FLUSH": 1}
    (record,) = p.bulk_loads
    assert (record.table, record.encoded_region, record.sequence) == (
        table, REGION.decode(), 77)
    assert record.position.entry == 4
    assert [(e.kind, e.sequence) for e in p.region_events] == [("REGION_OPEN", 5)]
    assert p.tags_dropped == 1
    assert p.last_write_time == T + 100
    assert not any(c[1] == METAFAMILY for c in scan_all(clusters.dst, dst))
