"""What ``wal stats`` counts: entries, cells by type, markers by kind, tables, regions and
write times per file (:func:`count_file`), merged over many; and which files a directory
walk reads (:func:`expand_paths`)."""

from __future__ import annotations

import builtins
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.errors import HBaseMigrateError, WalCorruptError, WalEmptyError
from hbase_migrate.tablename import table_name
from hbase_migrate.wal.dump import marker_kind
from hbase_migrate.wal.model import METAFAMILY, Entry, type_name
from hbase_migrate.wal.names import parse_wal_path

_READ_ERRORS = (HBaseMigrateError, OSError, ValueError)


@dataclass
class FileStats:
    """Counts for one file (or, merged, for many). ``cells`` counts data cells; METAFAMILY
    marker cells are counted in ``markers`` by kind instead."""

    path: str = ""
    kind: str = ""
    bytes: int = 0
    entries: int = 0
    cells: int = 0
    cells_by_type: Counter[str] = field(default_factory=Counter)
    markers: Counter[str] = field(default_factory=Counter)
    tables: Counter[str] = field(default_factory=Counter)
    regions: set[str] = field(default_factory=set)
    first_write_time: int | None = None
    last_write_time: int | None = None
    end_offset: int | None = None
    end_reason: str | None = None
    error: str | None = None
    failure: BaseException | None = field(default=None, repr=False, compare=False)

    # raw counts of the entries added since the last settle(): type codes, table name bytes,
    # encoded region name bytes; rendered once per distinct value, not once per entry
    _types: dict[int, int] = field(default_factory=dict, repr=False, compare=False)
    _tables: dict[builtins.bytes, int] = field(default_factory=dict, repr=False, compare=False)
    _regions: set[builtins.bytes] = field(default_factory=set, repr=False, compare=False)

    def add(self, entry: Entry) -> None:
        """Count one entry (rendered into the public fields by ``settle``)."""
        key = entry.key
        self.entries += 1
        write_time = key.write_time
        if self.first_write_time is None or write_time < self.first_write_time:
            self.first_write_time = write_time
        if self.last_write_time is None or write_time > self.last_write_time:
            self.last_write_time = write_time
        self._regions.add(key.encoded_region_name)
        types = self._types
        data = 0
        for cell in entry.cells:
            if cell.family == METAFAMILY:
                self.markers[marker_kind(cell)] += 1
                continue
            code = cell.type
            types[code] = types.get(code, 0) + 1
            data += 1
        if data:
            self.cells += data
            tables = self._tables
            tables[key.table_name] = tables.get(key.table_name, 0) + data

    def settle(self) -> None:
        """Render the raw counts into ``cells_by_type``, ``tables`` and ``regions``."""
        for code, n in self._types.items():
            self.cells_by_type[type_name(code)] += n
        for raw, n in self._tables.items():
            self.tables[table_name(raw)] += n
        self.regions.update(map(to_string_binary, self._regions))
        self._types.clear()
        self._tables.clear()
        self._regions.clear()

    def merge(self, other: FileStats) -> None:
        self.settle()
        other.settle()
        self.bytes += other.bytes
        self.entries += other.entries
        self.cells += other.cells
        self.cells_by_type.update(other.cells_by_type)
        self.markers.update(other.markers)
        self.tables.update(other.tables)
        self.regions |= other.regions
        for t in (other.first_write_time, other.last_write_time):
            if t is None:
                continue
            if self.first_write_time is None or t < self.first_write_time:
                self.first_write_time = t
            if self.last_write_time is None or t > self.last_write_time:
                self.last_write_time = t

    def to_dict(self, *, total: bool = False) -> dict[str, Any]:
        self.settle()
        data: dict[str, Any] = {
            "bytes": self.bytes,
            "entries": self.entries,
            "cells": self.cells,
            "cells_by_type": dict(sorted(self.cells_by_type.items())),
            "markers": dict(sorted(self.markers.items())),
            "tables": dict(sorted(self.tables.items())),
            "regions": len(self.regions),
            "first_write_time": self.first_write_time,
            "last_write_time": self.last_write_time,
        }
        if not total:
            data.update(
                path=self.path,
                kind=self.kind,
                end_offset=self.end_offset,
                end_reason=self.end_reason,
                error=self.error,
            )
        return data


def is_pwal(path: str) -> bool:
    """Whether the file or ``webhdfs://`` URL starts with the ``PWAL`` magic."""
    from hbase_migrate.wal.source import open_source

    try:
        with open_source(path) as f:
            return f.read(4) == b"PWAL"
    except (OSError, HBaseMigrateError):
        return False


def expand_paths(paths: tuple[str, ...]) -> tuple[list[str], list[tuple[str, str]]]:
    """Files to read, and (path, kind) of files skipped in directories.

    Files and URLs given directly are always read. In directories, local or ``webhdfs://``
    (walked recursively, in name order), procedure logs and master-store WALs are skipped;
    files of unknown kind are read only when they start with the ``PWAL`` magic.
    """
    from hbase_migrate.wal.source import walk_files

    files: list[str] = []
    skipped: list[tuple[str, str]] = []
    for given in paths:
        under = walk_files(given)
        if under is None:
            files.append(given)
            continue
        for path in under:
            info = parse_wal_path(path)
            if info.is_wal or (info.kind == "unknown" and is_pwal(path)):
                files.append(path)
            else:
                skipped.append((path, info.kind))
    return files, skipped


def local_size(path: str) -> int:
    """The size of a local file (0 for a URL or a missing file)."""
    try:
        return 0 if "://" in path else os.path.getsize(path)
    except OSError:
        return 0


def count_file(path: str, on_progress: Callable[[int], None] | None = None) -> FileStats:
    """Count one file. A read error is kept in ``error`` (and ``failure``), with the counts
    made before it."""
    from hbase_migrate.wal.reader import WalReader

    stats = FileStats(path=path, kind=parse_wal_path(path).kind, bytes=local_size(path))
    try:
        with WalReader(path) as reader:
            stats.bytes = reader.file_size or stats.bytes
            for entry in reader:
                stats.add(entry)
                if on_progress is not None and entry.index % 512 == 0:
                    on_progress(entry.offset)
            stats.end_offset, stats.end_reason = reader.end_offset, reader.end_reason
    except WalEmptyError:
        stats.end_offset, stats.end_reason = 0, "empty"
    except _READ_ERRORS as exc:
        stats.failure = exc
        stats.error = f"{path}: no such file" if isinstance(exc, FileNotFoundError) else str(exc)
        if isinstance(exc, WalCorruptError):
            stats.end_offset, stats.end_reason = exc.offset, "corrupt"
    stats.settle()
    return stats
