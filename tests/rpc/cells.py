"""Cells shared by the tests of HBase's RPC, on real HBase and on the embedded cluster."""

from __future__ import annotations

from collections.abc import Iterable

from hbase_migrate.cluster.descriptors import FamilyDescriptor
from hbase_migrate.wal.model import Cell, CellType

SPLITS = [b"g", b"p"]  # the tables' split keys
FAMILIES = (FamilyDescriptor(b"f", max_versions=10), FamilyDescriptor(b"g", max_versions=10))
ROWS = [b"a", b"g", b"h", b"p", b"q", b"z"]  # around the split keys g and p


def every_kind(rows: list[bytes]) -> list[Cell]:
    """Puts of several versions in two families, then one delete of each type."""
    put = CellType.PUT
    cells = [Cell(r, b"f", q, ts, put, b"%s-%s-%d" % (r, q, ts))
             for r in rows for q in (b"q1", b"q2") for ts in range(100, 105)]
    cells += [Cell(r, b"g", b"x", ts, put, b"g%d" % ts) for r in rows for ts in (100, 101)]
    cells += [Cell(rows[0], b"f", b"q1", 103, CellType.DELETE),
              Cell(rows[1], b"f", b"q2", 102, CellType.DELETE_COLUMN),
              Cell(rows[2], b"f", b"", 101, CellType.DELETE_FAMILY),
              Cell(rows[3], b"g", b"", 100, CellType.DELETE_FAMILY_VERSION)]
    return cells


def flat(pieces: Iterable[list[Cell]]) -> list[Cell]:
    return [c for piece in pieces for c in piece]
