"""WAL entries -> buffered row mutations for one file's replay: the filter and the conversion
(the replay's hot path), with the counts a progress report gives.

:class:`EntryConverter` is the reference. Its :meth:`~EntryConverter.take_batch` runs the
compiled loop (``_convert``, built by ``make setup``, see ``scripts/build-speedups.py``)
when it is there: that loop takes the usual entry itself (a replayed table, inside the time
window, data cells of known types and families already checked on the target) and hands
every other one to :meth:`~EntryConverter.take`, so both give the same mutations, counts
and errors. ``HBASE_MIGRATE_PURE_PYTHON=1`` runs the reference; ``use`` switches (the
tests run both and compare).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from itertools import chain
from operator import attrgetter, itemgetter

from hbase_migrate.cluster.sizing import CELL_OVERHEAD
from hbase_migrate.compiled import Choice
from hbase_migrate.replay.apply import ReplayTarget, require_families
from hbase_migrate.replay.filters import ReplayFilter
from hbase_migrate.replay.marker_log import MarkerLog
from hbase_migrate.replay.mutations import RowMutation, WalPosition, to_mutations
from hbase_migrate.tablename import table_name
from hbase_migrate.wal.model import METAFAMILY, Cell, Entry

_choice = Choice("hbase_migrate.replay._convert", "the compiled converter is")
COMPILED = _choice.module
implementation = _choice.implementation  # which runs (for converters made from now on)
use = _choice.use

_FAMILY = attrgetter("family")
_SIZED = itemgetter(0, 1, 2, 5)  # a cell's row, family, qualifier and value
_TAGS = attrgetter("tags")

Batch = dict[str, list[RowMutation]]  # target table -> mutations, in file order
# per table name as the WAL writes it: source name, target (None: not replayed), families
# replayed (None: all), why its entries are skipped (None: they are not)
TableInfo = tuple[str, str | None, frozenset[bytes] | None, str | None]


class EntryConverter:
    """Filters and converts one file's entries into ``pending`` (target table -> mutations),
    counting as it goes; ``weight`` and ``bytes`` measure the buffer (the caller hands it
    over and resets them). Checks a target table's families once each, under ``lock``."""

    def __init__(self, name: str, flt: ReplayFilter, target: ReplayTarget,
                 lock: threading.Lock) -> None:
        self.name, self.filter, self.target, self.lock = name, flt, target, lock
        self.pending: Batch = {}
        self.weight = 0  # data cells buffered (an entry without any counts as one)
        self.bytes = 0  # of the data cells buffered
        self.offset = 0  # end of the last entry taken
        self.next_index: int | None = None
        self.entries = self.entries_applied = self.cells_filtered = self.tags = 0
        self.skipped: Counter[str] = Counter()
        self.markers = MarkerLog()
        self.last_write_time: int | None = None
        self.checked: dict[str, set[bytes]] = {}  # target table -> families known there
        self.tables: dict[bytes, TableInfo] = {}
        self._compiled = _choice.compiled()

    def take_batch(self, entries: Iterator[Entry], batch_cells: int, batch_bytes: int) -> bool:
        """Take entries until the buffer holds ``batch_cells`` cells or ``batch_bytes``
        bytes (True) or ``entries`` ends (False). An error leaves every entry before the
        bad one taken."""
        if self._compiled is not None:
            return bool(self._compiled.take_batch(self, entries, batch_cells, batch_bytes))
        for entry in entries:
            self.take(entry)
            if self.weight >= batch_cells or self.bytes >= batch_bytes:
                return True
        return False

    def table(self, raw: bytes) -> TableInfo:
        """What becomes of a WAL table name's entries, looked up once per file."""
        known = self.tables.get(raw)
        if known is None:
            flt = self.filter
            source = table_name(raw)
            known = self.tables[raw] = (source, flt.target_of(source), flt.families_of(source),
                                        flt.table_skip_reason(source))
        return known

    def take(self, entry: Entry) -> None:
        """Filter and convert one entry into the buffer (nothing is written here)."""
        key = entry.key
        source, dst, families, reason = self.table(key.table_name)
        reason = reason or self.filter.time_skip_reason(key.write_time)
        cells = 0
        if reason is None:
            assert dst is not None
            cells = self._convert(entry, source, dst, families)
        else:
            self.skipped[reason] += 1
        self.entries += 1
        self.weight += cells or 1
        self.offset, self.next_index = entry.offset + entry.size, entry.index + 1
        self.last_write_time = key.write_time

    def _convert(self, entry: Entry, source: str, dst: str,
                 families: frozenset[bytes] | None) -> int:
        """Buffer the entry's mutations into ``dst``; return the number of data cells."""
        position = WalPosition(self.name, entry.offset, entry.index, entry.key.sequence,
                               entry.key.write_time)
        cells = tuple(entry.cells)  # (a CellBlock's Cells made)
        new = set(map(_FAMILY, cells))
        if cells and METAFAMILY not in new and (families is None or new <= families):
            # the usual entry, every cell taken: counted in C passes, not cell by cell
            return self._buffer(dst, cells, position, new,
                                sum(map(len, chain.from_iterable(map(_SIZED, cells)))),
                                sum(map(len, map(_TAGS, cells))))
        data = []
        size = tags = 0
        for cell in cells:
            family = cell.family
            if family == METAFAMILY:
                self.markers.read(source, cell, entry.key.write_time, position)
            elif families is not None and family not in families:
                self.cells_filtered += 1
            else:
                data.append(cell)
                size += len(cell.row) + len(family) + len(cell.qualifier) + len(cell.value)
                if cell.tags:
                    tags += len(cell.tags)
        if not data:
            return 0
        return self._buffer(dst, data, position, {c.family for c in data}, size, tags)

    def _buffer(self, dst: str, data: tuple[Cell, ...] | list[Cell], position: WalPosition,
                new: set[bytes], size: int, tags: int) -> int:
        """Buffer an entry's data cells (of families ``new``, ``size`` bytes and ``tags``
        tags); return how many."""
        seen = self.checked.setdefault(dst, set())
        if not new <= seen:
            new -= seen
            with self.lock:
                require_families(self.target, dst, new, f"written by {position}")
            seen |= new
        self.pending.setdefault(dst, []).extend(to_mutations(data, position))
        self.tags += tags
        self.bytes += size + CELL_OVERHEAD * len(data)  # sizing.cells_bytes(data)
        self.entries_applied += 1
        return len(data)
