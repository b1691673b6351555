"""HBase semantics through the Thrift1 gateway, driven with happybase (the real protocol).

Each test states the HBase rule it checks; expectations are written out from the rule.
"""

from __future__ import annotations

import hashlib

import happybase
import Hbase_thrift as H
import pytest

from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import CellType
from minihbase.model import Durability

from . import stacks
from .conftest import Recorder, now_ms

pytestmark = pytest.mark.integration
# Both stacks: the embedded cluster and real Apache HBase (the specification).
hb = stacks.hb
recorder = stacks.recorder
stack = stacks.stack
t2 = stacks.t2


def make(hb: happybase.Connection, name: str, **families: dict[str, int]) -> happybase.Table:
    hb.create_table(name, families or {"cf": {"max_versions": 3}})
    return hb.table(name)


def test_versions_capped_by_family_and_returned_newest_first(hb, table_name):
    """A read returns at most the family's VERSIONS versions, newest timestamp first."""
    t = make(hb, table_name, cf={"max_versions": 3})
    for ts in (1, 5, 3, 2, 4):
        t.put(b"r", {b"cf:a": b"v%d" % ts}, timestamp=ts)
    got = t.cells(b"r", b"cf:a", versions=10, include_timestamp=True)
    assert got == [(b"v5", 5), (b"v4", 4), (b"v3", 3)]
    assert t.row(b"r") == {b"cf:a": b"v5"}


def test_same_timestamp_put_overwrites(hb, table_name):
    """A put at an existing (row, family, qualifier, timestamp) replaces the older value."""
    t = make(hb, table_name)
    t.put(b"r", {b"cf:a": b"first"}, timestamp=7)
    t.put(b"r", {b"cf:a": b"second"}, timestamp=7)
    assert t.cells(b"r", b"cf:a", versions=3, include_timestamp=True) == [(b"second", 7)]


def test_delete_column_masks_older_versions_and_later_arriving_puts(hb, table_name):
    """Thrift1 delete of 'cf:q' at ts is DeleteColumn: versions <= ts are masked, including a
    put at or below ts that arrives after the marker; newer versions stay visible."""
    t = make(hb, table_name)
    for ts in (1, 2, 3):
        t.put(b"r", {b"cf:a": b"v%d" % ts, b"cf:b": b"b"}, timestamp=ts)
    t.delete(b"r", columns=[b"cf:a"], timestamp=2)
    assert t.cells(b"r", b"cf:a", versions=3, include_timestamp=True) == [(b"v3", 3)]
    t.put(b"r", {b"cf:a": b"late"}, timestamp=2)  # arrives later, still masked
    t.put(b"r", {b"cf:a": b"new"}, timestamp=4)
    assert t.cells(b"r", b"cf:a", versions=3) == [b"new", b"v3"]
    assert t.cells(b"r", b"cf:b", versions=3) == [b"b", b"b", b"b"]


def test_family_delete_is_delete_family(hb, table_name, recorder: Recorder):
    """A family-only delete mutation is DeleteFamily: every column of the family <= ts."""
    t = make(hb, table_name, cf={"max_versions": 3}, cg={"max_versions": 3})
    t.put(b"r", {b"cf:a": b"1", b"cf:b": b"1", b"cg:c": b"1"}, timestamp=5)
    t.put(b"r", {b"cf:a": b"2"}, timestamp=9)
    t.delete(b"r", columns=[b"cf"], timestamp=6)
    assert t.row(b"r") == {b"cf:a": b"2", b"cg:c": b"1"}
    markers = [c for _, cells, _ in recorder.for_table(table_name) for c in cells
               if c.type != CellType.PUT]
    assert [(c.family, c.qualifier, c.timestamp, c.type) for c in markers] == [
        (b"cf", b"", 6, CellType.DELETE_FAMILY)]


def test_delete_all_row_ts_is_one_delete_family_per_family(hb, table_name, recorder):
    """deleteAllRowTs(row, ts) = new Delete(row, ts): the server logs one DeleteFamily per
    family at ts; cells <= ts are masked in every family, newer ones survive."""
    t = make(hb, table_name, cf={"max_versions": 3}, cg={"max_versions": 3})
    t.put(b"r", {b"cf:a": b"old", b"cg:b": b"old"}, timestamp=10)
    t.put(b"r", {b"cg:b": b"new"}, timestamp=30)
    hb.client.deleteAllRowTs(table_name.encode(), b"r", 20, {})
    assert t.row(b"r") == {b"cg:b": b"new"}
    t.put(b"r", {b"cf:a": b"late"}, timestamp=15)  # below the markers: masked
    assert t.row(b"r") == {b"cg:b": b"new"}
    _, last_cells, _ = recorder.for_table(table_name)[-2]
    assert sorted((c.family, c.qualifier, c.timestamp, c.type) for c in last_cells) == [
        (b"cf", b"", 20, CellType.DELETE_FAMILY), (b"cg", b"", 20, CellType.DELETE_FAMILY)]


