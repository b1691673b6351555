"""The file side of reading a WAL: opening a source and the window of it that is loaded.

A reader holds a window of the file (read in ``CHUNK``-sized reads), never the whole file;
``Window.ensure`` is what the cell decoders call when they need more bytes.
"""

from __future__ import annotations

import io
import os
from typing import BinaryIO

CHUNK = 1 << 20

Source = str | os.PathLike[str] | BinaryIO


class Window:
    """The loaded part of the file: ``data`` starts at file offset ``base``."""

    __slots__ = ("base", "data", "exhausted", "fileobj", "limit")

    def __init__(self, fileobj: BinaryIO, base: int, limit: int | None) -> None:
        self.fileobj = fileobj
        self.base = base
        self.limit = limit  # file offset where the edits end (trailer start), if known
        self.data = b""
        self.exhausted = False

    def ensure(self, end: int) -> bytes:
        """Load data up to relative position ``end`` if the file has it; return ``data``."""
        have = len(self.data)
        if end <= have or self.exhausted:
            return self.data
        parts = [self.data]
        while have < end:
            want = max(CHUNK, end - have)
            if self.limit is not None:
                want = min(want, self.limit - self.base - have)
            chunk = self.fileobj.read(want) if want > 0 else b""
            if not chunk:
                self.exhausted = True
                break
            parts.append(chunk)
            have += len(chunk)
        self.data = b"".join(parts)
        return self.data

    def drop(self, pos: int) -> None:
        """Forget the bytes before relative position ``pos``."""
        self.data = self.data[pos:]
        self.base += pos


def open_wal(source: Source) -> tuple[BinaryIO, bool, str]:
    """The file object of ``source``, whether the caller must close it, and its name."""
    if isinstance(source, str | os.PathLike):
        text = os.fspath(source)
        if text.startswith("webhdfs://"):
            from hbase_migrate.wal.source import open_source

            return open_source(text), True, text
        return open(text, "rb"), True, text
    return source, False, str(getattr(source, "name", "<stream>"))


def size_of(fileobj: BinaryIO) -> int | None:
    """The file's size, or None for a stream that cannot seek."""
    try:
        if not fileobj.seekable():
            return None
        here = fileobj.tell()
        size = fileobj.seek(0, io.SEEK_END)
        fileobj.seek(here)
        return size
    except (OSError, ValueError, AttributeError):
        return None
