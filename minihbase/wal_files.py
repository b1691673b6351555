"""One region server's write-ahead log: the live file in ``WALs/<server>/``, rolls, archives.

Files are named as HBase's ``AbstractFSWAL`` names them: the URL-encoded server name, a dot
and the file number, ``max(previous number + 1, now in ms)`` (strictly increasing, the
creation time). A roll closes the current file with the trailer and opens the next one; an
archive renames a closed file into ``oldWALs/`` and sets its mtime to now
(``CommonFSUtils.renameAndSetModifyTime``). Every append is flushed to the operating system
before it returns, so a reader sees every acknowledged entry; a close also fsyncs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from hbase_migrate.wal.model import Cell, WalKey
from hbase_migrate.wal.names import ServerName, server_dir_name, wal_file_name
from hbase_migrate.wal.writer import WalOptions, WalWriter

WALS_DIR = "WALs"
OLD_WALS_DIR = "oldWALs"


def archive_file(path: Path, root: Path) -> Path:
    """Move a closed WAL into ``<root>/oldWALs/`` (same name) with a fresh mtime."""
    target = root / OLD_WALS_DIR / path.name
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(path, target)
    now = time.time()
    os.utime(target, (now, now))
    return target


class ServerWal:
    """The WAL of one region server. Not thread-safe: the caller holds the cluster lock."""

    def __init__(self, root: Path, server: ServerName, options: WalOptions,
                 clock: Callable[[], int]) -> None:
        self.root = root
        self.server = server
        self.options = options
        self.clock = clock
        self.dir = root / WALS_DIR / server_dir_name(server)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._filenum = 0
        self._writer: WalWriter | None = None
        self.path: Path = self.dir
        self.created_ms = 0
        self._open()

    def _open(self) -> None:
        self._filenum = max(self._filenum + 1, self.clock())
        self.path = self.dir / wal_file_name(self.server, self._filenum)
        self._writer = WalWriter.create(self.path, self.options)
        self._writer.flush()
        self.created_ms = self._filenum

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def size(self) -> int:
        """Bytes in the current file (the offset where the next entry goes)."""
        return self._writer.tell() if self._writer is not None else 0

    def append(self, key: WalKey, cells: Sequence[Cell]) -> int:
        """Append one entry, flushed; return the offset just after it."""
        if self._writer is None:
            raise OSError(f"WAL of {self.server} is closed")
        self._writer.append(key, cells)
        self._writer.flush()
        return self._writer.tell()

    def _finish(self, trailer: bool) -> None:
        if self._writer is not None:
            self._writer.close(trailer=trailer)
            self._writer = None

    def roll(self) -> Path:
        """Close the current file with the trailer, open the next; return the closed path."""
        old = self.path
        self._finish(trailer=True)
        self._open()
        return old

    def close(self, trailer: bool = True) -> Path:
        """Close the current file (``trailer=False`` is a crash: the file just stops)."""
        self._finish(trailer)
        return self.path

    def files(self) -> list[Path]:
        """The files still in this server's directory, oldest first."""
        return sorted(self.dir.iterdir(), key=lambda p: p.name) if self.dir.exists() else []
