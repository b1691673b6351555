"""Copy every retained version of every cell of a key range from one cluster to another.

Cells keep their original timestamps, so copying twice gives the same target (idempotent),
and WAL edits replayed later with their own timestamps order correctly against the copy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.cluster.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell


@dataclass
class CopyStats:
    rows: int = 0
    cells: int = 0

    def add(self, other: CopyStats) -> None:
        self.rows += other.rows
        self.cells += other.cells


def copy_range(source: Thrift2Client, target: Thrift2Client, table: str, target_table: str,
               start: bytes = b"", stop: bytes = b"", time_range: tuple[int, int] | None = None,
               batch_cells: int = 2000) -> CopyStats:
    """Copy the cells of ``[start, stop)`` (every version the source returns)."""
    stats = CopyStats()
    pending: list[Cell] = []
    for row_cells in source.scan(table, start, stop, time_range=time_range):
        pending.extend(row_cells)
        stats.rows += 1
        stats.cells += len(row_cells)
        if len(pending) >= batch_cells:
            target.put_cells(target_table, pending)
            pending = []
    target.put_cells(target_table, pending)
    return stats


def copy_table(source: Thrift2Client, target: Thrift2Client, table: str, target_table: str,
               time_range: tuple[int, int] | None = None,
               on_region: Callable[[RegionDescriptor, CopyStats], None] | None = None,
               ) -> CopyStats:
    """Copy a whole table region by region (the unit a parallel copy distributes)."""
    total = CopyStats()
    for region in source.regions(table):
        stats = copy_range(source, target, table, target_table, region.start_key,
                           region.end_key, time_range)
        total.add(stats)
        if on_region is not None:
            on_region(region, stats)
    return total
