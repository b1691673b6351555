"""The store files of a region merged, streaming, into the order HBase's scanners read them.

Order (``CellComparatorImpl.compare`` in branch-2.6): row, family, qualifier ascending as
unsigned bytes; timestamp descending; type code descending as an unsigned byte (so a delete
marker comes before the Put of its timestamp); then sequence id (mvcc) descending. Cells
equal in all of these come from the newest file first: ``KeyValueHeap.KVScannerComparator``
breaks ties by the scanner order, which ``StoreFileScanner.getScannersForStoreFiles``
assigns after sorting the files by ``StoreFileComparators.SEQ_ID`` (max sequence id, here
``MAX_SEQ_ID_KEY`` of the file info, then the file name).

A bulk-loaded file's cells all take the file's sequence id (``StoreFileScanner
.setCurrentCell``) unless its file info says ``SKIP_RESET_SEQ_ID``; the file is bulk-loaded
when its name holds ``SeqId_<n>_`` (that ``n`` is its sequence id) or its file info has
``BULKLOAD_TIMESTAMP`` (``HStoreFile.isBulkLoadResult``, ``open``).

Cells newer than every file (a region's WAL edits past its store files, as its memstore
would hold them: ``newer``) come in already sorted, each with its WAL sequence id as its
mvcc, and rank as the newest source.

A read from a row (``start``: a key range's first) has each file seek to it through its
block index (``reader.py``): only the blocks that may hold that row or later ones are
decoded; a top half seeks to its split row as well, and a bottom half ending before
``start`` is not read. ``newer``'s cells of earlier rows are dropped.

Each file holds one block in memory at a time; the merge holds one cell per file. A MOB
reference cell (a tag of type 5: its value is in a MOB file) is refused, naming the file,
unless the caller resolves them after the family rules (``mob_references``, ``mob.py``).
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from hbase_migrate.errors import HFileCorruptError, HFileUnsupportedError
from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.hfile.reader import BlockIndexer, HFileReader
from hbase_migrate.hfile.reference import Half
from hbase_migrate.hfile.visible import VISIBLE

MAX_SEQ_ID_KEY = b"MAX_SEQ_ID_KEY"
BULKLOAD_TIME_KEY = b"BULKLOAD_TIMESTAMP"
SKIP_RESET_SEQ_ID = b"SKIP_RESET_SEQ_ID"
MOB_REFERENCE_TAG = 5  # TagType.MOB_REFERENCE_TAG_TYPE: the value names a MOB file
_BULK_SEQ_ID = re.compile(r"SeqId_(\d+)_")

# row, family, qualifier, -timestamp, -type, -mvcc, -file order
SortKey = tuple[bytes, bytes, bytes, int, int, int, int]


class StoreFile(NamedTuple):
    """An opened store file and the column family whose store directory holds it; ``half``
    when a reference file of a split daughter reads half of it (``reference.py``)."""

    family: bytes
    reader: HFileReader
    half: Half | None = None

    def sequence_id(self) -> int:
        """HBase's sequence id of the store file (a top half's is one more)."""
        return sequence_id(self.reader) + (1 if self.half is not None and self.half.top else 0)


def sequence_id(reader: HFileReader) -> int:
    """The file's sequence id as HBase orders files by it (``HStoreFile.open``)."""
    name = reader.name.rsplit("/", 1)[-1]
    found = _BULK_SEQ_ID.search(name) if "SeqId_" in name else None
    if found is not None:
        return int(found.group(1))
    raw = reader.file_info.get(MAX_SEQ_ID_KEY)
    return int.from_bytes(raw, "big", signed=True) if raw else 0


def bulk_loaded(reader: HFileReader) -> bool:
    name = reader.name.rsplit("/", 1)[-1]
    return "SeqId_" in name or BULKLOAD_TIME_KEY in reader.file_info


class MergeSource(NamedTuple):
    """A store file as the compiled merge reads it (``_visible.pyx``): ``blocks`` its cells
    a block at a time from the read's first row (None: none of its rows are read), the
    sequence id every cell takes (``reset``: a bulk-loaded file's) and the half it reads."""

    family: bytes
    reader: HFileReader
    blocks: Iterator[Any] | None  # lists of StoreCells, or ``data_blocks``' blocks
    reset: int | None
    half: Half | None


