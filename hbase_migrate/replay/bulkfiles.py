"""A window of WAL edits written as sorted HFiles, one per target region and family: the
first step of a bulk replay (issue 78); :mod:`hbase_migrate.replay.bulkload` loads them over
HBase's RPC (a region split or move between writing and loading included), and
:mod:`hbase_migrate.replay.bulkrun` records the window's files as replayed once the load is
acknowledged (``[replay] bulk``).

The semantics are WALPlayer's with ``wal.bulk.output`` (its cells sorted per region by
``CellSortReducer``, written by ``HFileOutputFormat2``), and those of replaying the same
mutations through the target's write path:

* every data cell keeps its row, family, qualifier, timestamp, type (Put and the four
  delete markers) and value; its tags too (a bulk-loaded file keeps them, as WALPlayer's
  do; the write path drops them);
* cells of the same key (row, family, qualifier, timestamp and type) written more than once
  in the window: the last in WAL order is kept, as the write path's later sequence id wins
  (WALPlayer's sorted set keeps whichever it met first);
* every version is written; the target family's VERSIONS, TTL and KEEP_DELETED_CELLS apply
  when it reads and compacts, as for any cell. Delete markers cover cells already in the
  target (the copy's) by timestamp, as on the write path;
* each file holds the cells of one region of the listing given, sorted as HBase sorts them,
  in the family's encoding, compression, block size and Bloom filter (tags compressed, the
  family default), with the file info ``HFileOutputFormat2`` writes (no sequence id: the
  region gives the file one when it loads it, above all its cells').

The window holds at most ``memory`` bytes of cells in memory (:data:`SPILL_BYTES` unless
told, counted at :data:`HELD_OVERHEAD` a cell beyond its fields, about what Python spends):
past it, what it holds is sorted per region and family and spilled to a local file as one
run (:mod:`hbase_migrate.replay.bulkspill`), and :meth:`BulkWindow.write` merges the runs
and the cells still held streaming into each region's file, a key in several runs taking
the newest run's cell: the files are those of a window held whole, cell for cell, and the
memory stays flat however large the window (its ``count`` and ``bytes`` are there for the
caller to bound it, by the local disk it takes and the size of a load).

The runs go to a folder of their own under ``spill_dir`` (the temp folder, ``TMPDIR``,
unless told), removed when the window is written or dropped; it is named after this process
and locked while it lives (:class:`~hbase_migrate.replay.scratch.Scratch`), so that one a
killed process left is removed by the next bulk replay on the host. Before a run is spilled
the free space there (``free``: :func:`free_bytes` unless told) is read: a run that would
not fit, by :meth:`BulkWindow.run_bytes` (an upper bound of its file), raises
:class:`~hbase_migrate.replay.errors.SpillSpaceError` with nothing written and the cells
still held; a disk that fills up all the same (another writer) raises it too, the partial
run removed.
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import re
import shutil
import tempfile
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from hbase_migrate.bytesutil import short_binary
from hbase_migrate.cluster.descriptors import FamilyDescriptor, RegionDescriptor, TableDescriptor
from hbase_migrate.cluster.sizing import format_bytes
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.hfile.metadata import bulk_load_metadata
from hbase_migrate.hfile.writer import HFileSettings, HFileWriter
from hbase_migrate.replay.bulkspill import Key, Slot, SpillRun, merged, spill
from hbase_migrate.replay.errors import SpillError, SpillSpaceError
from hbase_migrate.replay.mutations import RowMutation
from hbase_migrate.replay.scratch import Scratch
from hbase_migrate.wal.model import Cell, cell_order

CELL_OVERHEAD = 64  # bytes a buffered cell costs beyond its fields (for ``bytes``)
HELD_OVERHEAD = 200  # what a cell held in memory costs beyond its fields (measured)
SPILL_BYTES = 64 << 20  # cells held in memory, at HELD_OVERHEAD, before a run is spilled
_UNSAFE = re.compile(rb"[^A-Za-z0-9_.-]")
FreeSpace = Callable[[Path], int]  # a folder -> the bytes free there


def free_bytes(folder: Path) -> int:
    """The bytes this process's user may still write in ``folder``'s filesystem."""
    return shutil.disk_usage(folder).free


class BulkWindowError(HBaseMigrateError):
    """Cells that cannot go into the window's files (a family the target table lacks)."""


