"""Durable storage of the embedded cluster: schema, regions and cells in one SQLite file.

Cells are stored exactly as HBase would log them (concrete timestamps, markers kept) in a
table whose primary key is HBase's cell order: (table id, row, family, qualifier,
timestamp descending, type descending). SQLite compares BLOBs with ``memcmp``, so rows and
qualifiers sort as unsigned bytes. The same key written again replaces the older cell (a put
at the same (row, family, qualifier, timestamp) overwrites, as in HBase).

The database runs in WAL journal mode with ``synchronous=FULL``: a write returns only once it
is on disk, so every acknowledged mutation survives a crash of the process.

The write path is :meth:`Store.apply` (or :meth:`Batch.apply` inside :meth:`Store.batch`):
``apply(table, region, cells, durability)``. The cells are what HBase writes to its WAL, and
an optional :class:`WriteHook` sees them first; when it raises, nothing is stored. Inside a
batch, :meth:`Batch.write` and :meth:`Batch.log` split the two halves, so that a client call
touching several rows of one region is logged once (the transaction commits only after every
``log``; when one raises, the whole batch is rolled back).

``region_state`` keeps what the region servers persist: each region's server slot and last
sequence id (see :mod:`minihbase.regionserver`).
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from hbase_migrate.cluster.descriptors import FamilyDescriptor, RegionDescriptor, TableDescriptor
from hbase_migrate.wal.model import Cell
from minihbase.model import (
    Durability,
    IllegalSplitError,
    NamespaceExistError,
    TableExistsError,
    TableNotFoundError,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tables (
    id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, enabled INTEGER NOT NULL,
    descriptor TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS regions (
    table_id INTEGER NOT NULL, start_key BLOB NOT NULL, end_key BLOB NOT NULL,
    region_id INTEGER NOT NULL, PRIMARY KEY (table_id, start_key));
CREATE TABLE IF NOT EXISTS cells (
    table_id INTEGER NOT NULL, row BLOB NOT NULL, family BLOB NOT NULL,
    qualifier BLOB NOT NULL, ts INTEGER NOT NULL, type INTEGER NOT NULL, value BLOB NOT NULL,
    PRIMARY KEY (table_id, row, family, qualifier, ts DESC, type DESC)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS namespaces (name TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS region_state (
    encoded TEXT PRIMARY KEY, server INTEGER NOT NULL, sequence INTEGER NOT NULL);
"""
_COLUMNS = "row, family, qualifier, ts, type, value"
_ORDER = "ORDER BY row, family, qualifier, ts DESC, type DESC"
_ROWS_PER_QUERY = 500  # the rows one query names (SQLite's bound on parameters: 999 before 3.32)


class WriteHook(Protocol):
    """Called with exactly the cells HBase would log, before they are stored."""

    def __call__(self, table: str, region: RegionDescriptor, cells: Sequence[Cell],
                 durability: Durability) -> None: ...


@dataclass(frozen=True)
class TableInfo:
    """A table as stored: its id, descriptor, state and regions (sorted by start key)."""

    id: int
    descriptor: TableDescriptor
    enabled: bool
    regions: tuple[RegionDescriptor, ...]

    @property
    def name(self) -> str:
        return self.descriptor.name


def _descriptor_json(desc: TableDescriptor) -> str:
    return json.dumps({
        "families": [f.to_json() for f in desc.families],
        "attributes": [[k.hex(), v.hex()] for k, v in desc.attributes],
    })


def _descriptor_from_json(name: str, text: str) -> TableDescriptor:
    data = json.loads(text)
    return TableDescriptor(
        name=name,
        families=tuple(FamilyDescriptor.from_json(f) for f in data["families"]),
        attributes=tuple((bytes.fromhex(k), bytes.fromhex(v)) for k, v in data["attributes"]),
    )


