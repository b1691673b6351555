"""The linked-list workload and its verifier, on both stacks: a complete table verifies with
every live node REFERENCED; a lost node, a lost delete and a lost list close each show."""

from __future__ import annotations

import threading
import uuid
from collections import Counter

from hbase_migrate.soak.linked_lists import (
    FAMILY,
    LIST,
    PREV,
    SPLITS,
    LinkedListWriter,
    ListCounts,
    ListSpec,
    verify,
)
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType
from minihbase.server import MiniHBase

from .stacks import stack, t2  # noqa: F401  (fixtures)


def _written(t2: Thrift2Client, steps: int = 1500) -> tuple[LinkedListWriter, str]:  # noqa: F811
    table = f"lists_{uuid.uuid4().hex[:8]}"
    writer = LinkedListWriter(t2, ListSpec(table, seed=3, length=8, open_lists=3,
                                           delete_every=2, rewrite_every=2))
    writer.ensure_table()
    for _ in range(steps):
        writer.step()
    writer.close_open_lists()
    return writer, table


def _rows(t2: Thrift2Client, table: str) -> dict[bytes, dict[bytes, bytes]]:  # noqa: F811
    rows: dict[bytes, dict[bytes, bytes]] = {}
    for piece in t2.scan(table, max_versions=1):
        for c in piece:
            rows.setdefault(c.row, {})[c.qualifier] = c.value
    return rows


def test_a_complete_table_verifies_and_every_list_is_a_ring(t2: Thrift2Client  # noqa: F811
                                                             ) -> None:
    writer, table = _written(t2)
    counts = writer.counts
    assert counts.lists_deleted > 5 and counts.lists_rewritten > 2, counts
    rows = _rows(t2, table)
    # an independent walk: follow each node's predecessor until the walk comes back
    lists = Counter(r[LIST] for r in rows.values())
    for key, row in rows.items():
        seen, at = 0, key
        while True:
            at, seen = rows[at][PREV], seen + 1
            assert rows[at][LIST] == row[LIST]
            if at == key:
                break
        assert seen == lists[row[LIST]]
    assert len(rows) == counts.live_nodes
    # nodes in every region
    bounds = [b"", *SPLITS]
    per_region = Counter(sum(key >= b for b in bounds) for key in rows)
    assert sorted(per_region) == list(range(1, len(bounds) + 1))
    found = verify(t2, table)
    assert (found.referenced, found.unreferenced, found.undefined) == (len(rows), 0, 0)
    assert found.lines("t")[1:] == [f"\tREFERENCED={len(rows)}", "\tUNREFERENCED=0",
                                    "\tUNDEFINED=0"]


def test_lost_writes_show_as_undefined_and_unreferenced(t2: Thrift2Client  # noqa: F811
                                                        ) -> None:
    writer, table = _written(t2, steps=400)
    rows = _rows(t2, table)
    live = len(rows)
    # a lost node: its successor names it (UNDEFINED), its predecessor is named by no one
    lost = sorted(rows)[len(rows) // 2]
    t2.write_cells(table, [Cell(lost, FAMILY, b"", writer._ts(), CellType.DELETE_FAMILY)])
    found = verify(t2, table)
    assert (found.referenced, found.unreferenced, found.undefined) == (live - 2, 1, 1)
    assert any(e.startswith("UNDEFINED") for e in found.examples)
    # a lost delete: one node of a deleted list stays (its predecessor is gone)
    deleted = next(iter(writer._deleted.values()))
    came_back = deleted[3]
    t2.put_cells(table, [Cell(came_back, FAMILY, PREV, writer._ts(), CellType.PUT,
                              deleted[2]),
                         Cell(came_back, FAMILY, LIST, writer._ts(), CellType.PUT, b"x")])
    found = verify(t2, table)
    assert (found.referenced, found.unreferenced, found.undefined) == (live - 2, 2, 2)


def test_run_writes_until_stopped_and_closes_its_lists(t2: Thrift2Client  # noqa: F811
                                                       ) -> None:
    table = f"lists_{uuid.uuid4().hex[:8]}"
    writer = LinkedListWriter(t2, ListSpec(table, seed=5, length=50))
    writer.ensure_table()
    stop = threading.Event()
    counts = writer.run(stop, on_step=lambda c: c.nodes_written >= 120 and stop.set())
    assert counts.nodes_written >= 120 and counts.lists_closed >= 4  # 2 full + 4 open ones
    found = verify(t2, table)
    assert (found.referenced, found.unreferenced, found.undefined) == (counts.live_nodes, 0, 0)


def test_the_writer_rides_out_its_gateway_going_away(mini: MiniHBase) -> None:
    """A write the cluster refuses is written again, and the lists change only once a write
    was acknowledged: the count the writer keeps stays the truth (on real HBase a killed
    region server fails the gateway's puts for seconds)."""
    table = f"lists_{uuid.uuid4().hex[:8]}"
    assert mini.endpoints.thrift2 is not None
    client = Thrift2Client(mini.endpoints.thrift2, retries=1, backoff=0.05)
    writer = LinkedListWriter(client, ListSpec(table, seed=9, length=6, delete_every=1,
                                               rewrite_every=1))
    writer.ensure_table()
    stop, refused = threading.Event(), threading.Event()

    def outage(counts: ListCounts) -> None:
        if counts.nodes_written >= 150 and not refused.is_set():
            refused.set()
            mini.stop_service("thrift2")
            threading.Timer(1.5, mini.start_service, ("thrift2",)).start()
        if counts.nodes_written >= 400:
            stop.set()

    counts = writer.run(stop, on_step=outage)
    client.close()
    assert refused.is_set() and counts.lists_deleted > 0
    with Thrift2Client(mini.endpoints.thrift2) as reader:
        found = verify(reader, table)
    assert (found.referenced, found.unreferenced, found.undefined) == (counts.live_nodes, 0, 0)
