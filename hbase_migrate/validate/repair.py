"""Repair a key range of the target from the source, as HBase's SyncTable does: a put for
every cell missing on the target or different there (the source's value, same timestamp),
an exact-version delete for every cell only the target has. Both scans stream in key order;
writes go in batches of at most ``batch_cells`` cells and, for puts, the target's
``max_put_bytes`` (memory stays bounded whatever the cell sizes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hbase_migrate.cluster.client import Client
from hbase_migrate.cluster.sizing import cell_bytes
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.validate.compare import aligned, scan_cells
from hbase_migrate.validate.tombstones import TombstoneRepair, describe
from hbase_migrate.wal.model import Cell, CellType


@dataclass
class RangeRepair:
    """What a repair wrote to one range."""

    range: KeyRange
    puts: int = 0
    deletes: int = 0
    changes: list[str] = field(default_factory=list)  # the first ones
    tombstones: TombstoneRepair | None = None  # cells its puts left hidden, and what then

    def to_json(self) -> dict[str, Any]:
        return {**self.range.to_json(), "puts": self.puts, "deletes": self.deletes,
                "changes": self.changes,
                "actions": self.tombstones.lines() if self.tombstones else [],
                "tombstones": self.tombstones.to_json() if self.tombstones else None}


def repair_range(source: Client, target: Client, key_range: KeyRange,
                 target_table: str, batch_cells: int = 1000, note_limit: int = 20,
                 ) -> RangeRepair:
    """Make ``key_range`` of ``target_table`` on the target equal to the source's."""
    result = RangeRepair(key_range)
    puts: list[Cell] = []
    deletes: list[Cell] = []
    put_bytes = 0

    def note(kind: str, cell: Cell) -> None:
        if len(result.changes) < note_limit:
            result.changes.append(f"{kind}: {describe(cell)}")

    def put(cell: Cell) -> None:
        nonlocal put_bytes
        puts.append(cell)
        put_bytes += cell_bytes(cell)

    def flush(force: bool = False) -> None:
        nonlocal puts, deletes, put_bytes
        if puts and (force or len(puts) >= batch_cells or put_bytes >= target.max_put_bytes):
            target.put_cells(target_table, puts)
            result.puts += len(puts)
            puts, put_bytes = [], 0
        if deletes and (force or len(deletes) >= batch_cells):
            target.write_cells(target_table, deletes)
            result.deletes += len(deletes)
            deletes = []

    for a, b in aligned(scan_cells(source, key_range.table, key_range.start, key_range.stop),
                        scan_cells(target, target_table, key_range.start, key_range.stop)):
        if b is None:
            assert a is not None
            put(a)
            note("put missing", a)
        elif a is None:
            deletes.append(b._replace(type=CellType.DELETE, value=b""))
            note("delete extra", b)
        elif a.value != b.value:
            put(a)
            note("put different", a)
        flush()
    flush(force=True)
    return result
