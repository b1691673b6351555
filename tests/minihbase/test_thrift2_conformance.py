"""HBase semantics through the Thrift2 gateway: the project's adapter and raw thriftpy2.

Each test states the HBase rule it checks; expectations are written out from the rule.
"""

from __future__ import annotations

import pytest

from hbase_migrate.cluster.descriptors import FOREVER, FamilyDescriptor, TableDescriptor
from hbase_migrate.thrift.thrift2 import Thrift2Client, Thrift2Error
from hbase_migrate.thrift.thrift2_idl import hbase2
from hbase_migrate.wal.model import Cell, CellType
from minihbase.server import MiniHBase

from . import stacks
from .conftest import Recorder, now_ms

pytestmark = pytest.mark.integration
# Both stacks: the embedded cluster and real Apache HBase (the specification).
raw = stacks.raw
recorder = stacks.recorder
stack = stacks.stack
t2 = stacks.t2
PUT, DEL, DFV, DCOL, DFAM = (CellType.PUT, CellType.DELETE, CellType.DELETE_FAMILY_VERSION,
                             CellType.DELETE_COLUMN, CellType.DELETE_FAMILY)


def create(t2: Thrift2Client, name: str, *families: FamilyDescriptor,
           splits: tuple[bytes, ...] = ()) -> None:
    t2.create_table(TableDescriptor(name, families or (FamilyDescriptor(b"f", max_versions=5),)),
                    splits)


def put(row: bytes, q: bytes, ts: int, value: bytes = b"", family: bytes = b"f") -> Cell:
    return Cell(row, family, q, ts, PUT, value or b"v%d" % ts)


def versions(cells: list[Cell]) -> list[tuple[bytes, bytes, int]]:
    return [(c.family, c.qualifier, c.timestamp) for c in cells]


def test_delete_version_masks_exactly_one_version_even_for_later_puts(t2, table_name):
    """Delete(8) at t masks only the version at t, including a put at t arriving later."""
    create(t2, table_name)
    t2.put_cells(table_name, [put(b"r", b"q", ts) for ts in (1, 2, 3)])
    t2.write_cells(table_name, [Cell(b"r", b"f", b"q", 2, DEL)])
    assert versions(t2.get(table_name, b"r")) == [(b"f", b"q", 3), (b"f", b"q", 1)]
    t2.put_cells(table_name, [put(b"r", b"q", 2, b"again")])
    assert versions(t2.get(table_name, b"r")) == [(b"f", b"q", 3), (b"f", b"q", 1)]


def test_older_version_resurfaces_after_delete_without_compaction(t2, table_name):
    """VERSIONS limits what a read returns, counted after deletes; until a major compaction
    the versions beyond VERSIONS stay stored, so deleting the newest shows the next one."""
    create(t2, table_name, FamilyDescriptor(b"f", max_versions=2))
    t2.put_cells(table_name, [put(b"r", b"q", ts) for ts in (1, 2, 3)])
    assert [c.timestamp for c in t2.get(table_name, b"r")] == [3, 2]
    t2.write_cells(table_name, [Cell(b"r", b"f", b"q", 3, DEL)])
    assert [c.timestamp for c in t2.get(table_name, b"r")] == [2, 1]


def test_delete_family_version_masks_every_column_at_that_ts(t2, table_name):
    """DeleteFamilyVersion(10) at t masks every column of its family at exactly t."""
    create(t2, table_name, FamilyDescriptor(b"f", max_versions=5),
           FamilyDescriptor(b"g", max_versions=5))
    cells = [put(b"r", q, ts, family=fam) for fam in (b"f", b"g") for q in (b"a", b"b")
             for ts in (5, 6)]
    t2.put_cells(table_name, cells)
    t2.write_cells(table_name, [Cell(b"r", b"f", b"", 5, DFV)])
    assert versions(t2.get(table_name, b"r")) == [
        (b"f", b"a", 6), (b"f", b"b", 6), (b"g", b"a", 6), (b"g", b"a", 5), (b"g", b"b", 6),
        (b"g", b"b", 5)]
    t2.put_cells(table_name, [put(b"r", b"c", 5)])  # later put at 5: masked too
    assert (b"f", b"c", 5) not in versions(t2.get(table_name, b"r"))


