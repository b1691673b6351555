"""The source's WAL edits past a snapshot, up to the replay's positions: what a validation
from both snapshots adds to the source snapshot's store files so that the source side stands
for the same point as the target's snapshot.

A region's snapshot holds, per family, exactly the edits whose WAL sequence id is below
the newest store file's ``MAX_SEQ_ID_KEY``: a flush takes the memstore and that sequence
id under the region's update lock, so every edit before it is in the flushed file and
every edit after it has a larger one (HBase's ``HRegion.internalPrepareFlushCache``). An
edit the WAL holds past it, up to the positions the replay had acknowledged while it was
held (``[start, stop)`` of each WAL file), is in the target and not in the snapshot: the
tail gives those, per region, in scan order with their sequence ids, for
``hfile.region.region_cells`` to merge as the region's memstore would hold them. Memory:
the tail's cells of the migrated tables (the writes of the short time between the replay's
position before the source snapshot and the pause).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.tablename import table_name
from hbase_migrate.wal.model import METAFAMILY
from hbase_migrate.wal.reader import WalReader


class TailError(HBaseMigrateError):
    """The tail cannot be added to the snapshot (a region the snapshot does not have)."""


@dataclass(frozen=True)
class WalSpan:
    """The bytes ``[start, stop)`` of one WAL file (``stop``: an entry's end the replay
    acknowledged)."""

    path: str
    start: int
    stop: int

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "start": self.start, "stop": self.stop}


@dataclass(frozen=True)
class Tail:
    """The migrated tables' WAL cells of ``spans``, by (table, encoded region), each region's
    in scan order with its entry's sequence id as mvcc; ``newest``: each region's newest
    entry's write time (ms); ``since``: when the source's snapshots were asked for (ms)."""

    spans: tuple[WalSpan, ...] = ()
    regions: Mapping[tuple[str, str], tuple[StoreCell, ...]] = field(default_factory=dict)
    newest: Mapping[tuple[str, str], int] = field(default_factory=dict)
    since: int = 0

    def cells(self) -> int:
        return sum(len(c) for c in self.regions.values())

    def check(self, table: str, known: Iterable[str]) -> None:
        """Refuse a region of ``table`` the tail wrote to after the snapshots were asked for
        that the snapshot lacks (split or merged since): its edits cannot be placed against
        the snapshot's files. One that wrote only before (split or merged away before the
        snapshot, whose edits its daughters' or merged region's files hold) is left out."""
        have = set(known)
        strange = sorted(r for (t, r), cells in self.regions.items() if t == table
                         and r not in have and cells
                         and self.newest.get((t, r), 0) >= self.since)
        if strange:
            raise TailError(f"table {table}: the WAL after the snapshot writes to region "
                            f"{strange[0]}, which the snapshot does not have (its regions "
                            "split or merged meanwhile): validate again")

    def newer(self, table: str, region: str, flushed: Mapping[bytes, int]
              ) -> Iterator[StoreCell]:
        """The region's cells past its store files: of each family, those whose sequence
        id is above the family's newest file's (a family with no file: the region's
        newest file's, since the flush the snapshot took emptied every family)."""
        cells = self.regions.get((table, region), ())
        if not cells:
            return iter(())
        newest = max(flushed.values(), default=0)
        return (c for c in cells if c.mvcc > flushed.get(c.cell.family, newest))


def read_tail(spans: Sequence[WalSpan], tables: Iterable[str], since: int = 0) -> Tail:
    """The WAL cells of ``tables`` (source names) in ``spans``, markers left out; ``since``:
    when the source's snapshots were asked for (ms, :meth:`Tail.check`)."""
    wanted = set(tables)
    newest: dict[tuple[str, str], int] = {}
    found: dict[tuple[str, str], list[tuple[tuple[bytes, bytes, bytes, int, int, int, int],
                                            StoreCell]]] = {}
    for span in spans:
        if span.stop <= span.start:
            continue
        with WalReader(span.path, start_offset=span.start) as reader:
            for entry in reader:
                if entry.offset >= span.stop:
                    break
                table = table_name(entry.key.table_name)
                if table not in wanted:
                    continue
                region = entry.key.encoded_region_name.decode("ascii")
                seq = entry.key.sequence
                newest[table, region] = max(newest.get((table, region), 0),
                                            entry.key.write_time)
                into = found.setdefault((table, region), [])
                for n, cell in enumerate(entry.cells):
                    if cell.family == METAFAMILY:
                        continue
                    # a later cell of one entry with the same key wins, as in the memstore
                    into.append(((cell.row, cell.family, cell.qualifier, -cell.timestamp,
                                  -cell.type, -seq, -n), StoreCell(cell, seq)))
    return Tail(tuple(spans), {k: tuple(c for _, c in sorted(v, key=lambda x: x[0]))
                               for k, v in found.items()}, newest, since)
