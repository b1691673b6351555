"""METAFAMILY markers: encode and decode every kind, as HBase builds them."""

from __future__ import annotations

import pytest
from conftest import pairs_of, read_all, wal_bytes

from hbase_migrate.wal import markers as M
from hbase_migrate.wal.messages import TableName
from hbase_migrate.wal.model import METAFAMILY, Cell, WalKey
from hbase_migrate.wal.writer import WalOptions

pytestmark = pytest.mark.usefixtures("both_hot_loops")  # the reference and the compiled hot loops

STORE = M.StoreDescriptor(b"cf", "cf", ("hfile1", "hfile2"), 1234)
SERVER = M.ServerName("rs1.example.com", 16020, 1700000000000)

CASES = [
    (
        M.flush_marker,
        M.FlushDescriptor(
            M.COMMIT_FLUSH,
            b"ns:t",
            b"a" * 32,
            77,
            (M.StoreFlushDescriptor(b"cf", "cf", ("f1",)),),
            b"ns:t,,1.abc.",
        ),
    ),
    (
        M.compaction_marker,
        M.CompactionDescriptor(b"t", b"b" * 32, b"cf", ("in1", "in2"), ("out",), "cf", b"t,,1.b."),
    ),
    (
        M.region_event_marker,
        M.RegionEventDescriptor(M.REGION_CLOSE, b"t", b"c" * 32, 12, (STORE,), SERVER, b"t,,1.c."),
    ),
    (
        M.bulk_load_marker,
        M.BulkLoadDescriptor(
            TableName(b"default", b"t"), b"d" * 32, (STORE,), 99, ("cluster-1",), True
        ),
    ),
]


@pytest.mark.parametrize(
    ("encoder", "descriptor"), CASES, ids=["flush", "compaction", "event", "bulk"]
)
def test_encode_decode(encoder, descriptor) -> None:  # type: ignore[no-untyped-def]
    cell = encoder(descriptor, 1700000000123)
    assert cell.family == METAFAMILY and cell.type == 4 and cell.row == b"\x00"
    assert M.is_marker(cell) and M.decode_marker(cell) == descriptor
    with_key = encoder(descriptor, 5, start_key=b"m")
    assert with_key.row == b"m"


def test_qualifiers() -> None:
    event = CASES[2][1]
    assert M.flush_marker(CASES[0][1], 1).qualifier == b"HBASE::FLUSH"
    assert M.compaction_marker(CASES[1][1], 1).qualifier == b"HBASE::COMPACTION"
    assert M.region_event_marker(event, 1).qualifier == b"HBASE::REGION_EVENT::REGION_CLOSE"
    assert M.bulk_load_marker(CASES[3][1], 1).qualifier == b"HBASE::BULK_LOAD"
    legacy = M.region_event_marker(event, 1, legacy=True)
    assert legacy.qualifier == b"HBASE::REGION_EVENT" and M.decode_marker(legacy) == event


def test_flush_descriptor_bytes() -> None:
    d = M.FlushDescriptor(M.START_FLUSH, b"t", b"r", 5, (M.StoreFlushDescriptor(b"f", "f"),))
    # action 0, table "t", region "r", seq 5, one store {family "f", home "f"}
    assert M.encode_flush(d) == bytes.fromhex("0800 120174 1a0172 2005 2a06 0a0166 120166")


def test_bulk_load_table_name_is_a_message() -> None:
    value = M.encode_bulk_load(M.BulkLoadDescriptor(TableName(b"ns", b"t"), b"r", (), 1))
    assert value.startswith(bytes.fromhex("0a07 0a026e73 120174"))  # TableName{ns, t}


def test_replication_marker() -> None:
    empty = M.replication_marker(b"rs1", 10)
    assert empty.value == b"" and M.decode_marker(empty) == M.ReplicationMarkerDescriptor()
    d = M.ReplicationMarkerDescriptor("rs1,16020,1", "wal.1", 4096)
    assert M.decode_marker(M.replication_marker(b"rs1", 10, d)) == d


def test_unknown_and_ordinary_cells() -> None:
    assert M.decode_marker(Cell(b"r", b"cf", b"q", 1, 4, b"v")) is None
    unknown = Cell(b"r", METAFAMILY, b"HBASE::CACHEFLUSH", 1, 4, b"\x01\x02")
    assert M.decode_marker(unknown) == M.UnknownMarker(b"HBASE::CACHEFLUSH", b"\x01\x02")
    with pytest.raises(M.MarkerError, match="HBASE::FLUSH"):
        M.decode_marker(Cell(b"r", METAFAMILY, b"HBASE::FLUSH", 1, 4, b"\x08"))
    with pytest.raises(M.MarkerError, match="lacks required"):
        M.decode_marker(Cell(b"r", METAFAMILY, b"HBASE::FLUSH", 1, 4, b"\x08\x00"))


def test_markers_through_a_compressed_wal() -> None:
    pairs = [
        (WalKey(b"r" * 32, b"t", i, i), (encoder(d, i),)) for i, (encoder, d) in enumerate(CASES)
    ]
    entries, _ = read_all(wal_bytes(pairs, WalOptions(compression=True, value_compression="GZ")))
    assert pairs_of(entries) == pairs
    assert [M.decode_marker(e.cells[0]) for e in entries] == [d for _, d in CASES]
