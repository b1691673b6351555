"""checkAndMutate on the embedded region servers, as HBase 2.6's
``HRegion.checkAndMutateInternal`` does it: the condition's row must be the mutation's;
the column's newest value within the time range is read; with no value to compare, it
matches when the column is empty or missing (NOT_EQUAL: when it holds bytes); else the
comparator's value is compared with the cell's as bytes (``LESS``: the given value sorts
before the cell's) and a missing cell never matches. A match applies the put, delete,
increment or append, a put's cells of no timestamp taking ``max(now, the checked cell's)``.
A filter's condition (``ifMatches``) holds when the row read through the filter (and the
time range) has a cell, the first one's timestamp the checked cell's."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hbase_migrate.rpc.conditions import (
    EQUAL,
    GREATER,
    GREATER_OR_EQUAL,
    LESS,
    LESS_OR_EQUAL,
    NOT_EQUAL,
    Condition,
)
from hbase_migrate.rpc.messages import LATEST_TIMESTAMP
from hbase_migrate.rpc.multi import APPEND, INCREMENT, PUT, MutationAction
from hbase_migrate.wal.model import Cell
from minihbase.cluster import Cluster
from minihbase.model import ColumnSelection, Query
from minihbase.rpc import deltas
from minihbase.rpc.filters import decode_filter
from minihbase.rpc.listener import DO_NOT_RETRY, H, ServiceError
from minihbase.rpc.reads import FilterDone, ReadSpec, RowReader

_MATCHES: dict[int, Callable[[int], bool]] = {  # the op on compare(given value, cell's)
    LESS: lambda r: r < 0, LESS_OR_EQUAL: lambda r: r <= 0, EQUAL: lambda r: r == 0,
    NOT_EQUAL: lambda r: r != 0, GREATER_OR_EQUAL: lambda r: r >= 0, GREATER: lambda r: r > 0}


def _text(data: bytes) -> str:
    """Bytes as HBase's ``Bytes.toStringBinary`` prints them."""
    return "".join(chr(b) if 32 <= b < 127 and b != 92 else f"\\x{b:02X}" for b in data)


def _matches(condition: Condition, current: Cell | None) -> bool:
    if not condition.value:
        if current is None:
            return condition.op != NOT_EQUAL
        return (not current.value) == (condition.op != NOT_EQUAL)
    if current is None:
        return False
    if condition.op not in _MATCHES:
        raise ServiceError(DO_NOT_RETRY, f"Unknown Compare op {condition.op}",
                           do_not_retry=True)
    given, held = condition.value, current.value
    return _MATCHES[condition.op]((given > held) - (given < held))


def _current(cluster: Cluster, table: str, condition: Condition) -> Cell | None:
    """The checked column's newest cell within the time range."""
    columns = ColumnSelection()
    columns.add_column(condition.family, condition.qualifier)
    low, high = condition.time_range or (0, LATEST_TIMESTAMP)
    found = cluster.get(table, condition.row, Query(columns=columns, min_ts=low, max_ts=high,
                                                    max_versions=1))
    return found[0] if found else None


def _filtered(cluster: Cluster, table: str, condition: Condition, filter_: bytes
              ) -> list[Cell]:
    """The row read through the condition's filter (a Get of the whole row)."""
    info, now = cluster.readable(table, ())
    spec = ReadSpec(ColumnSelection(), time_range=condition.time_range or (0, LATEST_TIMESTAMP),
                    filter=decode_filter(filter_))
    reader = RowReader(spec, {f.name: f for f in info.descriptor.families}, now)
    try:
        return reader.read(cluster.store.row_cells(info.name, condition.row))
    except FilterDone:
        return []


def check_and_mutate(cluster: Cluster, table: str, condition: Condition,
                     actions: Sequence[MutationAction],
                     apply: Callable[[list[MutationAction]], None]) -> tuple[bool, list[Cell]]:
    """Whether the condition held, and the cells the increments and appends returned;
    ``apply`` applies puts and deletes together (several actions: a RowMutations)."""
    for action in actions:
        if condition.row != action.row:  # CheckAndMutate.Builder's words
            raise ServiceError(DO_NOT_RETRY, f"The row of the action <{_text(action.row)}> "
                               f"doesn't match the original one <{_text(condition.row)}>",
                               do_not_retry=True)
    if condition.filter is None and condition.family not in {
            f.name for f in cluster.table(table).descriptor.families}:
        raise ServiceError(H + "regionserver.NoSuchColumnFamilyException",
                           f"Column family {condition.family.decode('latin-1')} does not "
                           f"exist in region of table {table}", do_not_retry=True)
    with deltas.LOCK:  # the row's lock: read, then write
        if condition.filter is not None:
            found = _filtered(cluster, table, condition, condition.filter)
            current = found[0] if found else None
            if current is None:
                return False, []
        else:
            current = _current(cluster, table, condition)
            if not _matches(condition, current):
                return False, []
        stamp = max(cluster.clock(), current.timestamp if current is not None else 0)
        plain = [a._replace(cells=tuple(
            c._replace(timestamp=stamp) if c.timestamp == LATEST_TIMESTAMP else c
            for c in a.cells)) if a.kind == PUT else a
            for a in actions if a.kind not in (INCREMENT, APPEND)]
        if plain:
            apply(plain)
        return True, [c for a in actions if a.kind in (INCREMENT, APPEND)
                      for c in deltas.apply_locked(cluster, table, a)]
