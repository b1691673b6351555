"""Test helpers: every WAL file of an embedded cluster, read back with the project's reader,
and a table state rebuilt from the entries alone."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.markers import decode_marker, is_marker
from hbase_migrate.wal.model import Cell, Entry
from hbase_migrate.wal.reader import WalReader
from minihbase.store import Store


def wal_files(root: Path) -> list[Path]:
    """Live (``WALs/<server>/``), dead (``WALs/<server>-splitting/``) and archived files."""
    return sorted([*root.glob("WALs/*/*"), *root.glob("oldWALs/*")])


def entries_of(path: Path) -> list[Entry]:
    with WalReader(str(path)) as reader:
        return list(reader)


def all_entries(root: Path) -> Iterator[tuple[Path, Entry]]:
    for path in wal_files(root):
        for entry in entries_of(path):
            yield path, entry


def markers_of(entries: Iterable[tuple[Path, Entry]]) -> list[tuple[Path, Entry, object]]:
    return [(p, e, decode_marker(c)) for p, e in entries for c in e.cells if is_marker(c)]


def data_edits(entries: Iterable[tuple[Path, Entry]]) -> list[Entry]:
    """Entries carrying data, in each region's sequence order (sequence ids are
    region-monotonic, so this is the order HBase applied them in)."""
    edits = [e for _, e in entries if not any(is_marker(c) for c in e.cells)]
    return sorted(edits, key=lambda e: (e.key.encoded_region_name, e.key.sequence))


def rebuild_into(store: Store, edits: Iterable[Entry]) -> None:
    """Apply the cells of ``edits`` through the raw store path (no WAL)."""
    with store.batch() as batch:
        for entry in edits:
            batch.write(entry.key.table_name.decode(), list(entry.cells))


def raw_cells(store: Store, table: str) -> list[Cell]:
    out: list[Cell] = []
    start, inclusive = b"", True
    while rows := store.raw_rows(table, start, inclusive, b""):
        for _, cells in rows:
            out.extend(cells)
        start, inclusive = rows[-1][0], False
    return out


def scan_all_versions(endpoint: str, table: str) -> list[Cell]:
    with Thrift2Client(endpoint) as client:
        return [c for row in client.scan(table) for c in row]