def test_delete_all_ts_column_and_family(hb, table_name):
    """deleteAllTs('cf:q', ts) is DeleteColumn <= ts; deleteAllTs('cf', ts) is DeleteFamily."""
    t = make(hb, table_name)
    t.put(b"r", {b"cf:a": b"1", b"cf:b": b"1"}, timestamp=1)
    t.put(b"r", {b"cf:a": b"3", b"cf:b": b"3"}, timestamp=3)
    hb.client.deleteAllTs(table_name.encode(), b"r", b"cf:a", 3, {})
    assert t.row(b"r") == {b"cf:b": b"3"}
    hb.client.deleteAllTs(table_name.encode(), b"r", b"cf", 2, {})
    assert t.cells(b"r", b"cf:b", versions=3) == [b"3"]


def test_empty_qualifier_column(hb, table_name):
    """'cf:' names the column with an empty qualifier (two parts), distinct from 'cf:x'."""
    t = make(hb, table_name)
    t.put(b"r", {b"cf:": b"empty", b"cf:x": b"x"})
    assert t.row(b"r", columns=[b"cf:"]) == {b"cf:": b"empty"}
    t.delete(b"r", columns=[b"cf:"])
    assert t.row(b"r") == {b"cf:x": b"x"}


def test_family_only_put_ignored_by_mutate_row(hb, table_name):
    """mutateRowTs logs and ignores a put without qualifier; the rest of the call applies."""
    make(hb, table_name)
    muts = [H.Mutation(column=b"cf", value=b"ignored"), H.Mutation(column=b"cf:a", value=b"1")]
    hb.client.mutateRowTs(table_name.encode(), b"r", muts, 5, {})
    assert hb.table(table_name).row(b"r", include_timestamp=True) == {b"cf:a": (b"1", 5)}


def test_family_only_put_fails_mutate_rows_before_any_write(hb, table_name, recorder):
    """mutateRowsTs refuses a put without qualifier while building the batch: the whole
    call fails (IllegalArgument) and no row of it is written."""
    t = make(hb, table_name)
    batches = [H.BatchMutation(row=b"a", mutations=[H.Mutation(column=b"cf:a", value=b"1")]),
               H.BatchMutation(row=b"b", mutations=[H.Mutation(column=b"cf", value=b"2")])]
    with pytest.raises(H.IllegalArgument):
        hb.client.mutateRowsTs(table_name.encode(), batches, 5, {})
    assert list(t.scan()) == []
    assert recorder.for_table(table_name) == []


def test_mutate_rows_sends_puts_before_deletes(hb, table_name, recorder):
    """mutateRowsTs sends all Puts, then all Deletes; mutateRowTs sends the Delete first."""
    make(hb, table_name)
    name = table_name.encode()
    batch = [H.BatchMutation(row=b"r1", mutations=[
        H.Mutation(isDelete=True, column=b"cf:a"), H.Mutation(column=b"cf:b", value=b"v")]),
        H.BatchMutation(row=b"r2", mutations=[H.Mutation(column=b"cf:c", value=b"w")])]
    hb.client.mutateRowsTs(name, batch, 50, {})
    kinds = [(c.row, c.type) for _, cells, _ in recorder.for_table(table_name) for c in cells]
    assert kinds == [(b"r1", CellType.PUT), (b"r2", CellType.PUT),
                     (b"r1", CellType.DELETE_COLUMN)]
    assert len(recorder.for_table(table_name)) == 1  # one call, one region: one WAL edit
    hb.client.mutateRowTs(name, b"r3", [H.Mutation(column=b"cf:b", value=b"v"),
                                        H.Mutation(isDelete=True, column=b"cf:a")], 60, {})
    kinds = [(c.row, c.type) for _, cells, _ in recorder.for_table(table_name)[1:]
             for c in cells]
    assert kinds == [(b"r3", CellType.DELETE_COLUMN), (b"r3", CellType.PUT)]