def test_delete_column_and_delete_family_by_timestamp(t2, table_name):
    """DeleteColumn(12) masks the column's versions <= t; DeleteFamily(14) masks the whole
    family <= t; a put above the marker stays visible."""
    create(t2, table_name)
    t2.put_cells(table_name, [put(b"r", q, ts) for q in (b"a", b"b") for ts in (1, 2, 3)])
    t2.write_cells(table_name, [Cell(b"r", b"f", b"a", 2, DCOL)])
    assert versions(t2.get(table_name, b"r", columns=[(b"f", b"a")])) == [(b"f", b"a", 3)]
    t2.write_cells(table_name, [Cell(b"r", b"f", b"", 1, DFAM)])
    assert versions(t2.get(table_name, b"r")) == [(b"f", b"a", 3), (b"f", b"b", 3),
                                                   (b"f", b"b", 2)]


def test_tdelete_timestamp_ignored_when_columns_carry_timestamps(raw, t2, table_name):
    """With columns, each TColumn's timestamp is used and TDelete.timestamp is ignored."""
    create(t2, table_name)
    t2.put_cells(table_name, [put(b"r", b"q", ts) for ts in (4, 5, 6)])
    raw.deleteSingle(table_name.encode(), hbase2.TDelete(
        row=b"r", timestamp=100, deleteType=hbase2.TDeleteType.DELETE_COLUMNS,
        columns=[hbase2.TColumn(family=b"f", qualifier=b"q", timestamp=5)]))
    assert [c.timestamp for c in t2.get(table_name, b"r")] == [6]


def test_delete_column_without_timestamp_deletes_newest_version(raw, t2, table_name,
                                                                 recorder: Recorder):
    """DELETE_COLUMN without timestamp is Delete(8) at LATEST: the server gives it the
    timestamp of the newest existing version (or now when there is none)."""
    create(t2, table_name)
    t2.put_cells(table_name, [put(b"r", b"q", 10), put(b"r", b"q", 20)])
    kind = hbase2.TDeleteType.DELETE_COLUMN
    raw.deleteSingle(table_name.encode(), hbase2.TDelete(
        row=b"r", deleteType=kind, columns=[hbase2.TColumn(family=b"f", qualifier=b"q")]))
    assert [c.timestamp for c in t2.get(table_name, b"r")] == [10]
    before = now_ms()
    raw.deleteSingle(table_name.encode(), hbase2.TDelete(
        row=b"r", deleteType=kind, columns=[hbase2.TColumn(family=b"f", qualifier=b"none")]))
    logged = [c for _, cells, _ in recorder.for_table(table_name) for c in cells
              if c.type == DEL]
    assert logged[0].timestamp == 20
    assert before <= logged[1].timestamp <= now_ms()


def test_whole_row_delete_is_delete_family_per_family(raw, t2, table_name, recorder):
    """A TDelete without columns deletes the row: one DeleteFamily per family at its ts."""
    create(t2, table_name, FamilyDescriptor(b"f"), FamilyDescriptor(b"g"))
    t2.put_cells(table_name, [put(b"r", b"a", 5, family=b"f"), put(b"r", b"b", 9, family=b"g")])
    raw.deleteSingle(table_name.encode(), hbase2.TDelete(row=b"r", timestamp=7))
    assert versions(t2.get(table_name, b"r")) == [(b"g", b"b", 9)]
    _, cells, _ = recorder.for_table(table_name)[-1]
    assert [(c.family, c.qualifier, c.timestamp, c.type) for c in cells] == [
        (b"f", b"", 7, DFAM), (b"g", b"", 7, DFAM)]


def test_put_cell_timestamp_wins_over_tput_timestamp(raw, t2, table_name):
    """A TColumnValue timestamp wins; else the TPut's; else the server's now."""
    create(t2, table_name)
    before = now_ms()
    raw.put(table_name.encode(), hbase2.TPut(row=b"r", timestamp=50, columnValues=[
        hbase2.TColumnValue(family=b"f", qualifier=b"a", value=b"1", timestamp=7),
        hbase2.TColumnValue(family=b"f", qualifier=b"b", value=b"2")]))
    raw.put(table_name.encode(), hbase2.TPut(row=b"r", columnValues=[
        hbase2.TColumnValue(family=b"f", qualifier=b"c", value=b"3")]))
    got = {c.qualifier: c.timestamp for c in t2.get(table_name, b"r")}
    assert got[b"a"] == 7 and got[b"b"] == 50 and before <= got[b"c"] <= now_ms()


