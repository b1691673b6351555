"""A second client of HBase's RPC no one here wrote (issue 58): hbase-driver 1.1.1 from PyPI
(its own encoder of requests and filters) puts, gets, scans through filters and limits,
deletes, increments, appends and checks-and-puts against real Apache HBase 2.6.1 (the
session's ``real_hbase``) and the embedded cluster, held to the same expectations written
here by hand from the data and HBase's semantics (a ValueFilter may return an older
version). The table has one region and the scans start at a row: hbase-driver 1.1.1 looks
up a scan without a start row in hbase:meta from ``<table>,``, a bound HBase's meta
comparator puts after the table's first region, so it finds no region (and scans a
pre-split table from its second region), on real HBase as on the embedded cluster
(``tests/rpc/test_locate_scripted.py``: the comparator)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hbasedriver.client.client import Client
from hbasedriver.client.table import Table
from hbasedriver.filter.binary_comparator import BinaryComparator
from hbasedriver.filter.column_prefix_filter import ColumnPrefixFilter
from hbasedriver.filter.compare_operator import CompareOperator
from hbasedriver.filter.filter import Filter
from hbasedriver.filter.filter_list import FilterList
from hbasedriver.filter.first_key_only_filter import FirstKeyOnlyFilter
from hbasedriver.filter.key_only_filter import KeyOnlyFilter
from hbasedriver.filter.page_filter import PageFilter
from hbasedriver.filter.prefix_filter import PrefixFilter
from hbasedriver.filter.single_column_value_filter import SingleColumnValueFilter
from hbasedriver.filter.value_filter import ValueFilter
from hbasedriver.hbase_constants import HConstants
from hbasedriver.operations.append import Append
from hbasedriver.operations.delete import Delete
from hbasedriver.operations.get import Get
from hbasedriver.operations.increment import CheckAndPut, Increment
from hbasedriver.operations.put import Put
from hbasedriver.operations.scan import Scan

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.thrift.thrift2 import Thrift2Client
from minihbase.regionserver import WalSettings
from minihbase.zookeeper import ZooKeeperServer
from tests.support.minicluster import EmbeddedClusters

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module",
                params=["minihbase", pytest.param("real", marks=pytest.mark.realstack)])
def described(request: pytest.FixtureRequest,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The stack: hbase-driver 1.1.1 looks for the master under ``/hbase`` whatever parent
    it is given, so the embedded cluster gets a ZooKeeper of its own to register there."""
    if request.param == "real":
        yield {**request.getfixturevalue("real_hbase").described, "stack": "real"}
        return
    with ZooKeeperServer(tmp_path_factory.mktemp("driver-zk")) as zookeeper, \
            EmbeddedClusters(tmp_path_factory.mktemp("driver")) as clusters:
        mini = clusters(zookeeper=zookeeper.address, znode_parent="/hbase",
                        wal=WalSettings(region_servers=2, roll_period=3600))
        yield {**mini.describe(), "stack": "minihbase"}

# row -> (family, qualifier, timestamp, value)
DATA = {b"a1": [(b"f", b"q1", 10, b"apple"), (b"f", b"q1", 20, b"apricot"),
                (b"f", b"q2", 10, b"10"), (b"g", b"x", 10, b"gx")],
        b"a2": [(b"f", b"q1", 10, b"banana"), (b"f", b"r1", 10, b"cherry")],
        b"b1": [(b"f", b"q1", 10, b"apple")],
        b"m1": [(b"f", b"q1", 10, b"melon"), (b"g", b"x", 10, b"gm")],
        b"n1": [(b"f", b"q1", 30, b"apple"), (b"f", b"q1", 40, b"nut")],
        b"z9": [(b"g", b"x", 10, b"gz")]}
Rows = list[tuple[bytes, dict[bytes, dict[bytes, bytes]]]]


def driver_table(described: dict[str, Any], splits: list[bytes]) -> Iterator[Table]:
    """A table of ``splits``, DATA put into it by hbase-driver."""
    name = f"driver_{uuid.uuid4().hex[:8]}"
    with Thrift2Client(described["thrift2"]) as t2:
        t2.create_table(TableDescriptor(name, (FamilyDescriptor(b"f", max_versions=3),
                                               FamilyDescriptor(b"g"))), splits)
    config = {HConstants.ZOOKEEPER_QUORUM: described["zookeeper"],
              HConstants.ZOOKEEPER_ZNODE_PARENT: described["znode_parent"]}
    with Client(config) as client, client.get_table(b"default", name.encode()) as htable:
        for row, cells in DATA.items():
            put = Put(row)
            for family, qualifier, ts, value in cells:
                put.add_column(family, qualifier, value, ts)
            assert htable.put(put)
        try:
            yield htable
        finally:  # the ZooKeeper session its scans opened, which closing leaves running
            if htable.cluster_conn is not None:
                htable.cluster_conn.registry.zk.stop()


@pytest.fixture(scope="module")
def table(described: dict[str, Any]) -> Iterator[Table]:
    yield from driver_table(described, [])


@pytest.fixture(scope="module")
def two_regions(described: dict[str, Any]) -> Iterator[Table]:
    """DATA in two regions, [, m) and [m, ): a1, a2 and b1 in the first."""
    yield from driver_table(described, [b"m"])


