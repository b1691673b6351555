"""A table's key ranges planned from a snapshot's files, reading no cell: each store file's
block index gives the first row of every data block and its trailer the cells the file
holds, spread evenly over its blocks, so each region is cut at block starts into ranges of
about the cell budget. The counting pass over a live table (:mod:`hbase_migrate.ranges.plan`)
reads every cell through the region servers; this reads the indexes over WebHDFS. The file
copy plans the table from the snapshot it exports, so neither a validation of the copy nor
a validation from snapshots sends a table's region servers a scan to plan.

The cells planned are estimates (the blocks' share of their file, whatever the time range
or deletes): a range holds about the budget, as a plan's ranges only need to."""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cluster.storage.hdfs_files import HdfsRoot
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.ranges.plan import PlannedRange, RangeCutter
from hbase_migrate.ranges.planned import Hole, hole_parts, plan_holes
from hbase_migrate.snapshot.manifest import SnapshotRegion
from hbase_migrate.snapshot.read import snapshot_regions, store_file


def record_snapshot_plan(ledger: Ledger, migration_id: int, table: str, root: HdfsRoot,
                         snapshot: str, max_cells: int) -> int:
    """Plan the keys of ``table`` no recorded range covers from ``snapshot``'s files and
    record them (nothing when the plan is whole); returns the ranges recorded now."""
    holes = plan_holes(ledger.key_ranges(migration_id, table))
    if not holes:
        return 0
    before = len(ledger.key_ranges(migration_id, table))
    plan = plan_snapshot(root, snapshot, table, max_cells, holes)
    after = ledger.plan_key_ranges(migration_id, table,
                                   [(p.range.start, p.range.stop, p.cells) for p in plan])
    return len(after) - before


def plan_snapshot(root: HdfsRoot, snapshot: str, table: str, max_cells: int,
                  holes: Sequence[Hole] = ((b"", b""),)) -> list[PlannedRange]:
    """The ranges of ``holes`` of ``table`` (all its keys by default), cut from the store
    files of ``snapshot`` (of ``table``) under ``root``, in key order."""
    return plan_regions(root, snapshot, snapshot_regions(root, snapshot), table, max_cells,
                        holes)


def plan_regions(root: HdfsRoot, snapshot: str, regions: Sequence[SnapshotRegion], table: str,
                 max_cells: int, holes: Sequence[Hole] = ((b"", b""),)) -> list[PlannedRange]:
    """:func:`plan_snapshot` over the snapshot's ``regions`` (by start row)."""
    return [p for region in regions
            for begin, end in hole_parts(region.start, region.stop, holes)
            for p in _plan_part(root, snapshot, region, table, begin, end, max_cells)]


def _plan_part(root: HdfsRoot, snapshot: str, region: SnapshotRegion, table: str,
               start: bytes, stop: bytes, max_cells: int) -> list[PlannedRange]:
    """``[start, stop)`` of ``region`` cut at its store files' block starts."""
    marks: list[tuple[bytes, int]] = []
    for _family, files in region.stores:
        for f in files:
            source = store_file(root, snapshot, f, None)
            opened = None if source.opener is None else source.opener()
            with HFileReader(source.path, file=opened) as reader:
                rows = reader.block_rows()
                each = max(1, round(reader.trailer.entry_count / len(rows))) if rows else 0
            # from the block holding ``start`` (a split daughter's half of its parent's
            # file, or a hole begun inside a block), counted from ``start``
            first = max(0, bisect.bisect_right(rows, start) - 1)
            marks += [(max(row, start), each) for row in rows[first:]
                      if not stop or row < stop]
    marks.sort(key=lambda m: m[0])
    cutter = RangeCutter(table, start, max_cells)
    for row, cells in marks:
        cutter.add(row, cells)
    return cutter.end(stop)
