"""Cell-for-cell comparison of a table on two clusters, streaming both scans in key order.

Every visible version counts: (row, family, qualifier, timestamp, type) and the value must
match. Differences are listed by kind (only in source, only in target, different value) with
their keys rendered as HBase prints them (a long row key or qualifier cut short:
``short_binary``), up to a limit; the counts are always exact.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from hbase_migrate.bytesutil import short_binary, to_string_binary
from hbase_migrate.cluster.client import Client
from hbase_migrate.limits import Throttle, metered
from hbase_migrate.wal.model import Cell, cell_order


def scan_cells(client: Client, table: str, start: bytes, stop: bytes,
               throttle: Throttle | None = None) -> Iterator[Cell]:
    """Every visible cell version of ``[start, stop)``, in HBase's cell order, paced by
    ``throttle``."""
    for row_cells in metered(client.scan(table, start, stop), throttle):
        yield from sorted(row_cells, key=cell_order)


def aligned(left: Iterator[Cell], right: Iterator[Cell]
            ) -> Iterator[tuple[Cell | None, Cell | None]]:
    """Two streams of cells in HBase's order walked together: ``(a, None)`` for a cell only
    on the left, ``(None, b)`` only on the right, ``(a, b)`` for the same key on both (the
    values may differ)."""
    a, b = next(left, None), next(right, None)
    while a is not None or b is not None:
        if b is None or (a is not None and cell_order(a) < cell_order(b)):
            yield a, None
            a = next(left, None)
        elif a is None or cell_order(b) < cell_order(a):
            yield None, b
            b = next(right, None)
        else:
            yield a, b
            a, b = next(left, None), next(right, None)


@dataclass
class Comparison:
    source_cells: int = 0
    target_cells: int = 0
    only_in_source: int = 0
    only_in_target: int = 0
    different_values: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        return not (self.only_in_source or self.only_in_target or self.different_values)

    def _note(self, kind: str, cell: Cell, limit: int) -> None:
        if len(self.examples) < limit:
            self.examples.append(
                f"{kind}: row={short_binary(cell.row)} "
                f"column={to_string_binary(cell.family)}:{short_binary(cell.qualifier)} "
                f"ts={cell.timestamp}")

    def to_json(self) -> dict[str, object]:
        return {"equal": self.equal, "source_cells": self.source_cells,
                "target_cells": self.target_cells, "only_in_source": self.only_in_source,
                "only_in_target": self.only_in_target,
                "different_values": self.different_values, "examples": self.examples}


def compare_tables(source: Client, target: Client, table: str,
                   target_table: str | None = None, start: bytes = b"", stop: bytes = b"",
                   example_limit: int = 20, throttle: Throttle | None = None) -> Comparison:
    """Compare ``[start, stop)`` of ``table`` on the source with ``target_table``; the scans
    of both sides share ``throttle``."""
    return compare_cells(scan_cells(source, table, start, stop, throttle),
                         scan_cells(target, target_table or table, start, stop, throttle),
                         example_limit)


def compare_cells(source: Iterator[Cell], target: Iterator[Cell], example_limit: int = 20,
                  result: Comparison | None = None) -> Comparison:
    """Two streams of cells in HBase's order compared (added to ``result``, when given)."""
    result = Comparison() if result is None else result
    for a, b in aligned(source, target):
        if b is None:
            assert a is not None
            result.source_cells += 1
            result.only_in_source += 1
            result._note("only in source", a, example_limit)
        elif a is None:
            result.target_cells += 1
            result.only_in_target += 1
            result._note("only in target", b, example_limit)
        else:
            result.source_cells += 1
            result.target_cells += 1
            if a.value != b.value:
                result.different_values += 1
                result._note("different value", a, example_limit)
    return result
