"""MOB reference cells resolved to the cells of their MOB files, as HBase's scanners return
them. Facts from HBase's source (branch-2.6; the same in 3.0):

* A cell of a MOB family whose value is over ``MOB_THRESHOLD`` is flushed to a MOB file, and
  the store file gets a reference cell in its place (``MobUtils.createMobRefCell``): the same
  key, the value ``Bytes.toBytes(valueLength)`` (4 bytes, big-endian) followed by the MOB
  file's name, and the tags ``MOB_REFERENCE_TAG_TYPE`` (5) and ``MOB_TABLE_NAME_TAG_TYPE``
  (6, the table whose MOB folder holds the file; a cloned table keeps its source's)
  (``TagType``, ``MobUtils.getMobValueLength``, ``getMobFileName``, ``getTableName``). A value
  of 4 bytes or less is no valid reference (``hasValidMobRefCellValue``).
* The MOB files of a family are in ``<root>/mobdir/data/<ns>/<table>/<mob region>/<family>``
  and, once archived, ``<root>/archive/data/<ns>/<table>/<mob region>/<family>``: ``HMobStore``
  looks there in that order (``getLocations``). The MOB region is the table's dummy region
  with start key ``.mob`` and region id 0 (``MobUtils.getMobRegionInfo``,
  ``MobConstants.MOB_DIR_NAME``, ``MOB_REGION_NAME``); a snapshot lists its files as one more
  region of the manifest (``SnapshotManifest.addMobRegion``), which no scan reads as a region.
* ``HMobStore.resolve`` reads the MOB file's first cell at or after the reference's key
  (``MobFile.readCell``: a seek) and returns it in the reference's place. The scanner
  resolves only the cells it returns (``MobStoreScanner``, after the matcher's rules), so
  the rules see the reference cells. A file found in neither place fails the read
  (unless the scan asks ``empty.value.on.mobcell.miss``, which a validation does not).

Here a reference whose MOB file holds no cell of exactly its key, or one of another value
length, is refused naming both files: HBase would return whatever cell followed.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterator, Sequence

from hbase_migrate.cluster.descriptors import encoded_region_name
from hbase_migrate.errors import HFileError
from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.tablename import DEFAULT_NAMESPACE, split_table_name
from hbase_migrate.wal.model import Cell, cell_order

MOB_REFERENCE_TAG = 5  # TagType.MOB_REFERENCE_TAG_TYPE
MOB_TABLE_NAME_TAG = 6  # TagType.MOB_TABLE_NAME_TAG_TYPE
MOB_DIR = "mobdir"  # MobConstants.MOB_DIR_NAME
MOB_REGION_START = b".mob"  # MobConstants.MOB_REGION_NAME: the MOB region's start key
_LENGTH = 4  # Bytes.SIZEOF_INT

# the relative paths a MOB file may be at, in order -> a local copy of the first found
# (None: at neither)
MobFetch = Callable[[Sequence[str]], "str | os.PathLike[str] | None"]


def is_reference(cell: Cell) -> bool:
    return any(tag.type == MOB_REFERENCE_TAG for tag in cell.tags)


def is_mob_region(start: bytes, region_id: int) -> bool:
    """Whether a snapshot's region is the table's MOB region (its MOB files)."""
    return start == MOB_REGION_START and region_id == 0


def mob_region(table: str) -> str:
    """The encoded name of ``table``'s MOB region (``MobUtils.getMobRegionInfo``)."""
    return encoded_region_name(table, MOB_REGION_START, 0)


def mob_paths(table: str, family: bytes, name: str) -> tuple[str, str]:
    """Where MOB file ``name`` of ``table``'s ``family`` is under the HBase root: live, then
    archived (``HMobStore.getLocations``)."""
    namespace, qualifier = split_table_name(table)
    folder = posixpath.join("data", namespace or DEFAULT_NAMESPACE, qualifier,
                            mob_region(table), family.decode())
    return f"{MOB_DIR}/{folder}/{name}", f"archive/{folder}/{name}"


def _describe(cell: Cell) -> str:
    return f"{cell.row!r}/{cell.family!r}:{cell.qualifier!r}/{cell.timestamp}"


class _Cursor:
    """One MOB file read forward; a key before its position reopens it."""

    def __init__(self, path: str | os.PathLike[str], name: str) -> None:
        self.path, self.name = path, name
        self.reader: HFileReader | None = None
        self.cells: Iterator[StoreCell] = iter(())
        self.current: Cell | None = None

    def _open(self) -> None:
        self.close()
        self.reader = HFileReader(self.path, self.name)
        self.cells = self.reader.cells()
        self.current = self._next()

    def _next(self) -> Cell | None:
        stored = next(self.cells, None)
        return None if stored is None else stored.cell

    def seek(self, key: tuple[bytes, bytes, bytes, int, int]) -> Cell | None:
        """The first cell at or after ``key`` (HBase's order), as ``MobFile.readCell``."""
        if self.reader is None or self.current is None or cell_order(self.current) > key:
            self._open()
        while self.current is not None and cell_order(self.current) < key:
            self.current = self._next()
        return self.current

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()
            self.reader = None


class MobResolver:
    """Resolves the reference cells of table ``table``'s store files; each MOB file fetched
    once (``fetch``) and read forward, so a region's references, met in key order, read each
    file about once."""

    def __init__(self, table: str, fetch: MobFetch) -> None:
        self.table, self.fetch = table, fetch
        self.cursors: dict[tuple[str, bytes, str], _Cursor] = {}

    def __enter__(self) -> MobResolver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for cursor in self.cursors.values():
            cursor.close()
        self.cursors.clear()

    def resolve(self, cell: Cell, where: str) -> Cell:
        """``cell`` itself, or for a reference the MOB file's cell (what the flush wrote
        there: the original cell, its own tags)."""
        if not is_reference(cell):
            return cell
        if len(cell.value) <= _LENGTH:
            raise HFileError(where, f"MOB reference cell {_describe(cell)}: its value of "
                             f"{len(cell.value)} bytes names no MOB file (a damaged store "
                             "file: validate from the live source)")
        length = int.from_bytes(cell.value[:_LENGTH], "big", signed=True)
        name = cell.value[_LENGTH:].decode("utf-8", "replace")
        table = next((t.value.decode() for t in cell.tags if t.type == MOB_TABLE_NAME_TAG),
                     self.table)
        found = self._cursor(table, cell, name, where).seek(cell_order(cell))
        if found is None or cell_order(found) != cell_order(cell):
            raise HFileError(where, f"MOB reference cell {_describe(cell)} names MOB file "
                             f"{name}, which holds no cell of that key (HBase would return "
                             f"{'nothing' if found is None else _describe(found)}): the "
                             "MOB file does not match the reference; validate from the "
                             "live source")
        if len(found.value) != length:
            raise HFileError(where, f"MOB reference cell {_describe(cell)} gives a value of "
                             f"{length} bytes, its cell in MOB file {name} has "
                             f"{len(found.value)}: validate from the live source")
        return found

    def _cursor(self, table: str, cell: Cell, name: str, where: str) -> _Cursor:
        key = (table, cell.family, name)
        cursor = self.cursors.get(key)
        if cursor is None:
            paths = mob_paths(table, cell.family, name)
            local = self.fetch(paths)
            if local is None:
                raise HFileError(where, f"MOB reference cell {_describe(cell)}: its MOB "
                                 f"file is in neither {paths[0]} nor {paths[1]} under the "
                                 "HBase root (removed since the snapshot?): validate from "
                                 "the live source")
            cursor = self.cursors[key] = _Cursor(local, paths[0])
        return cursor