class Batch:
    """Writes of one transaction; see :meth:`Store.batch`."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def apply(self, table: str, region: RegionDescriptor, cells: Sequence[Cell],
              durability: Durability) -> None:
        """Store ``cells`` (concrete timestamps) of ``region``; the hook sees them first."""
        self.log(table, region, cells, durability)
        self.write(table, cells)

    def log(self, table: str, region: RegionDescriptor, cells: Sequence[Cell],
            durability: Durability) -> None:
        """Show ``cells`` of ``region`` to the write hook (the WAL), without storing them."""
        if self._store.write_hook is not None:
            self._store.write_hook(table, region, cells, durability)

    def write(self, table: str, cells: Sequence[Cell]) -> None:
        """Store ``cells`` without the hook (bulk loads; or logged with :meth:`log`)."""
        store = self._store
        table_id = store.table(table).id
        store.db.executemany(
            "INSERT OR REPLACE INTO cells VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(table_id, c.row, c.family, c.qualifier, c.timestamp, c.type, c.value)
             for c in cells],
        )


class Store:
    """The SQLite-backed store. Thread-safe: every call holds one re-entrant lock."""

    def __init__(self, path: str | Path, write_hook: WriteHook | None = None) -> None:
        self.path = Path(path)
        self.write_hook = write_hook
        self.lock = threading.RLock()
        self.db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(_SCHEMA)
        self._tables: dict[str, TableInfo] = {}
        self._load()

    def close(self) -> None:
        with self.lock:
            self.db.close()

    # --- schema -------------------------------------------------------------------------

    def _load(self) -> None:
        self._tables.clear()
        for tid, name, enabled, desc in self.db.execute(
                "SELECT id, name, enabled, descriptor FROM tables"):
            regions = tuple(
                RegionDescriptor(name, start, end, rid)
                for start, end, rid in self.db.execute(
                    "SELECT start_key, end_key, region_id FROM regions WHERE table_id = ? "
                    "ORDER BY start_key", (tid,))
            )
            self._tables[name] = TableInfo(tid, _descriptor_from_json(name, desc),
                                           bool(enabled), regions)

    def tables(self) -> list[TableInfo]:
        with self.lock:
            return [self._tables[n] for n in sorted(self._tables)]

    def table(self, name: str) -> TableInfo:
        with self.lock:
            info = self._tables.get(name)
        if info is None:
            raise TableNotFoundError(name)
        return info

    def namespaces(self) -> list[str]:
        """HBase's two built-in namespaces, those created, and those of existing tables."""
        with self.lock:
            created = {row[0] for row in self.db.execute("SELECT name FROM namespaces")}
            of_tables = {n.partition(":")[0] for n in self._tables if ":" in n}
        return sorted({"default", "hbase"} | created | of_tables)

    def create_namespace(self, name: str) -> None:
        with self.lock, self._transaction():
            if name in self.namespaces():
                raise NamespaceExistError(name)
            self.db.execute("INSERT INTO namespaces VALUES (?)", (name,))

    def has_table(self, name: str) -> bool:
        with self.lock:
            return name in self._tables

    def create_table(self, desc: TableDescriptor, regions: Sequence[RegionDescriptor]) -> None:
        with self.lock, self._transaction():
            if desc.name in self._tables:
                raise TableExistsError(desc.name)
            cur = self.db.execute(
                "INSERT INTO tables (name, enabled, descriptor) VALUES (?, 1, ?)",
                (desc.name, _descriptor_json(desc)))
            self.db.executemany(
                "INSERT INTO regions VALUES (?, ?, ?, ?)",
                [(cur.lastrowid, r.start_key, r.end_key, r.region_id) for r in regions])
        with self.lock:
            self._load()

    def delete_table(self, name: str) -> None:
        with self.lock, self._transaction():
            tid = self.table(name).id
            self.db.execute("DELETE FROM cells WHERE table_id = ?", (tid,))
            self.db.execute("DELETE FROM regions WHERE table_id = ?", (tid,))
            self.db.execute("DELETE FROM tables WHERE id = ?", (tid,))
        with self.lock:
            self._load()

    def split_region(self, name: str, start_key: bytes, split_key: bytes, region_id: int
                     ) -> tuple[RegionDescriptor, RegionDescriptor]:
        """Replace the region starting at ``start_key`` by its two daughters, divided at
        ``split_key`` (strictly inside it), both with ``region_id``."""
        with self.lock, self._transaction():
            info = self.table(name)
            parent = next((r for r in info.regions if r.start_key == start_key), None)
            if parent is None or not parent.contains(split_key) or split_key == start_key:
                raise IllegalSplitError(name, start_key, split_key)
            self.db.execute("DELETE FROM regions WHERE table_id = ? AND start_key = ?",
                            (info.id, start_key))
            self.db.executemany("INSERT INTO regions VALUES (?, ?, ?, ?)", [
                (info.id, start_key, split_key, region_id),
                (info.id, split_key, parent.end_key, region_id)])
        with self.lock:
            self._load()
        return (RegionDescriptor(name, start_key, split_key, region_id),
                RegionDescriptor(name, split_key, parent.end_key, region_id))

    def set_descriptor(self, desc: TableDescriptor) -> None:
        """Replace a table's descriptor; the cells of a family it no longer has go, as
        HBase removes a deleted family's store files."""
        with self.lock, self._transaction():
            info = self.table(desc.name)
            kept = {f.name for f in desc.families}
            for family in info.descriptor.families:
                if family.name not in kept:
                    self.db.execute("DELETE FROM cells WHERE table_id = ? AND family = ?",
                                    (info.id, family.name))
            self.db.execute("UPDATE tables SET descriptor = ? WHERE id = ?",
                            (_descriptor_json(desc), info.id))
        with self.lock:
            self._load()

    def set_enabled(self, name: str, enabled: bool) -> None:
        with self.lock, self._transaction():
            self.db.execute("UPDATE tables SET enabled = ? WHERE id = ?",
                            (int(enabled), self.table(name).id))
        with self.lock:
            self._load()

    # --- cells --------------------------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    @contextmanager
    def batch(self) -> Iterator[Batch]:
        """One transaction: reads inside it see its own writes; committed (and synced) at
        the end, rolled back when the block raises."""
        with self.lock, self._transaction():
            yield Batch(self)

    def apply(self, table: str, region: RegionDescriptor, cells: Sequence[Cell],
              durability: Durability) -> None:
        """Store one region's cells durably (the WAL hook of part 2 sees them first)."""
        with self.batch() as batch:
            batch.apply(table, region, cells, durability)

    # --- region state -------------------------------------------------------------------

    def region_states(self) -> dict[str, tuple[int, int]]:
        """Persisted ``encoded region name -> (server slot, last sequence id)``."""
        with self.lock:
            return {e: (srv, seq) for e, srv, seq in self.db.execute(
                "SELECT encoded, server, sequence FROM region_state")}

    def save_region_state(self, encoded: str, server: int, sequence: int) -> None:
        """Record a region's server slot and last sequence id (joins an open batch)."""
        with self.lock:
            self.db.execute("INSERT OR REPLACE INTO region_state VALUES (?, ?, ?)",
                            (encoded, server, sequence))

    def row_cells(self, table: str, row: bytes) -> list[Cell]:
        """Every stored cell of one row (puts and markers) in HBase order."""
        with self.lock:
            tid = self.table(table).id
            return [Cell(*r) for r in self.db.execute(
                f"SELECT {_COLUMNS} FROM cells WHERE table_id = ? AND row = ? {_ORDER}",
                (tid, row))]

    def rows_cells(self, table: str, rows: Sequence[bytes]) -> dict[bytes, list[Cell]]:
        """:meth:`row_cells` of each of ``rows`` read together (a Multi's Gets), by row; a
        row with no stored cell is left out."""
        found: dict[bytes, list[Cell]] = {}
        with self.lock:
            tid = self.table(table).id
            keys = sorted(set(rows))
            for at in range(0, len(keys), _ROWS_PER_QUERY):
                some = keys[at:at + _ROWS_PER_QUERY]
                for cell in itertools.starmap(Cell, self.db.execute(
                        f"SELECT {_COLUMNS} FROM cells WHERE table_id = ? AND row IN "
                        f"({', '.join('?' * len(some))}) {_ORDER}", (tid, *some))):
                    found.setdefault(cell.row, []).append(cell)
        return found

    def raw_rows(self, table: str, start: bytes, inclusive: bool, stop: bytes,
                 max_cells: int = 2000) -> list[tuple[bytes, list[Cell]]]:
        """Whole rows from ``start`` (inclusive or not) below ``stop`` (empty = no bound),
        about ``max_cells`` cells at most (a single larger row is returned whole)."""
        with self.lock:
            tid = self.table(table).id
            cond = "row >= ?" if inclusive else "row > ?"
            args: list[object] = [tid, start]
            if stop:
                cond += " AND row < ?"
                args.append(stop)
            sql = f"SELECT {_COLUMNS} FROM cells WHERE table_id = ? AND {cond} {_ORDER} LIMIT ?"
            cells = [Cell(*r) for r in self.db.execute(sql, (*args, max_cells + 1))]
            rows = _group_rows(cells)
            if len(cells) > max_cells:
                if len(rows) > 1:
                    rows.pop()  # possibly incomplete
                else:
                    rows = [(rows[0][0], self.row_cells(table, rows[0][0]))]
            return rows

    def replace_row(self, table: str, row: bytes, cells: Sequence[Cell]) -> None:
        """Swap a row's stored cells (major compaction); not a client write, no hook."""
        with self.lock, self._transaction():
            tid = self.table(table).id
            self.db.execute("DELETE FROM cells WHERE table_id = ? AND row = ?", (tid, row))
            self.db.executemany(
                "INSERT INTO cells VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(tid, c.row, c.family, c.qualifier, c.timestamp, c.type, c.value)
                 for c in cells])


def _group_rows(cells: Sequence[Cell]) -> list[tuple[bytes, list[Cell]]]:
    rows: list[tuple[bytes, list[Cell]]] = []
    for cell in cells:
        if not rows or rows[-1][0] != cell.row:
            rows.append((cell.row, []))
        rows[-1][1].append(cell)
    return rows
