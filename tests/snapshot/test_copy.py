"""Schema copy, table copy and cell-for-cell comparison between two embedded clusters,
over each transport (Thrift2 and HBase's own RPC), judged by reading the clusters' stores
(:mod:`tests.support.oracle`)."""

from __future__ import annotations

import gc
import threading
import time

import pytest

from hbase_migrate.cluster.client import Client
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.heavy_imports import YOUNG_OBJECTS, fewer_collections
from hbase_migrate.ranges.copy import copy_table
from hbase_migrate.snapshot.schema import SchemaMismatchError, copy_schema, split_points
from hbase_migrate.validate.compare import compare_tables
from hbase_migrate.wal.model import Cell, CellType
from minihbase.server import MiniHBase
from tests.support.oracle import compare_stored, stored_cells

pytestmark = pytest.mark.integration

SPLITS = [b"f", b"m\x00", b"t"]
T = int(time.time() * 1000) - 3_600_000  # an hour ago: well inside the one-year TTL
FAMILIES = (FamilyDescriptor(b"d", max_versions=3), FamilyDescriptor(b"m", max_versions=1,
                                                                     ttl=86400 * 365))


@pytest.fixture
def clusters(client_pair: tuple[Client, Client]) -> tuple[Client, Client]:
    """The product's clients of a source and a target, over each transport in turn."""
    return client_pair


def _fill(client: Client) -> set[tuple[bytes, bytes, bytes, int, bytes]]:
    """Write cells and return what a full-version read must show afterwards."""
    client.create_table(TableDescriptor("orders", FAMILIES), SPLITS)
    visible: set[tuple[bytes, bytes, bytes, int, bytes]] = set()
    for i, row in enumerate([b"a", b"f", b"k\xff", b"m\x00", b"s", b"zz", b"\x00bin"]):
        puts = [Cell(row, b"d", b"q", T + v, CellType.PUT, b"v%d-%d" % (i, v))
                for v in range(3)]
        puts.append(Cell(row, b"m", b"", T + 50, CellType.PUT, b"empty-qualifier"))
        client.put_cells("orders", puts)
        visible |= {(c.row, c.family, c.qualifier, c.timestamp, c.value) for c in puts}
    # One exact version deleted: it must not be copied, its neighbours must.
    client.write_cells("orders", [Cell(b"s", b"d", b"q", T + 1, CellType.DELETE)])
    visible.discard((b"s", b"d", b"q", T + 1, b"v4-1"))
    return visible


def test_copy_gives_the_target_every_visible_version(
        clusters: tuple[Client, Client], embedded_pair: tuple[MiniHBase, MiniHBase]) -> None:
    src, dst = clusters
    target = embedded_pair[1]
    expected = _fill(src)
    copy_schema(src, dst, "orders", "orders_copy")
    assert split_points(dst, "orders_copy") == SPLITS
    assert dst.table_descriptor("orders_copy").families == FAMILIES
    stats = copy_table(src, dst, "orders", "orders_copy")
    assert stats.cells == len(expected)
    assert set(stored_cells(target, "orders_copy")) == expected
    result = compare_tables(src, dst, "orders", "orders_copy")
    assert result.equal, result.examples
    assert result.source_cells == result.target_cells == len(expected)
    # A second copy changes nothing: original timestamps make it idempotent.
    copy_table(src, dst, "orders", "orders_copy")
    assert set(stored_cells(target, "orders_copy")) == expected


def test_comparison_names_each_kind_of_difference(
        clusters: tuple[Client, Client], embedded_pair: tuple[MiniHBase, MiniHBase]) -> None:
    src, dst = clusters
    _fill(src)
    copy_schema(src, dst, "orders")
    copy_table(src, dst, "orders", "orders")
    dst.write_cells("orders", [Cell(b"a", b"d", b"q", T + 2, CellType.DELETE)])
    dst.put_cells("orders", [Cell(b"zz", b"d", b"extra", 7, CellType.PUT, b"x"),
                             Cell(b"f", b"m", b"", T + 50, CellType.PUT, b"changed")])
    result = compare_tables(src, dst, "orders")
    assert (result.only_in_source, result.only_in_target, result.different_values) == (1, 1, 1)
    read = compare_stored(*embedded_pair, "orders")  # the stores agree on what differs
    assert (read.only_in_source, read.only_in_target, read.different_values) == (1, 1, 1)
    assert not result.equal
    assert f"only in source: row=a column=d:q ts={T + 2}" in result.examples
    assert "only in target: row=zz column=d:extra ts=7" in result.examples
    assert f"different value: row=f column=m: ts={T + 50}" in result.examples


def test_existing_target_with_fewer_versions_is_refused(
        clusters: tuple[Client, Client]) -> None:
    src, dst = clusters
    _fill(src)
    dst.create_table(TableDescriptor("orders", (FamilyDescriptor(b"d", max_versions=1),
                                                FAMILIES[1])))
    with pytest.raises(SchemaMismatchError, match="orders:d keeps 1 versions, the source keeps 3"):
        copy_schema(src, dst, "orders")


def test_copies_at_once_ease_the_collector_until_the_last_ends() -> None:
    before = gc.get_threshold()
    first_in, second_out = threading.Event(), threading.Event()
    seen = []

    def second() -> None:
        first_in.wait(10)
        with fewer_collections():
            seen.append((gc.get_threshold()[0], gc.get_freeze_count() > 0))
        second_out.set()

    helper = threading.Thread(target=second)
    helper.start()
    with fewer_collections():
        first_in.set()
        assert second_out.wait(10)
        # the copy that started second ended first: the collector stays eased
        assert gc.get_threshold() == (YOUNG_OBJECTS, *before[1:]) and gc.get_freeze_count()
    helper.join()
    assert seen == [(YOUNG_OBJECTS, True)]
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
