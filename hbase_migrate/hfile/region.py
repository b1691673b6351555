"""A region's cells as a normal scan returns them, read from its store files alone.

``region_cells`` opens every store file of the region (one store folder per family, as
``<region>/<family>/<hfile>`` under a table's folder or a snapshot's restored layout),
merges them (``merge.py``) with the edits newer than them a caller may give (``newer``:
a WAL's tail past the files, as the region's memstore held it), applies the families'
rules (``visible.py``) and resolves MOB reference cells to their MOB files' cells
(``mob.py``). A read from a row (``start``) decodes only the blocks that may hold it or
later rows. ``region_rows`` gives the cells of a range of rows a list per row (what a
validation digests), the merge, the rules and the cut into rows in one compiled loop
(``_visible.pyx``) when it runs. ``region_digest`` adds those rows to a range's digest,
from the raw data blocks with no Python object per cell where its cells have no tags
(``_digestscan.pyx``). Memory: one block per file and one row and family's delete
markers.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from typing import Any, BinaryIO, NamedTuple, Protocol

from hbase_migrate.cluster.descriptors import FOREVER, FamilyDescriptor
from hbase_migrate.compiled import Choice
from hbase_migrate.errors import HFileError
from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.hfile.merge import StoreFile, merge_sources, merged_cells
from hbase_migrate.hfile.mob import MobResolver
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.hfile.reference import Half
from hbase_migrate.hfile.visible import VISIBLE, FamilyRules, ScanSpec, visible_cells
from hbase_migrate.wal.model import Cell


class RangeDigest(Protocol):
    """What ``region_digest`` adds a region's rows to (``ranges/_digest.pyx``'s)."""

    def add_rows(self, rows: Iterable[list[Cell]]) -> None: ...
    def state(self) -> Any: ...
    def restore(self, state: Any) -> None: ...

# the compiled region digest (``_digestscan.pyx``, built by ``make setup``)
DIGEST_SCAN = Choice("hbase_migrate.hfile._digestscan", "the compiled region digest is")


def family_rules(family: FamilyDescriptor) -> FamilyRules:
    """What a family's descriptor says about reads (its TTL is in seconds)."""
    return FamilyRules(max_versions=family.max_versions, min_versions=family.min_versions,
                       ttl_ms=None if family.ttl >= FOREVER else family.ttl * 1000,
                       keep_deleted_cells=family.keep_deleted_cells.upper())


class Source(NamedTuple):
    """A store file to read: its path, the half a reference file reads of it, and what opens
    it where the path alone does not say how (a throttled stream over WebHDFS)."""

    path: str | os.PathLike[str]
    half: Half | None = None
    opener: Callable[[], BinaryIO] | None = None


Stores = Mapping[bytes, Sequence[Source | str | os.PathLike[str]]]
Newer = Callable[[Mapping[bytes, int]], Iterable[StoreCell]]


def region_cells(stores: Stores, families: Sequence[FamilyDescriptor], scan: ScanSpec,
                 mob: MobResolver | None = None, newer: Newer | None = None,
                 start: bytes = b"") -> Iterator[Cell]:
    """The cells a normal scan of the region returns: ``stores`` maps each family to its
    store files (a path: the whole file). A store of a family ``families`` lacks is refused,
    naming its first file. MOB reference cells are resolved by ``mob`` after the family
    rules, as HBase's ``MobStoreScanner`` does (without it they are refused). ``newer``,
    given each family's newest store file sequence id (``MAX_SEQ_ID_KEY``; families
    without a file left out), gives the region's edits past its files, in scan order,
    each with its sequence id (merged as the newest source). ``start``: the cells of rows
    at or after it only, each file read from the block its index leads that row to."""
    with ExitStack() as opened:
        files, rules, resolve = _open(opened, stores, families, mob)
        cells = visible_cells(merged_cells(files, mob is not None, _tail(files, newer), start),
                              rules, scan)
        if resolve is None:
            yield from cells
            return
        for cell in cells:
            yield resolve(cell) if cell.tags else cell


def region_rows(stores: Stores, families: Sequence[FamilyDescriptor], scan: ScanSpec,
                start: bytes = b"", stop: bytes = b"", mob: MobResolver | None = None,
                newer: Newer | None = None) -> Iterator[list[Cell]]:
    """``region_cells``' cells of the rows from ``start`` up to ``stop`` (empty: to the
    region's end), a list per row. The read stops at the first cell of ``stop``'s row or a
    later one, before the family rules (no file is read past it). The compiled merge,
    matcher and cut into rows in one loop when they run (``_visible.pyx``), else
    ``region_cells``' parts cut by ``itertools.groupby``: the same rows."""
    with ExitStack() as opened:
        files, rules, resolve = _open(opened, stores, families, mob)
        yield from rows_of(files, rules, scan, start, stop, _tail(files, newer), resolve)


