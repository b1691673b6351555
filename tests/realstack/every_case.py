"""One real table with every case a validation from snapshot files must read as HBase's
scans do: regions pre-split and one split after the flushes (its daughters read the
parent's files through reference files: compaction is off, so they stay), store files of
two flushes per store, a delete of each type in the newer file hiding cells of the older,
a family TTL that expires some cells a few seconds after they were written, and a MOB
family whose large values were flushed to MOB files (some of them deleted)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.hbase.connect import connect
from hbase_migrate.wal.model import Cell, CellType
from realstack.hbase import RealHBase
from stackprocs.admin_client import call_admin

TTL_S = 3600
EXPIRING_IN_MS = 12_000  # the expiring cells' life left when written
MOB_THRESHOLD = 100
ROWS = 60
PRE_SPLIT, SPLIT_AT = b"r30", b"r15"
FAMILIES = (FamilyDescriptor(b"d", max_versions=3),
            FamilyDescriptor(b"t", max_versions=2, ttl=TTL_S),
            FamilyDescriptor(b"m", max_versions=3, mob=True, mob_threshold=MOB_THRESHOLD))
PUT = CellType.PUT


def row(i: int) -> bytes:
    return b"r%02d" % i


@dataclass(frozen=True)
class Written:
    """What the table holds: the cells that expire (by ``expires_at``, ms) and the delete
    markers written, and the time base of the puts."""

    base: int
    expiring: list[Cell]
    deletes: list[Cell]
    expires_at: int


def first_round(base: int, written: int) -> tuple[list[Cell], list[Cell]]:
    """Every row's versions of ``d``, a value of ``t`` that expires soon and one that does
    not, and a MOB value (odd rows over the threshold); the expiring cells apart."""
    cells, expiring = [], []
    for i in range(ROWS):
        r = row(i)
        cells += [Cell(r, b"d", b"q1", base + v, PUT, b"%s-q1-%d" % (r, v)) for v in (1, 2, 3)]
        cells += [Cell(r, b"d", b"q2", base + 1, PUT, b"q2"),
                  Cell(r, b"t", b"alive", written - 10_000, PUT, b"alive")]
        expiring.append(Cell(r, b"t", b"soon", written - TTL_S * 1000 + EXPIRING_IN_MS, PUT,
                             b"soon-%d" % i))
        cells.append(Cell(r, b"m", b"v", base + 1, PUT,
                          (b"mob-%02d-" % i) * (40 if i % 2 else 4)))
    return cells + expiring, expiring


def second_round(base: int) -> tuple[list[Cell], list[Cell]]:
    """Deletes of each type in both halves of the split region and in the other, on ``d``
    and on the MOB family, and puts newer than some of them."""
    deletes = [
        Cell(row(3), b"d", b"q1", base + 2, CellType.DELETE),
        Cell(row(18), b"d", b"q1", base + 3, CellType.DELETE_COLUMN),
        Cell(row(20), b"d", b"", base + 2, CellType.DELETE_FAMILY),
        Cell(row(33), b"d", b"", base + 1, CellType.DELETE_FAMILY_VERSION),
        Cell(row(41), b"m", b"v", base + 1, CellType.DELETE_COLUMN),
        Cell(row(5), b"m", b"", base + 1, CellType.DELETE_FAMILY),
    ]
    puts = [Cell(row(18), b"d", b"q1", base + 4, PUT, b"after-delete-column"),
            Cell(row(33), b"d", b"q3", base + 2, PUT, b"beside-family-version"),
            Cell(row(41), b"m", b"v", base + 2, PUT, b"newer-mob-" * 30)]
    return deletes + puts, deletes


def build(stack: RealHBase, endpoints: ClusterEndpoints, table: str) -> Written:
    """Create ``table`` on ``stack`` and write it: two flushes, then the split."""
    written = int(time.time() * 1000)
    base = written - 120_000
    with connect(endpoints) as client:
        client.create_table(TableDescriptor(table, FAMILIES,
                                            ((b"COMPACTION_ENABLED", b"false"),)), [PRE_SPLIT])
        cells, expiring = first_round(base, written)
        client.write_cells(table, cells)
        call_admin(stack.cluster_json, "flush", {"table": table})
        more, deletes = second_round(base)
        client.write_cells(table, more)
        call_admin(stack.cluster_json, "flush", {"table": table})
    call_admin(stack.cluster_json, "split", {"table": table, "at": SPLIT_AT.decode()})
    return Written(base, expiring, deletes, written + EXPIRING_IN_MS)
