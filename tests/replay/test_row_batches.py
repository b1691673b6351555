"""A replay batch goes to the transport as row mutations in WAL order (``write_rows``): over
HBase's own RPC and over the Thrift2 gateway, the target ends holding what the same cells
written one per call, in WAL order, leave on another cluster: every delete type, equal
timestamps (a later put of a column at a timestamp wins, a marker masks the puts it covers),
a row alternating puts and deletes, a row's mutations spread over the batch."""

from __future__ import annotations

import random
from collections import Counter

from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.replay.mutations import WalPosition, mutation_cells, to_mutations
from hbase_migrate.replay.targets import open_target
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType, type_name
from minihbase.server import MiniHBase
from tests.support.oracle import stored_cells
from tests.support.replay import FAMILIES

KINDS = (CellType.PUT,) * 5 + (CellType.DELETE, CellType.DELETE_COLUMN,
                               CellType.DELETE_FAMILY, CellType.DELETE_FAMILY_VERSION)


def entries(seed: int, count: int) -> list[list[Cell]]:
    """WAL entries over a few rows, columns and timestamps (many collisions): an entry
    of one row, its cells puts or deletes in any mix."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        row = b"r%d" % rng.randrange(12)
        cells = []
        for _ in range(rng.randrange(1, 5)):
            kind = rng.choice(KINDS)
            family = rng.choice((b"d", b"m"))
            qualifier = b"" if kind in (CellType.DELETE_FAMILY,
                                        CellType.DELETE_FAMILY_VERSION) \
                else rng.choice((b"a", b"b", b"c"))
            value = b"v%d" % i if kind == CellType.PUT else b""
            ts = 1000 + i // 4 + rng.randrange(4)  # equal timestamps near one another
            cells.append(Cell(row, family, qualifier, ts, kind, value))
        out.append(cells)
    return out


def test_a_batch_of_row_mutations_lands_as_the_same_cells_sent_one_by_one(
        embedded_pair: tuple[MiniHBase, MiniHBase], transport: str) -> None:
    reference, target_cluster = embedded_pair
    table = "rows"
    for cluster in embedded_pair:
        assert cluster.endpoints.thrift2
        with Thrift2Client(cluster.endpoints.thrift2) as gateway:
            gateway.create_table(TableDescriptor(table, FAMILIES))
    wal = entries(7, 400)
    batches = [wal[at:at + 50] for at in range(0, len(wal), 50)]
    assert reference.endpoints.thrift2
    with Thrift2Client(reference.endpoints.thrift2) as one_by_one:  # the expectation
        for cells in wal:
            for cell in cells:
                one_by_one.write_cells(table, [cell])
    target = open_target(target_cluster.endpoints)
    written: Counter[str] = Counter()
    try:
        for n, batch in enumerate(batches):
            mutations = [m for i, cells in enumerate(batch)
                         for m in to_mutations(cells, WalPosition("wal", n, i))]
            assert mutation_cells(mutations) == sum(map(len, batch))
            written.update(target.apply(table, mutations).cells)
    finally:
        target.close()
    assert written == Counter(type_name(c.type) for cells in wal for c in cells)
    expected = stored_cells(reference, table)
    assert len(expected) > 40  # puts survive the deletes: the comparison says something
    assert stored_cells(target_cluster, table) == expected
