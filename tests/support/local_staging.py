"""A bulk load's staging on local disk: the target's filesystem as a local folder, for the
bulk loads of tests and benchmarks on the embedded clusters (which keep no HFiles)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit


class LocalStaging:
    """The target's filesystem as ``folder`` (a path on it, or a URL's path, under it):
    what :class:`~hbase_migrate.replay.bulkload.BulkLoad` stages files through."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def at(self, path: str) -> Path:
        """Where ``path`` (``hdfs://nn/x/y`` or ``/x/y``) is on local disk."""
        return self.folder / urlsplit(path).path.lstrip("/")

    def world_folder(self, path: str) -> None:
        self.at(path).mkdir(parents=True, exist_ok=True)

    def put(self, path: str, chunks: Iterator[bytes]) -> None:
        with self.at(path).open("wb") as f:
            for chunk in chunks:
                f.write(chunk)

    def status(self, path: str) -> dict[str, Any] | None:
        return {} if self.at(path).exists() else None
