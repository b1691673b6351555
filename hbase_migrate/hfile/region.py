"""A region's cells as a normal scan returns them, read from its store files alone.

``region_cells`` opens every store file of the region (one store folder per family, as
``<region>/<family>/<hfile>`` under a table's folder or a snapshot's restored layout),
merges them (``merge.py``) with the edits newer than them a caller may give (``newer``:
a WAL's tail past the files, as the region's memstore held it), applies the families'
rules (``visible.py``) and resolves MOB reference cells to their MOB files' cells
(``mob.py``). A read from a row (``start``) decodes only the blocks that may hold it or
later rows. Memory: one block per file and one row and family's delete markers.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from typing import BinaryIO, NamedTuple

from hbase_migrate.cluster.descriptors import FOREVER, FamilyDescriptor
from hbase_migrate.errors import HFileError
from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.hfile.merge import StoreFile, merged_cells
from hbase_migrate.hfile.mob import MobResolver
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.hfile.reference import Half
from hbase_migrate.hfile.visible import FamilyRules, ScanSpec, visible_cells
from hbase_migrate.wal.model import Cell


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


def region_cells(stores: Mapping[bytes, Sequence[Source | str | os.PathLike[str]]],
                 families: Sequence[FamilyDescriptor], scan: ScanSpec,
                 mob: MobResolver | None = None,
                 newer: Callable[[Mapping[bytes, int]], Iterable[StoreCell]] | None = None,
                 start: bytes = b"") -> Iterator[Cell]:
    """The cells a normal scan of the region returns: ``stores`` maps each family to its
    store files (a path: the whole file). A store of a family ``families`` lacks is refused,
    naming its first file. MOB reference cells are resolved by ``mob`` after the family
    rules, as HBase's ``MobStoreScanner`` does (without it they are refused). ``newer``,
    given each family's newest store file sequence id (``MAX_SEQ_ID_KEY``; families
    without a file left out), gives the region's edits past its files, in scan order,
    each with its sequence id (merged as the newest source). ``start``: the cells of rows
    at or after it only, each file read from the block its index leads that row to."""
    rules = {f.name: family_rules(f) for f in families}
    sources = {family: [s if isinstance(s, Source) else Source(s) for s in given]
               for family, given in stores.items()}
    for family, found in sources.items():
        if family not in rules and found:
            raise HFileError(os.fspath(found[0].path), f"store file of family {family!r}, "
                             "which the table's descriptor does not have: give the descriptor "
                             "of the table the region belongs to")
    with ExitStack() as opened:
        files = [StoreFile(family, opened.enter_context(HFileReader(
                     s.path, file=None if s.opener is None else s.opener())), s.half)
                 for family, found in sources.items() for s in found]
        flushed: dict[bytes, int] = {}
        for f in files:
            flushed[f.family] = max(flushed.get(f.family, 0), f.sequence_id())
        tail = () if newer is None else newer(flushed)
        cells = visible_cells(merged_cells(files, mob is not None, tail, start), rules, scan)
        if mob is None:
            yield from cells
            return
        where = {family: os.fspath(found[0].path) + (f" (or one of the {len(found) - 1} other "
                                                     "store files of its family)"
                                                     if len(found) > 1 else "")
                 for family, found in sources.items() if found}
        for cell in cells:
            yield mob.resolve(cell, where[cell.family]) if cell.tags else cell