def test_time_range_and_max_versions(t2, table_name):
    """Reads keep versions with min <= ts < max, newest first, at most maxVersions."""
    create(t2, table_name)
    t2.put_cells(table_name, [put(r, b"q", ts) for r in (b"a", b"b") for ts in (1, 2, 3, 4)])
    assert [c.timestamp for c in t2.get(table_name, b"a", time_range=(2, 4))] == [3, 2]
    assert [c.timestamp for c in t2.get(table_name, b"a", max_versions=1)] == [4]
    rows = list(t2.scan(table_name, time_range=(1, 3), max_versions=5))
    assert [[(c.row, c.timestamp) for c in row] for row in rows] == [
        [(b"a", 2), (b"a", 1)], [(b"b", 2), (b"b", 1)]]


def test_scan_bounds_and_many_rows(t2, table_name):
    """Scans return rows in unsigned byte order within [startRow, stopRow), across many
    scanner batches and region boundaries."""
    create(t2, table_name, FamilyDescriptor(b"f"), splits=(b"\x40", b"\x80"))
    rows = [bytes([i, j]) for i in range(0, 256, 5) for j in (0, 255)]
    t2.put_cells(table_name, [put(r, b"q", 1) for r in rows])
    got = [cells[0].row for cells in t2.scan(table_name, rows_per_call=7)]
    assert got == sorted(rows)
    got = [cells[0].row for cells in t2.scan(table_name, start=b"\x40", stop=b"\x80\x00")]
    assert got == [r for r in sorted(rows) if b"\x40" <= r < b"\x80\x00"]


def test_batch_size_splits_a_row_into_consecutive_results(raw, t2, table_name):
    """TScan.batchSize caps the cells of a Result: a wider row comes as several Results of
    that many cells (the last one fewer), one after the other, in the row's cell order;
    getScannerRows counts Results, not rows."""
    create(t2, table_name)
    cells = [put(b"a", b"q%d" % q, ts) for q in range(3) for ts in (2, 1)] + [
        put(b"b", b"q", 1)]
    t2.put_cells(table_name, cells)
    scanner = raw.openScanner(table_name.encode(), hbase2.TScan(maxVersions=5, batchSize=4))
    try:
        first = raw.getScannerRows(scanner, 2)
        rest = raw.getScannerRows(scanner, 10)
    finally:
        raw.closeScanner(scanner)
    got = [(r.row, [(cv.qualifier, cv.timestamp) for cv in r.columnValues])
           for r in first + rest]
    assert got == [(b"a", [(b"q0", 2), (b"q0", 1), (b"q1", 2), (b"q1", 1)]),
                   (b"a", [(b"q2", 2), (b"q2", 1)]), (b"b", [(b"q", 1)])]
    assert len(first) == 2
    # partial: Result.mayHaveMoreCellsInRow(), true but on a row's last piece
    assert [r.partial for r in first + rest] == [True, False, False]
    # the client's byte-sized scan joins the pieces again: one list per row
    small = Thrift2Client(t2.endpoint, max_result_bytes=1024)
    with small:
        rows = list(small.scan(table_name))
    assert [[(c.qualifier, c.timestamp) for c in row] for row in rows] == [
        [(b"q0", 2), (b"q0", 1), (b"q1", 2), (b"q1", 1), (b"q2", 2), (b"q2", 1)], [(b"q", 1)]]


def test_mutate_row_applies_put_and_delete_in_order(raw, t2, table_name):
    """mutateRow applies its mutations to one row in the given order."""
    create(t2, table_name)
    t2.put_cells(table_name, [put(b"r", b"old", 1)])
    raw.mutateRow(table_name.encode(), hbase2.TRowMutations(row=b"r", mutations=[
        hbase2.TMutation(put=hbase2.TPut(row=b"r", columnValues=[hbase2.TColumnValue(
            family=b"f", qualifier=b"new", value=b"n", timestamp=2)])),
        hbase2.TMutation(deleteSingle=hbase2.TDelete(row=b"r", columns=[
            hbase2.TColumn(family=b"f", qualifier=b"old", timestamp=1)]))]))
    assert versions(t2.get(table_name, b"r")) == [(b"f", b"new", 2)]