def scan(table: Table, scan_: Scan) -> Rows:
    with table.scan(scan_) as scanner:
        return [(row.rowkey, {f: dict(q) for f, q in row.kv.items()}) for row in scanner]


def filtered(filter_: Filter) -> Scan:
    scan_ = Scan(b"a")
    scan_.set_filter(filter_)
    return scan_


A1 = (b"a1", {b"f": {b"q1": b"apricot", b"q2": b"10"}, b"g": {b"x": b"gx"}})
A2 = (b"a2", {b"f": {b"q1": b"banana", b"r1": b"cherry"}})
B1 = (b"b1", {b"f": {b"q1": b"apple"}})
M1 = (b"m1", {b"f": {b"q1": b"melon"}, b"g": {b"x": b"gm"}})
N1 = (b"n1", {b"f": {b"q1": b"nut"}})
Z9 = (b"z9", {b"g": {b"x": b"gz"}})


def test_reads_through_filters(table: Table) -> None:
    assert scan(table, Scan(b"a")) == [A1, A2, B1, M1, N1, Z9]
    assert scan(table, filtered(PrefixFilter(b"a"))) == [A1, A2]
    assert scan(table, filtered(PageFilter(2))) == [A1, A2]
    # the family's versions are offered to the filter: a1's and n1's older apples are read
    assert scan(table, filtered(ValueFilter(CompareOperator.EQUAL,
                                            BinaryComparator(b"apple")))) == [
        (b"a1", {b"f": {b"q1": b"apple"}}), (b"b1", {b"f": {b"q1": b"apple"}}),
        (b"n1", {b"f": {b"q1": b"apple"}})]
    # the newest q1 is apple in b1 alone; z9, without q1, is left out (filterIfMissing)
    assert scan(table, filtered(SingleColumnValueFilter(
        b"f", b"q1", CompareOperator.EQUAL, BinaryComparator(b"apple"),
        filter_if_missing=True, latest_version_only=True))) == [B1]
    assert scan(table, filtered(FilterList(FilterList.Operator.MUST_PASS_ALL, [
        ColumnPrefixFilter(b"q"), FirstKeyOnlyFilter()]))) == [
        (b"a1", {b"f": {b"q1": b"apricot"}}), (b"a2", {b"f": {b"q1": b"banana"}}),
        B1, (b"m1", {b"f": {b"q1": b"melon"}}), N1]
    assert scan(table, filtered(KeyOnlyFilter()))[0] == (
        b"a1", {b"f": {b"q1": b"", b"q2": b""}, b"g": {b"x": b""}})
    paged = Scan(b"a")
    paged.set_limit(3)  # hbase-driver's rows per call (number_of_rows), not a row limit
    assert scan(table, paged) == [A1, A2, B1, M1, N1, Z9]


def test_gets_deletes_and_deltas(table: Table) -> None:
    got = table.get(Get(b"a1"))
    assert got is not None and got.kv == A1[1]
    assert table.exists(Get(b"a1")) and not table.exists(Get(b"zz"))
    assert table.delete(Delete(b"a2").add_column(b"f", b"r1"))
    after = table.get(Get(b"a2"))
    assert after is not None and after.kv == {b"f": {b"q1": b"banana"}}
    assert table.increment(Increment(b"c").add_column(b"f", b"n", 5)) == 5
    assert table.increment(Increment(b"c").add_column(b"f", b"n", 3)) == 8
    table.append(Append(b"c").add_column(b"f", b"s", b"ab"))
    appended = table.append(Append(b"c").add_column(b"f", b"s", b"cd"))
    assert appended is not None and appended.get(b"f", b"s") == b"abcd"
    check = CheckAndPut(b"c")
    check.set_check(b"f", b"s", b"abcd")
    check.set_put(Put(b"c").add_column(b"f", b"ok", b"yes"))
    assert table.check_and_put(check)
    row = table.get(Get(b"c"))
    assert row is not None and row.get(b"f", b"ok") == b"yes"


def test_a_scan_of_two_regions_returns_every_row(two_regions: Table) -> None:
    """Each region's scanner is closed by the server with the region's last rows, and
    hbase-driver then asks it once more (the row after the last, or its next batch): HBase
    answers a call on a scanner it closed with an empty reply, not an error (issue 70).
    hbase-driver 1.1.1 reads the region its scan starts in (it looks for the next region at
    the row after the last it returned, which is in the same region, and stops there, on
    real HBase too), so every row of the table is read by a scan starting in each region
    (at m1, not m: it looks a row up in hbase:meta backwards from ``<table>,<row>,``, which
    for a region's start key finds the region before it)."""
    read: Rows = []
    for start, rows in ((b"a", [A1, A2, B1]), (b"m1", [M1, N1, Z9])):
        assert scan(two_regions, Scan(start)) == rows  # a call per row
        with two_regions.scan(Scan(start)) as scanner:
            batch = scanner.next(100)  # more rows than the region holds
            assert scanner.next(100) == []  # asked again after the region's end
        read += [(r.rowkey, {f: dict(q) for f, q in r.kv.items()}) for r in batch]
    assert read == [A1, A2, B1, M1, N1, Z9]