def test_write_to_wal_false_is_skip_wal(hb, table_name, recorder):
    """writeToWAL=false gives the mutation SKIP_WAL durability (still stored and readable)."""
    t = make(hb, table_name)
    with t.batch(wal=False) as b:
        b.put(b"r", {b"cf:a": b"1"})
    t.put(b"s", {b"cf:a": b"2"})
    assert [d for _, _, d in recorder.for_table(table_name)] == [Durability.SKIP_WAL,
                                                                 Durability.SYNC_WAL]
    assert t.row(b"r") == {b"cf:a": b"1"}


def test_time_range_reads_are_below_timestamp(hb, table_name):
    """*Ts reads use the time range [0, ts): a version at exactly ts is excluded."""
    t = make(hb, table_name)
    for ts in (10, 20, 30):
        t.put(b"r%d" % ts, {b"cf:a": b"v%d" % ts}, timestamp=ts)
        t.put(b"r", {b"cf:a": b"v%d" % ts}, timestamp=ts)
    assert t.cells(b"r", b"cf:a", versions=3, timestamp=30) == [b"v20", b"v10"]
    assert t.row(b"r", timestamp=20) == {b"cf:a": b"v10"}
    assert [k for k, _ in t.scan(timestamp=20)] == [b"r", b"r10"]


def test_scan_order_bounds_prefix_columns_limit(hb, table_name, stack):
    """Rows come in unsigned byte order; [row_start, row_stop); prefix; columns; limit.
    A filter string is HBase's filter language: real HBase applies it (KeyOnlyFilter empties
    the values); the embedded cluster refuses it by name (a known gap)."""
    t = make(hb, table_name)
    rows = [b"\xff", b"\x80", b"\x00", b"a", b"ab", b"abc", b"b"]
    for row in rows:
        t.put(row, {b"cf:x": row, b"cf:y": b"y"})
    assert [k for k, _ in t.scan(batch_size=2)] == sorted(rows)
    assert [k for k, _ in t.scan(row_start=b"a", row_stop=b"b")] == [b"a", b"ab", b"abc"]
    assert [k for k, _ in t.scan(row_prefix=b"ab")] == [b"ab", b"abc"]
    assert [k for k, _ in t.scan(row_start=b"\x80")] == [b"\x80", b"\xff"]
    assert list(t.scan(row_prefix=b"b", columns=[b"cf:y"])) == [(b"b", {b"cf:y": b"y"})]
    assert [k for k, _ in t.scan(limit=3)] == sorted(rows)[:3]
    partial = list(t.scan(row_prefix=b"abc", scan_batching=1))
    assert partial == [(b"abc", {b"cf:x": b"abc"}), (b"abc", {b"cf:y": b"y"})]
    if stack.kind == "real":
        assert list(t.scan(row_prefix=b"b", filter=b"KeyOnlyFilter()")) == [
            (b"b", {b"cf:x": b"", b"cf:y": b""})]
    else:
        with pytest.raises(H.IOError, match="filter"):
            list(t.scan(filter=b"KeyOnlyFilter()"))


def test_counters(hb, table_name):
    """atomicIncrement adds to an 8-byte big-endian long; the new cell's timestamp is
    max(previous ts + 1, now)."""
    t = make(hb, table_name)
    assert t.counter_inc(b"r", b"cf:n", 5) == 5
    assert t.counter_inc(b"r", b"cf:n", -7) == -2
    future = now_ms() + 3_600_000
    t.put(b"f", {b"cf:n": (41).to_bytes(8, "big")}, timestamp=future)
    assert t.counter_inc(b"f", b"cf:n") == 42
    assert t.cells(b"f", b"cf:n", include_timestamp=True)[0] == ((42).to_bytes(8, "big"),
                                                                 future + 1)
    t.put(b"s", {b"cf:n": b"abc"})
    with pytest.raises(H.IOError, match="not a long"):
        t.counter_inc(b"s", b"cf:n")


def test_ttl_hides_expired_cells(hb, table_name):
    """A cell is expired (invisible) once its timestamp is older than now - TTL."""
    t = make(hb, table_name, cf={"max_versions": 3, "time_to_live": 60})
    now = now_ms()
    t.put(b"r", {b"cf:old": b"o"}, timestamp=now - 120_000)
    t.put(b"r", {b"cf:new": b"n"}, timestamp=now)
    assert t.row(b"r") == {b"cf:new": b"n"}
    assert hb.table(table_name).families()[b"cf"]["time_to_live"] == 60


