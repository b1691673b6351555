"""The replay filter: table mapping and normalisation, system tables, families, window;
the marker log."""

from __future__ import annotations

import pytest

from hbase_migrate.errors import ConfigError
from hbase_migrate.replay.errors import MarkerReadError
from hbase_migrate.replay.filters import (
    SKIP_AFTER,
    SKIP_BEFORE,
    SKIP_SYSTEM,
    SKIP_UNMAPPED,
    ReplayFilter,
    is_system_table,
)
from hbase_migrate.replay.marker_log import MarkerLog
from hbase_migrate.replay.mutations import WalPosition
from hbase_migrate.tablename import table_name
from hbase_migrate.wal import markers as M
from hbase_migrate.wal.messages import TableName
from hbase_migrate.wal.model import METAFAMILY, Cell, CellType

POS = WalPosition("wal.7", 99, 2)


def test_mapping_normalises_default_namespace() -> None:
    flt = ReplayFilter.build(["default:orders=copy", "ns:t", "plain=default:other"])
    assert flt.tables == (("orders", "copy"), ("ns:t", "ns:t"), ("plain", "other"))
    assert flt.target_of(table_name(b"orders")) == "copy"
    assert flt.target_of(table_name(b"default:orders")) == "copy"
    assert flt.target_of("ns:t") == "ns:t"
    assert flt.target_of("unlisted") is None
    assert flt.skip_reason("unlisted", 0) == SKIP_UNMAPPED


def test_without_mapping_every_user_table_goes_into_itself() -> None:
    flt = ReplayFilter()
    assert flt.target_of("a") == "a"
    assert flt.target_of("ns:b") == "ns:b"
    assert flt.skip_reason("hbase:meta", 0) == SKIP_SYSTEM


def test_system_tables_are_skipped_unless_asked() -> None:
    assert is_system_table("hbase:meta") and is_system_table("hbase:acl")
    assert is_system_table("master:store") and not is_system_table("hbasefoo")
    assert ReplayFilter().skip_reason("master:store", 0) == SKIP_SYSTEM
    assert ReplayFilter.build(["hbase:meta"]).skip_reason("hbase:meta", 0) == SKIP_SYSTEM
    asked = ReplayFilter.build(["hbase:acl=acl_copy"], include_system_tables=True)
    assert asked.skip_reason("hbase:acl", 0) is None
    assert asked.target_of("hbase:acl") == "acl_copy"


def test_write_time_window_is_half_open() -> None:
    flt = ReplayFilter.build(start_time=100, end_time=200)
    assert flt.skip_reason("t", 99) == SKIP_BEFORE
    assert flt.skip_reason("t", 100) is None
    assert flt.skip_reason("t", 199) is None
    assert flt.skip_reason("t", 200) == SKIP_AFTER


def test_families_per_table() -> None:
    flt = ReplayFilter.build(["t=u", "other"], {"default:t": ["d", b"m"]})
    assert flt.families_of("t") == frozenset({b"d", b"m"})
    assert flt.families_of("other") is None


@pytest.mark.parametrize(("tables", "families", "window"), [
    (["a=b", "a=c"], {}, (None, None)),
    (["a="], {}, (None, None)),
    (["bad name!"], {}, (None, None)),
    (["a"], {"b": ["d"]}, (None, None)),
    ([], {}, (5, 5)),
])
def test_bad_specs_are_refused(tables: list[str], families: dict[str, list[str]],
                               window: tuple[int | None, int | None]) -> None:
    with pytest.raises(ConfigError):
        ReplayFilter.build(tables, families, start_time=window[0], end_time=window[1])


def _bulk_load() -> M.BulkLoadDescriptor:
    return M.BulkLoadDescriptor(
        TableName(b"default", b"orders"), b"5e4d1b6f0a4c7f3e9d2b8a1c6e0f4d3a",
        (M.StoreDescriptor(b"d", "d", ("hfile1", "hfile2")),), 42)


def test_marker_log_records_bulk_loads_and_counts_events() -> None:
    log = MarkerLog()
    log.read("orders", M.bulk_load_marker(_bulk_load(), 1000), 1000, POS)
    event = M.RegionEventDescriptor(M.REGION_CLOSE, b"orders", b"abc", 17)
    log.read("orders", M.region_event_marker(event, 1001), 1001, POS)
    log.read("orders", M.region_event_marker(event._replace(event_type=M.REGION_OPEN), 1002),
             1002, POS)
    flush = M.FlushDescriptor(M.COMMIT_FLUSH, b"orders", b"abc", 18)
    log.read("orders", M.flush_marker(flush, 1003), 1003, POS)
    log.read("orders", Cell(b"\x00", METAFAMILY, M.FLUSH, 1, CellType.PUT, b"\xff\xff"),
             1004, POS)
    assert dict(log.counts) == {"BULK_LOAD": 1, "REGION_CLOSE": 1, "REGION_OPEN": 1,
                                "FLUSH": 1, "unreadable": 1}
    (record,) = log.bulk_loads
    assert (record.table, record.encoded_region, record.sequence) == (
        "orders", "5e4d1b6f0a4c7f3e9d2b8a1c6e0f4d3a", 42)
    assert record.stores == ((b"d", ("hfile1", "hfile2")),)
    assert record.position == POS
    assert record.start_key == b""  # the first region: its marker's row is one zero byte
    log.read("orders", M.bulk_load_marker(_bulk_load(), 1005, start_key=b"m"), 1005, POS)
    assert log.bulk_loads[-1].start_key == b"m"
    assert [(e.kind, e.encoded_region, e.sequence) for e in log.region_events] == [
        ("REGION_CLOSE", "abc", 17), ("REGION_OPEN", "abc", 17)]


def test_unreadable_bulk_load_fails_naming_the_position() -> None:
    bad = Cell(b"\x00", METAFAMILY, M.BULK_LOAD, 1, CellType.PUT, b"\x0a\xff")
    with pytest.raises(MarkerReadError, match=r"wal\.7 at byte offset 99 \(entry #2\)"):
        MarkerLog().read("orders", bad, 1, POS)