def rows_of(files: Sequence[StoreFile], rules: Mapping[bytes, FamilyRules], scan: ScanSpec,
            start: bytes, stop: bytes, newer: Iterable[StoreCell] = (),
            resolve: Callable[[Cell], Cell] | None = None) -> Iterator[list[Cell]]:
    """``region_rows`` of opened ``files``: MOB reference cells resolved by ``resolve``
    (refused without it)."""
    compiled = VISIBLE.compiled()
    rows: Iterator[list[Cell]] | None = None if compiled is None else compiled.region_rows(
        merge_sources(files, start), resolve is not None, iter(newer), start, stop, rules,
        scan, resolve)
    if rows is not None:
        return rows
    merged = merged_cells(files, resolve is not None, newer, start)
    cells = visible_cells(itertools.takewhile(lambda s: not stop or s.cell.row < stop, merged),
                          rules, scan)
    if resolve is not None:
        cells = (resolve(cell) if cell.tags else cell for cell in cells)
    return (list(row) for _row, row in itertools.groupby(
        (cell for cell in cells if cell.row >= start), key=lambda c: c.row))


def region_digest(stores: Stores, families: Sequence[FamilyDescriptor], scan: ScanSpec,
                  into: RangeDigest, start: bytes = b"", stop: bytes = b"",
                  mob: MobResolver | None = None, newer: Newer | None = None) -> None:
    """Add ``region_rows``' rows to ``into`` (the compiled range digest of
    ``ranges/_digest.pyx``): in one compiled loop from the raw data blocks
    (``_digestscan.pyx``, every encoding) when it runs, else ``region_rows``' rows. A
    region the loop leaves half way (a cell with tags, a block it does not read, a fault
    the reference reports) is added again from ``region_rows``, ``into`` put back as it
    was before it first."""
    fused = DIGEST_SCAN.compiled()
    if fused is not None:
        state = into.state()
        try:
            with ExitStack() as opened:
                files, rules, resolve = _open(opened, stores, families, mob)
                tail = iter(_tail(files, newer))  # read once: the rows path takes it on
                settings = VISIBLE.compiled()
                made = None if settings is None else settings.store_settings(rules, scan)
                if made is None:
                    into.add_rows(rows_of(files, rules, scan, start, stop, tail, resolve))
                    return
                fused.region_digest(merge_sources(files, start, fused.plain_block),
                                    tail, made, start, stop, into)
                return
        except fused.Unfused:
            into.restore(state)
    into.add_rows(region_rows(stores, families, scan, start, stop, mob, newer))


def _open(opened: ExitStack, stores: Stores, families: Sequence[FamilyDescriptor],
          mob: MobResolver | None
          ) -> tuple[list[StoreFile], dict[bytes, FamilyRules], Callable[[Cell], Cell] | None]:
    """The region's store files opened (closed with ``opened``), the families' rules, and
    what resolves a MOB reference cell (None without ``mob``)."""
    rules = {f.name: family_rules(f) for f in families}
    sources = {family: [s if isinstance(s, Source) else Source(s) for s in given]
               for family, given in stores.items()}
    for family, found in sources.items():
        if family not in rules and found:
            raise HFileError(os.fspath(found[0].path), f"store file of family {family!r}, "
                             "which the table's descriptor does not have: give the descriptor "
                             "of the table the region belongs to")
    files = [StoreFile(family, opened.enter_context(HFileReader(
                 s.path, file=None if s.opener is None else s.opener())), s.half)
             for family, found in sources.items() for s in found]
    if mob is None:
        return files, rules, None
    where = {family: os.fspath(found[0].path) + (f" (or one of the {len(found) - 1} other "
                                                 "store files of its family)"
                                                 if len(found) > 1 else "")
             for family, found in sources.items() if found}
    return files, rules, lambda cell: mob.resolve(cell, where[cell.family])


def _tail(files: Sequence[StoreFile], newer: Newer | None) -> Iterable[StoreCell]:
    """``newer``'s cells, given each family's newest file's sequence id."""
    flushed: dict[bytes, int] = {}
    for f in files:
        flushed[f.family] = max(flushed.get(f.family, 0), f.sequence_id())
    return () if newer is None else newer(flushed)