def test_regions_and_routing(hb, t2: Thrift2Client, table_name, recorder):
    """Split keys give regions [start, end); getTableRegions lists them with HBase's region
    names (encoded name = MD5 hex of 'table,startKey,regionId'); writes go to the region
    whose range holds the row."""
    from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
    t2.create_table(TableDescriptor(table_name, (FamilyDescriptor(b"cf"),)), [b"m", b"g"])
    regions = hb.table(table_name).regions()
    assert [(r["start_key"], r["end_key"]) for r in regions] == [
        (b"", b"g"), (b"g", b"m"), (b"m", b"")]
    for r in regions:
        prefix = b"%s,%s,%d" % (table_name.encode(), r["start_key"], r["id"])
        assert r["name"] == prefix + b"." + hashlib.md5(prefix).hexdigest().encode() + b"."
    t = hb.table(table_name)
    for row in (b"a", b"g", b"l", b"m", b"z"):
        t.put(row, {b"cf:q": b"1"})
    routed = [(cells[0].row, region.start_key) for region, cells, _ in
              recorder.for_table(table_name)]
    assert routed == [(b"a", b""), (b"g", b"g"), (b"l", b"g"), (b"m", b"m"), (b"z", b"m")]
    assert hb.client.getTableRegions(b"no_such_table") == []


def test_table_admin(hb, table_name):
    """create/list/describe/disable/enable/delete: a table must be disabled to be deleted,
    and a disabled table refuses reads (TableNotEnabledException) and writes (the client's
    retries end in NotServingRegionException)."""
    hb.create_table(table_name, {"cf": {"max_versions": 2, "compression": "GZ",
                                        "bloom_filter_type": "ROWCOL", "in_memory": True}})
    assert table_name.encode() in hb.tables()
    fam = hb.table(table_name).families()[b"cf"]
    assert (fam["max_versions"], fam["compression"], fam["bloom_filter_type"],
            fam["in_memory"]) == (2, b"GZ", b"ROWCOL", True)
    with pytest.raises(H.AlreadyExists):
        hb.create_table(table_name, {"cf": {}})
    with pytest.raises(H.IOError, match="TableNotDisabled"):
        hb.delete_table(table_name)
    hb.disable_table(table_name)
    assert not hb.is_table_enabled(table_name)
    with pytest.raises(H.IOError, match=f"TableNotEnabledException: {table_name} is disabled"):
        hb.table(table_name).row(b"r")
    with pytest.raises(H.IOError, match=r"RetriesExhaustedWithDetailsException: Failed 1 "
                       r"action: .*NotServingRegionException"):
        hb.table(table_name).put(b"r", {b"cf:a": b"1"})
    hb.enable_table(table_name)
    hb.table(table_name).put(b"r", {b"cf:a": b"1"})
    hb.delete_table(table_name, disable=True)
    assert table_name.encode() not in hb.tables()


def test_major_compact_keeps_what_reads_see(hb, table_name):
    """A major compaction drops masked, surplus and marker cells without changing reads;
    afterwards a Delete can no longer resurface a version beyond VERSIONS."""
    t = make(hb, table_name, cf={"max_versions": 2})
    for ts in (1, 2, 3):
        t.put(b"r", {b"cf:a": b"v%d" % ts}, timestamp=ts)
    t.delete(b"r", columns=[b"cf:b"], timestamp=1)
    before = t.cells(b"r", b"cf:a", versions=5)
    hb.compact_table(table_name, major=True)
    assert t.cells(b"r", b"cf:a", versions=5) == before == [b"v3", b"v2"]


def test_bad_requests_change_nothing(hb, table_name, recorder):
    """Unknown table/family and malformed columns fail with the IDL's IOError or
    IllegalArgument, and nothing is written."""
    t = make(hb, table_name)
    with pytest.raises(H.IOError, match="TableNotFoundException"):
        hb.table("no_such_table").put(b"r", {b"cf:a": b"1"})
    with pytest.raises(H.IOError, match="NoSuchColumnFamily"):
        t.put(b"r", {b"cf:a": b"1", b"zz:a": b"1"})
    with pytest.raises(H.IllegalArgument):
        hb.client.mutateRowTs(table_name.encode(), b"r", [H.Mutation(column=b":q", value=b"")],
                              1, {})
    with pytest.raises(H.IOError, match="NoSuchColumnFamily"):
        t.row(b"r", columns=[b"nope:a"])
    with pytest.raises(H.IllegalArgument):
        hb.client.scannerGetList(987654, 1)
    assert list(t.scan()) == []
    assert recorder.for_table(table_name) == []