def test_increment_and_append(raw, t2, table_name):
    """increment/append read the newest value and log a Put at max(prev ts + 1, now)."""
    create(t2, table_name)
    inc = hbase2.TIncrement(row=b"r", columns=[hbase2.TColumnIncrement(
        family=b"f", qualifier=b"n", amount=3)])
    raw.increment(table_name.encode(), inc)
    result = raw.increment(table_name.encode(), inc)
    assert result.columnValues[0].value == (6).to_bytes(8, "big")
    app = hbase2.TAppend(row=b"r", columns=[hbase2.TColumnValue(family=b"f", qualifier=b"s",
                                                                value=b"ab")])
    raw.append(table_name.encode(), app)
    assert raw.append(table_name.encode(), app).columnValues[0].value == b"abab"


def test_descriptors_round_trip(t2, table_name):
    """A table goes in an existing namespace only. Family settings (VERSIONS, TTL, scope,
    compression, bloom, in-memory) are kept and reported as set; unset ones take HBase's
    defaults. A disabled table answers reads with only '<table> is disabled.'."""
    name = f"ns_{table_name}:{table_name}"
    fam = FamilyDescriptor(b"f", max_versions=4, ttl=3600, scope=1, compression="SNAPPY",
                           bloom_filter="ROWCOL", in_memory=True)
    with pytest.raises(Thrift2Error, match=f"NamespaceNotFoundException: ns_{table_name}"):
        t2.create_table(TableDescriptor(name, (fam,)))
    t2.create_namespace(f"ns_{table_name}")
    assert {"default", "hbase", f"ns_{table_name}"} <= set(t2.namespaces())
    t2.create_table(TableDescriptor(name, (fam, FamilyDescriptor(b"g"))))
    desc = t2.table_descriptor(name)
    assert desc.families == (fam, FamilyDescriptor(b"g", max_versions=1, ttl=FOREVER,
                                                   bloom_filter="ROW", compression="NONE"))
    assert t2.table_exists(name) and not t2.table_exists(f"{name}_missing")
    t2.disable_table(name)
    assert not t2.is_table_enabled(name)
    with pytest.raises(Thrift2Error, match=f": {name} is disabled\\.$"):
        t2.get(name, b"r")
    t2.delete_table(name)
    assert not t2.table_exists(name)


def test_region_locations(t2, table_name):
    """getAllRegionLocations lists the split ranges; getRegionLocation finds a row's region."""
    create(t2, table_name, splits=(b"k",))
    regions = t2.regions(table_name)
    assert [(r.start_key, r.end_key) for r in regions] == [(b"", b"k"), (b"k", b"")]
    assert t2.region_for(table_name, b"k").start_key == b"k"
    assert t2.region_for(table_name, b"j").start_key == b""


def test_bad_requests_change_nothing(raw, t2, table_name, recorder):
    """Unknown table or family, and a DeleteFamilyVersion without timestamp, fail with
    TIOError; the good mutations of the same call are not written either."""
    create(t2, table_name)
    with pytest.raises(Thrift2Error, match="TableNotFoundException"):
        t2.put_cells("no_such_table", [put(b"r", b"q", 1)])
    with pytest.raises(Thrift2Error, match="NoSuchColumnFamily"):
        t2.put_cells(table_name, [put(b"a", b"q", 1), put(b"b", b"q", 1, family=b"zz")])
    with pytest.raises(hbase2.TIOError, match="DeleteFamilyVersion"):
        raw.deleteSingle(table_name.encode(), hbase2.TDelete(
            row=b"a", deleteType=hbase2.TDeleteType.DELETE_FAMILY_VERSION,
            columns=[hbase2.TColumn(family=b"f")]))
    with pytest.raises(hbase2.TIllegalArgument):
        raw.getScannerRows(424242, 1)
    assert list(t2.scan(table_name)) == []
    assert recorder.for_table(table_name) == []


def test_each_transport_and_protocol(any_gateway: MiniHBase, table_name):
    """Both gateways answer over buffered/framed transport and binary/compact protocol."""
    import happybase
    ep = any_gateway.endpoints
    with Thrift2Client(ep.thrift2, ep.transport, ep.protocol) as client:
        create(client, table_name)
        client.put_cells(table_name, [put(b"r", b"q", 1)])
        assert versions(client.get(table_name, b"r")) == [(b"f", b"q", 1)]
        with pytest.raises(Thrift2Error, match="TableNotFound"):
            client.get("missing_table", b"r")
    host, port = ep.thrift.split(":")
    conn = happybase.Connection(host, int(port), transport=ep.transport, protocol=ep.protocol)
    try:
        assert list(conn.table(table_name).scan()) == [(b"r", {b"f:q": b"v1"})]
    finally:
        conn.close()