def merge_sources(files: Sequence[StoreFile], start: bytes,
                  index: BlockIndexer | None = None) -> list[MergeSource]:
    """``files`` ranked as ``merged_cells`` merges them (oldest first), each set to be read
    from row ``start`` as ``_keyed`` reads it; with ``index``, each file's data blocks as
    ``index`` gives them (``HFileReader.data_blocks``), not their cells."""
    found = []
    for f in sorted(files, key=lambda f: (f.sequence_id(), f.reader.name)):
        reader, half, begin = f.reader, f.half, start
        if half is not None and half.top:
            begin = max(start, half.split_row)
        blocks: Iterator[Any] | None = (
            None if half is not None and not half.top and start >= half.split_row
            else reader.cells_by_block(begin) if index is None
            else reader.data_blocks(begin, index))
        found.append(MergeSource(f.family, reader, blocks, _reset(f), half))
    return found


def _reset(file: StoreFile) -> int | None:
    """The sequence id every cell of a bulk-loaded file takes, else None."""
    reader = file.reader
    return (file.sequence_id() if bulk_loaded(reader)
            and reader.file_info.get(SKIP_RESET_SEQ_ID, b"\x00") == b"\x00" else None)


def merged_cells(files: Sequence[StoreFile], mob_references: bool = False,
                 newer: Iterable[StoreCell] = (), start: bytes = b"") -> Iterator[StoreCell]:
    """The cells of ``files`` (one region's, any families) in HBase's scan order, with the
    sequence id HBase gives each, and ``newer``'s (in scan order, newer than every file);
    with ``start``, those of rows at or after it. A file whose cells are out of order, or
    of a family other than its store's, raises ``HFileCorruptError`` naming it and the
    block; a MOB reference cell is refused unless ``mob_references`` (the caller resolves
    them). The compiled merge when it runs (``_visible.pyx``), else
    ``reference_merged_cells``: the same cells, the same errors."""
    compiled = VISIBLE.compiled()
    if compiled is None:
        return reference_merged_cells(files, mob_references, newer, start)
    found: Iterator[StoreCell] = compiled.merged_cells(merge_sources(files, start),
                                                       mob_references, iter(newer), start)
    return found


def reference_merged_cells(files: Sequence[StoreFile], mob_references: bool = False,
                           newer: Iterable[StoreCell] = (), start: bytes = b""
                           ) -> Iterator[StoreCell]:
    """The pure-Python reference of ``merged_cells``."""
    ranked = sorted(files, key=lambda f: (f.sequence_id(), f.reader.name))
    streams = [_keyed(f, order, mob_references, start) for order, f in enumerate(ranked)]
    streams.append(((c.cell.row, c.cell.family, c.cell.qualifier, -c.cell.timestamp,
                     -c.cell.type, -c.mvcc, -len(ranked)), c) for c in newer
                   if c.cell.row >= start)
    for _key, cell in heapq.merge(*streams):
        yield cell


def _keyed(file: StoreFile, order: int, mob_references: bool, start: bytes
           ) -> Iterator[tuple[SortKey, StoreCell]]:
    reader = file.reader
    reset = _reset(file)
    previous: SortKey | None = None
    half = file.half
    if half is not None and half.top:
        start = max(start, half.split_row)  # a top half's rows: from its split row on
    elif half is not None and start >= half.split_row:
        return  # a bottom half's rows all sort before start
    for stored in reader.cells(start):
        cell = stored.cell
        if half is not None and not half.holds(cell.row):
            if half.top:
                continue
            break  # a bottom half ends at the split row
        if cell.family != file.family:
            raise HFileCorruptError(reader.name, reader.block_offset,
                                    f"cell of family {cell.family!r} in the store of family "
                                    f"{file.family!r}")
        if cell.tags and not mob_references and any(tag.type == MOB_REFERENCE_TAG
                                                     for tag in cell.tags):
            raise HFileUnsupportedError(reader.name, reader.block_offset,
                                        f"MOB reference cell {cell.row!r}/{cell.family!r}:"
                                        f"{cell.qualifier!r} (MOB files are not read "
                                        "here)")
        mvcc = stored.mvcc if reset is None else reset
        key = (cell.row, cell.family, cell.qualifier, -cell.timestamp, -cell.type, -mvcc,
               -order)
        if previous is not None and key[:5] < previous[:5]:
            raise HFileCorruptError(reader.name, reader.block_offset,
                                    f"cell {cell.row!r}/{cell.family!r}:{cell.qualifier!r}/"
                                    f"{cell.timestamp} sorts before the cell preceding it")
        previous = key
        yield key, (stored if reset is None else StoreCell(cell, mvcc))