@dataclass(frozen=True)
class RegionFile:
    """One file written: the region it is for (by the listing given), its family, where it
    is and how many cells it holds."""

    region: RegionDescriptor
    family: bytes
    path: Path
    cells: int


def family_settings(family: FamilyDescriptor) -> HFileSettings:
    """What the target family makes of a bulk load's file (``HFileOutputFormat2``: its
    block size, encoding, compression and Bloom filter; tags kept and, in an encoded file,
    compressed). A Bloom filter other than ROW and ROWCOL (ROWPREFIX_FIXED_LENGTH) is left
    out: HBase reads such a file without one."""
    bloom = family.bloom_filter.upper()
    return HFileSettings(block_size=family.block_size, encoding=family.data_block_encoding,
                         compression=family.compression.upper(),
                         bloom=bloom if bloom in ("ROW", "ROWCOL") else "NONE")


class BulkWindow:
    """The cells of one target table's window of WAL edits, by region and family."""

    def __init__(self, table: TableDescriptor, regions: Sequence[RegionDescriptor], *,
                 memory: int | None = SPILL_BYTES, spill_dir: Path | None = None,
                 free: FreeSpace = free_bytes) -> None:
        ordered = sorted(regions, key=lambda r: r.start_key)
        if not ordered or ordered[0].start_key != b"":
            raise BulkWindowError(f"table {table.name}: the regions given do not start at the "
                                  "table's first key")
        self.table, self.regions = table, ordered
        self._starts = [r.start_key for r in ordered]
        self._families = {f.name for f in table.families}
        # (region index, family) -> key -> cell; a later cell of the same key replaces it
        self._cells: dict[Slot, dict[Key, Cell]] = {}
        self.count = 0  # cells taken (before the same keys are merged)
        self.bytes = 0  # their approximate size in memory, were they all held
        self.memory = memory  # None: every cell held until write
        self.held = 0  # the bytes of the cells held now, at HELD_OVERHEAD
        self._held_cells = 0  # the cells taken since the last run (keys written twice too)
        self._spill_dir = spill_dir
        self._free = free
        self._folder: Scratch | None = None
        self._runs: list[SpillRun] = []  # oldest first

    def region_of(self, row: bytes) -> int:
        """The index of the region holding ``row``."""
        return bisect.bisect_right(self._starts, row) - 1

    def add(self, mutations: Iterable[RowMutation]) -> None:
        """Take mutations in WAL order (as a replay's converter hands them to a target)."""
        for mutation in mutations:
            self.add_cells(mutation.cells)

    def add_cells(self, cells: Iterable[Cell]) -> None:
        """Take data cells in WAL order (a per-cell loop: the names it uses are local)."""
        families, starts, slots = self._families, self._starts, self._cells
        find = bisect.bisect_right
        count = size = 0
        try:
            for cell in cells:
                row, family = cell.row, cell.family
                if family not in families:
                    raise BulkWindowError(
                        f"table {self.table.name} has no family {short_binary(family)!r} for "
                        f"the cell of row {short_binary(row)!r}")
                slot = (find(starts, row) - 1, family)  # region_of
                by_key = slots.get(slot)
                if by_key is None:
                    by_key = slots[slot] = {}
                by_key[(row, family, cell.qualifier, cell.timestamp, cell.type)] = cell
                count += 1
                size += CELL_OVERHEAD + len(row) + len(cell.qualifier) + len(cell.value)
                if cell.tags:
                    size += sum(len(t.value) + 3 for t in cell.tags)
        finally:
            self.count += count
            self.bytes += size
            self.held += size + count * (HELD_OVERHEAD - CELL_OVERHEAD)
            self._held_cells += count
        if self.memory is not None and self.held >= self.memory:
            self.spill()

    @property
    def runs(self) -> int:
        """The runs spilled so far."""
        return len(self._runs)

    @property
    def spill_dir(self) -> Path:
        """Where the runs go (in a folder of their own): ``spill_dir``, else ``TMPDIR``."""
        return self._spill_dir or Path(tempfile.gettempdir())

    def run_bytes(self) -> int:
        """At most the bytes the next run's file takes: the cells held at
        :data:`CELL_OVERHEAD` (a pickled cell spends less beyond its fields)."""
        return self.held - self._held_cells * (HELD_OVERHEAD - CELL_OVERHEAD)

    def spill(self) -> None:
        """The cells held written to a local file as one sorted run, and let go; a run the
        folder has no room for raises :class:`SpillSpaceError`, nothing of it left there
        and its cells still held."""
        if not self._cells:
            return
        where, needed = self.spill_dir, self.run_bytes()
        path: Path | None = None
        try:
            free = self._free(where)
            if needed > free:
                raise self._no_room(where, needed, free)
            if self._folder is None:
                self._folder = Scratch("spill", where)
                weakref.finalize(self, self._folder.remove)
            path = self._folder.path / f"run-{len(self._runs):05d}"
            run = spill(path, self._cells)
        except BaseException as exc:
            if path is not None:
                with contextlib.suppress(OSError):
                    path.unlink(missing_ok=True)
            if not isinstance(exc, OSError):
                raise
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise self._no_room(where, needed, self._free_now(where)) from exc
            # not the WAL file's fault (a FileNotFoundError here is no vanished WAL file)
            raise SpillError(f"table {self.table.name}: the bulk window's sorted run "
                             f"{path or where} could not be written: {exc.strerror or exc}",
                             folder=str(where)) from exc
        self._runs.append(run)
        self._cells, self.held, self._held_cells = {}, 0, 0

    def _free_now(self, where: Path) -> int:
        try:
            return self._free(where)
        except OSError:
            return 0

    def _no_room(self, where: Path, needed: int, free: int) -> SpillSpaceError:
        return SpillSpaceError(
            f"table {self.table.name}: no room for the bulk window's next sorted run in "
            f"{where}: it needs up to {needed} bytes ({format_bytes(needed)}), {free} "
            f"free", folder=str(where), needed=needed, free=free)

    def write(self, folder: Path, task: str, *, loaded_at: int | None = None
              ) -> list[RegionFile]:
        """Write the files under ``folder/FAMILY/`` (the layout HBase's bulk load tools
        take), named after the table and the region's start; empties the window. ``task``
        names the writer in each file's ``BULKLOAD_SOURCE_TASK``."""
        written = []
        try:
            with ExitStack() as stack:
                streams = [stack.enter_context(run.path.open("rb")) for run in self._runs]
                for slot in sorted({*self._cells, *(s for r in self._runs for s in r.segments)}):
                    written.append(self._write_slot(folder, task, loaded_at, slot, merged(
                        [*(r.cells_of(slot, f) for r, f in zip(self._runs, streams, strict=True)
                           if slot in r.segments), self._sorted(slot)])))
        finally:
            self.discard()
        return written

    def _sorted(self, slot: Slot) -> Iterator[Cell]:
        """The slot's cells held in memory, in cell order (the newest run)."""
        by_key = self._cells.pop(slot, None)
        if by_key:
            yield from sorted(by_key.values(), key=cell_order)

    def _write_slot(self, folder: Path, task: str, loaded_at: int | None, slot: Slot,
                    cells: Iterable[Cell]) -> RegionFile:
        index, family = slot
        region = self.regions[index]
        descriptor = self.table.family(family)
        assert descriptor is not None  # checked as the cells came
        directory = folder / family.decode("utf-8", "replace")
        directory.mkdir(parents=True, exist_ok=True)
        name = _UNSAFE.sub(b"_", self.table.name.encode()).decode()
        path = directory / f"{name}-{index:05d}-{region.start_key.hex()[:64] or 'first'}"
        count = 0
        with HFileWriter(path, family_settings(descriptor)) as writer:
            for cell in cells:
                writer.append(cell)
                count += 1
            writer.close(bulk_load_metadata(task, loaded_at=loaded_at))
        return RegionFile(region, family, path, count)

    def discard(self) -> None:
        """The window emptied: its cells dropped, its spilled runs removed."""
        self._cells.clear()
        self._runs.clear()
        if self._folder is not None:
            self._folder.remove()
            self._folder = None
        self.count = self.bytes = self.held = self._held_cells = 0
