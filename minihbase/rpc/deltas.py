"""Increments and appends of the embedded region servers, as HBase's ``HRegion`` reckons
them (``reckonDeltasByStore``, branch-2.6): per family, the columns' newest values within the
mutation's time range are read; an increment adds its 8-byte big-endian amount to the
8-byte value (Java's long arithmetic), an append adds its bytes after the value; a new cell
takes ``max(current timestamp + 1, now)``, or, where there was no value, the delta's own
timestamp (now when it has none). The new cells are written as puts and returned, by family
then qualifier. Two deltas of one column in one mutation both start from the value read."""

from __future__ import annotations

import threading
from collections.abc import Callable

from hbase_migrate.rpc.messages import LATEST_TIMESTAMP
from hbase_migrate.rpc.multi import INCREMENT, MutationAction
from hbase_migrate.wal.model import Cell, CellType
from minihbase.cluster import Cluster
from minihbase.model import ClientCell, ColumnSelection, Mutation, Query
from minihbase.rpc.listener import DO_NOT_RETRY, H, ServiceError

LOCK = threading.Lock()  # a delta reads, then writes: one at a time (HBase locks the row)
Apply = Callable[[MutationAction], None]  # applies a put or delete
_LONG = 8


def _long(cell: Cell) -> int:
    if len(cell.value) != _LONG:
        raise ServiceError(DO_NOT_RETRY, f"Field is not a long, it's {len(cell.value)} "
                           "bytes wide", do_not_retry=True)
    return int.from_bytes(cell.value, "big", signed=True)


def _reckon(kind: int, delta: Cell, current: Cell | None, now: int) -> Cell:
    """The cell an increment or append of ``delta`` writes over ``current``."""
    if kind == INCREMENT:
        total = _long(delta) + (_long(current) if current is not None else 0)
        value = ((total + 2**63) % 2**64 - 2**63).to_bytes(_LONG, "big", signed=True)
    else:
        value = (current.value if current is not None else b"") + delta.value
    if current is None:
        stamp = now if delta.timestamp == LATEST_TIMESTAMP else delta.timestamp
    else:
        stamp = max(current.timestamp + 1, now)
    return Cell(delta.row, delta.family, delta.qualifier, stamp, CellType.PUT, value)


def apply_delta(cluster: Cluster, table: str, action: MutationAction) -> list[Cell]:
    """Apply an increment or append to ``table``; the cells it wrote."""
    with LOCK:
        return apply_locked(cluster, table, action)


def apply_locked(cluster: Cluster, table: str, action: MutationAction) -> list[Cell]:
    """:func:`apply_delta` for a caller holding ``LOCK``."""
    families = {f.name for f in cluster.table(table).descriptor.families}
    by_family: dict[bytes, list[Cell]] = {}
    for cell in action.cells:
        if cell.family not in families:
            raise ServiceError(H + "regionserver.NoSuchColumnFamilyException",
                               f"Column family {cell.family.decode('latin-1')} does not exist "
                               f"in region of table {table}", do_not_retry=True)
        by_family.setdefault(cell.family, []).append(cell._replace(row=action.row))
    low, high = action.time_range or (0, LATEST_TIMESTAMP)
    written: list[Cell] = []
    now = cluster.clock()
    for family in sorted(by_family):
        deltas = sorted(by_family[family], key=lambda c: c.qualifier)
        columns = ColumnSelection()
        for delta in deltas:
            columns.add_column(family, delta.qualifier)
        current = {c.qualifier: c for c in cluster.get(
            table, action.row, Query(columns=columns, min_ts=low, max_ts=high,
                                     max_versions=1))}
        written += [_reckon(action.kind, d, current.get(d.qualifier), now) for d in deltas]
    if written:
        cluster.mutate(table, [Mutation(action.row, tuple(
            ClientCell(c.family, c.qualifier, c.timestamp, c.type, c.value)
            for c in written))])
    return written
