"""Where WAL bytes come from: local paths and ``webhdfs://host:port/path`` URLs.

WebHDFS files are read with the ``hdfs`` package's ``InsecureClient`` (user from
``HADOOP_USER_NAME``, else the current user) as a streaming, seekable file object: one OPEN
request per contiguous read, a new one after a seek away from the stream's position. A
missing file raises ``FileNotFoundError`` for both kinds, so callers can detect a WAL
moved to ``oldWALs``.
"""

from __future__ import annotations

import getpass
import io
import os
from contextlib import AbstractContextManager
from typing import IO, Any, BinaryIO
from urllib.parse import urlsplit

WEBHDFS_SCHEME = "webhdfs"


def _split(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    if parts.scheme != WEBHDFS_SCHEME or not parts.hostname:
        raise ValueError(f"not a webhdfs://host:port/path URL: {url}")
    port = parts.port or 9870
    # the path is taken verbatim: HBase WAL names contain a literal "%2C"
    return f"http://{parts.hostname}:{port}", parts.path or "/"


def _client(base_url: str) -> Any:
    from hdfs import InsecureClient

    user = os.environ.get("HADOOP_USER_NAME") or getpass.getuser()
    return InsecureClient(base_url, user=user)


def _not_found(exc: Exception, url: str) -> Exception:
    """Map the hdfs package's error for a missing path to FileNotFoundError."""
    text = str(exc).lower()
    missing = getattr(exc, "exception", None) == "FileNotFoundException"
    if missing or "does not exist" in text or "not found" in text:
        return FileNotFoundError(2, f"No such file: {url}")
    return exc


class WebHdfsFile(io.RawIOBase):
    """A read-only, seekable file over WebHDFS OPEN requests (streamed, not loaded).

    Opening sends one OPEN from offset 0 and takes the size from its ``Content-Length`` (a
    GETFILESTATUS only when the answer has none, or the OPEN fails): a whole small file costs
    one OPEN. A seek only moves the position; the next read opens a new stream there when
    the current one is elsewhere."""

    def __init__(self, url: str) -> None:
        super().__init__()
        from hdfs.util import HdfsError

        self._error = HdfsError
        self.name = url
        base, self._path = _split(url)
        self._client = _client(base)
        self._pos = 0
        self._context: AbstractContextManager[IO[bytes]] | None = None
        self._stream: IO[bytes] | None = None
        self._stream_pos = 0
        try:
            self._open_stream(0)
        except FileNotFoundError:
            self._status()  # a directory, or really missing: say which
            raise
        length = getattr(self._stream, "headers", {}).get("Content-Length")
        self.size = int(length) if length is not None else int(self._status()["length"])

    def _status(self) -> dict[str, Any]:
        try:
            status: dict[str, Any] = self._client.status(self._path)
        except self._error as exc:
            raise _not_found(exc, self.name) from exc
        if status.get("type") == "DIRECTORY":
            raise IsADirectoryError(21, f"Is a directory: {self.name}")
        return status

    def _open_stream(self, offset: int) -> None:
        self._drop_stream()
        try:
            self._context = self._client.read(self._path, offset=offset)
            self._stream = self._context.__enter__()
        except self._error as exc:
            self._context = None
            raise _not_found(exc, self.name) from exc
        self._stream_pos = offset

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_CUR:
            offset += self._pos
        elif whence == io.SEEK_END:
            offset += self.size
        if offset < 0:
            raise ValueError(f"negative seek position {offset}")
        self._pos = offset
        return self._pos

    def readinto(self, buffer: Any) -> int:
        """Fill ``buffer`` as far as the file goes (one stream, several reads of it)."""
        view = memoryview(buffer).cast("B")
        want = min(len(view), self.size - self._pos)
        if want <= 0:
            return 0
        if self._stream is None or self._stream_pos != self._pos:
            self._open_stream(self._pos)
        assert self._stream is not None
        got = 0
        while got < want:
            data = self._stream.read(want - got)
            if not data:
                break
            view[got : got + len(data)] = data
            got += len(data)
        self._pos += got
        self._stream_pos = self._pos
        return got

    def _drop_stream(self) -> None:
        if self._context is not None:
            self._context.__exit__(None, None, None)
        self._context = None
        self._stream = None

    def close(self) -> None:
        self._drop_stream()
        super().close()


def open_source(path_or_url: str) -> BinaryIO:
    """Open a local path or a ``webhdfs://`` URL for streaming binary reads."""
    if path_or_url.startswith(f"{WEBHDFS_SCHEME}://"):
        return io.BufferedReader(WebHdfsFile(path_or_url), buffer_size=1 << 20)
    return open(path_or_url, "rb")


def source_size(path_or_url: str) -> int:
    """The current length of a local file or a WebHDFS file, in bytes."""
    if path_or_url.startswith(f"{WEBHDFS_SCHEME}://"):
        from hdfs.util import HdfsError

        base, path = _split(path_or_url)
        try:
            return int(_client(base).status(path)["length"])
        except HdfsError as exc:
            raise _not_found(exc, path_or_url) from exc
    return os.path.getsize(path_or_url)
