"""Two clusters' copies of a table set against each other cell by cell (row, column,
timestamp, type and value of every visible version), each read by a plain full scan: the
crash harness's judge, beside (not instead of) the product's own validation."""

from __future__ import annotations

from typing import Any

from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.hbase.connect import connect

CellKey = tuple[bytes, bytes, bytes, int]
EXAMPLES = 10


def read_cells(endpoints: ClusterEndpoints, table: str) -> dict[CellKey, tuple[int, bytes]]:
    """Every visible version of ``table``: (row, family, qualifier, ts) -> (type, value)."""
    with connect(endpoints) as client:
        return {(c.row, c.family, c.qualifier, c.timestamp): (c.type, c.value)
                for piece in client.scan(table) for c in piece}


def compare_cells(source: dict[CellKey, tuple[int, bytes]],
                  target: dict[CellKey, tuple[int, bytes]]) -> dict[str, Any]:
    """Counts of cells only on one side or different, with a few examples."""
    only_source = sorted(source.keys() - target.keys())
    only_target = sorted(target.keys() - source.keys())
    different = sorted(k for k in source.keys() & target.keys() if source[k] != target[k])
    examples = ([f"only in source: {k!r}" for k in only_source[:EXAMPLES]]
                + [f"only in target: {k!r}" for k in only_target[:EXAMPLES]]
                + [f"different: {k!r}" for k in different[:EXAMPLES]])
    return {"equal": not (only_source or only_target or different),
            "source_cells": len(source), "target_cells": len(target),
            "only_in_source": len(only_source), "only_in_target": len(only_target),
            "different": len(different), "examples": examples[:EXAMPLES]}


def compare_tables(source: ClusterEndpoints, target: ClusterEndpoints,
                   table: str) -> dict[str, Any]:
    """``table`` on ``source`` against the same table on ``target``."""
    return compare_cells(read_cells(source, table), read_cells(target, table))
