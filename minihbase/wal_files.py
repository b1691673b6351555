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
import threading
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


BLOCK_SIZE = 128 * 1024 * 1024  # dfs.blocksize default


class Leases:
    """Files under construction as HDFS's NameNode sees them, and the length it records for
    each: what the writer last reported, not what it wrote. HBase's writer reports the
    header when it creates a WAL (``hflush`` of later entries reports nothing), so until the
    file is closed the NameNode knows the header and every completed block only. A crashed
    writer's file stays under construction until its lease is recovered (the split archives
    it). Keyed by inode, so a dead server's folder renamed to ``-splitting`` keeps its
    leases. Thread-safe: the WebHDFS endpoint asks from its own threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._recorded: dict[int, int] = {}

    def hold(self, path: Path, reported: int) -> None:
        with self._lock:
            self._recorded[path.stat().st_ino] = reported

    def release(self, path: Path) -> None:
        try:
            inode = path.stat().st_ino
        except FileNotFoundError:
            return
        with self._lock:
            self._recorded.pop(inode, None)

    def recorded_length(self, inode: int, size: int) -> int | None:
        """The NameNode's length of a file under construction (None: not one)."""
        with self._lock:
            reported = self._recorded.get(inode)
        if reported is None:
            return None
        return min(size, max(reported, size // BLOCK_SIZE * BLOCK_SIZE))


class ServerWal:
    """The WAL of one region server. Not thread-safe: the caller holds the cluster lock."""

    def __init__(self, root: Path, server: ServerName, options: WalOptions,
                 clock: Callable[[], int], leases: Leases | None = None) -> None:
        self.root = root
        self.leases = leases
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
        if self.leases is not None:
            self.leases.hold(self.path, self._writer.tell())
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
            if trailer and self.leases is not None:  # a crash keeps the lease
                self.leases.release(self.path)

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
