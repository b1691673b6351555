"""Where WAL bytes come from: local paths and ``webhdfs://host:port/path`` URLs.

WebHDFS files are read with the ``hdfs`` package's ``InsecureClient`` (user from
``HADOOP_USER_NAME``, else the current user) as a streaming, seekable file object: one OPEN
request per contiguous read, a new one after a seek away from the stream's position. A
missing file raises ``FileNotFoundError`` for both kinds, so callers can detect a WAL
moved to ``oldWALs``; every other failure is a :class:`WalSourceError` naming the URL and
the byte offset.

Files still being written (a region server's open WAL) need care on HDFS. The NameNode
records the length the writer last reported, not what it wrote: for an HBase WAL that is the
header until the file is closed or a block completes (``hflush`` does not update it), and the
NameNode refuses an OPEN at or past that length ("Offset=... out of the range"). A DataNode
serves every byte the writer flushed (the *visible* length). So opening a
:class:`WebHdfsFile` asks GETFILESTATUS for the NameNode's length, then sends one OPEN at
``PROBE_TAIL`` bytes before it (at 0 in a shorter file): the size is that OPEN's offset plus
its ``Content-Length`` (what a read returns, not what a listing says), and no byte before the
file's tail is sent for it. Reads elsewhere in the file go straight to the DataNode the
NameNode redirected that OPEN to, at their own offset: a resume far past the NameNode's
length reads only the new bytes. Where there is no DataNode address (a gateway that streams
itself), a refused OPEN is served by reading from the file's start and skipping forward.
"""

from __future__ import annotations

import getpass
import io
import logging
import os
import time
from collections.abc import Callable
from typing import IO, Any, BinaryIO
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from hbase_migrate.errors import ConfigError, WalSourceError

log = logging.getLogger(__name__)

WEBHDFS_SCHEME = "webhdfs"
_SKIP_CHUNK = 1 << 20
# An OPEN whose connection is closed with no answer is sent this many times, the waits
# between doubling from OPEN_BACKOFF seconds, before the file fails (when the NameNode
# still answers: a server that takes connections and drops them is no outage to wait out).
OPEN_ATTEMPTS = 4
OPEN_BACKOFF = 0.25
# Opening a file sends its first OPEN this many bytes before the end the NameNode records:
# the tail an HFile reader reads first (its trailer, ``hfile.reader``) comes from that
# stream, and no more than this is sent unread to learn the size of a file read elsewhere.
PROBE_TAIL = 4096


class _HungUp(Exception):
    """An OPEN's connection closed with no HTTP answer; ``host``: the server that did it."""

    def __init__(self, host: str, reason: str) -> None:
        super().__init__(reason)
        self.host = host


def _hung_up(exc: Exception) -> _HungUp | None:
    """``exc`` as a server that took the connection and closed it unanswered (not one
    refused, timed out or unresolvable)."""
    from requests import ConnectionError as RequestsConnectionError
    from urllib3.exceptions import ProtocolError

    if not isinstance(exc, RequestsConnectionError) or not exc.args \
            or not isinstance(exc.args[0], ProtocolError):
        return None
    request = getattr(exc, "request", None)
    url = getattr(request, "url", None) or ""
    return _HungUp(urlsplit(url).netloc or "(unknown)", str(exc.args[0]))


def _split(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    if parts.scheme != WEBHDFS_SCHEME or not parts.hostname:
        raise ConfigError(f"{url}: not a webhdfs://host:port/path URL")
    port = parts.port or 9870
    # the path is taken verbatim: HBase WAL names contain a literal "%2C"
    return f"http://{parts.hostname}:{port}", parts.path or "/"


# Clients of secured WebHDFS endpoints by "host:port" (Kerberos, HTTPS), registered by the
# cluster layer that knows a cluster's security; every other endpoint gets an InsecureClient.
_CLIENTS: dict[str, Callable[[], Any]] = {}


def register_client(netloc: str, factory: Callable[[], Any]) -> None:
    """Open ``webhdfs://netloc/...`` URLs with ``factory()``'s ``hdfs`` client."""
    _CLIENTS[netloc] = factory


def hdfs_user() -> str:
    """The user HDFS is told where it takes the client's word (WebHDFS's ``user.name``,
    Hadoop RPC's SIMPLE authentication): ``HADOOP_USER_NAME``, else the login."""
    return os.environ.get("HADOOP_USER_NAME") or getpass.getuser()


def _client(base_url: str) -> Any:
    from hdfs import InsecureClient

    factory = _CLIENTS.get(urlsplit(base_url).netloc)
    if factory is not None:
        return factory()
    return InsecureClient(base_url, user=hdfs_user())


def _remote(exc: Exception) -> tuple[str, str]:
    """(Java exception name, message) of an ``HdfsError`` or a RemoteException answer."""
    return str(getattr(exc, "exception", "") or ""), str(getattr(exc, "message", exc))


def _is_missing(exc: Exception) -> bool:
    name, text = _remote(exc)
    text = text.lower()
    return name == "FileNotFoundException" or "does not exist" in text or "not found" in text


def _past_recorded_length(exc: Exception) -> bool:
    """The NameNode's refusal of an OPEN at or past the length it records for the file."""
    return "out of the range" in _remote(exc)[1]


def _with_offset(url: str, offset: int) -> str:
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if k.lower() not in ("offset", "length")]
    query.append(("offset", str(offset)))
    return urlunsplit(parts._replace(query=urlencode(query)))


class RemoteFile(io.RawIOBase):
    """A read-only file of a known ``size`` on a remote store: a seek only moves the
    position (``_pos``); ``readinto`` reads from there."""

    size: int
    _pos: int

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


class WebHdfsFile(RemoteFile):
    """A read-only, seekable file over WebHDFS OPEN requests (streamed, not loaded).

    Opening sends GETFILESTATUS (a missing file, a directory) and one OPEN ``tail`` bytes
    before the length it gives (from 0 in a shorter file); the size is that OPEN's offset
    plus its ``Content-Length`` (the visible length, also of a file still being written; the
    GETFILESTATUS length when the answer has none), and its stream serves a first read at
    its offset. A seek only moves the position; the next read opens a new stream there when
    the current one is elsewhere, at the DataNode that served the first OPEN."""

    def __init__(self, url: str, on_read: Callable[[int], None] | None = None, *,
                 tail: int = PROBE_TAIL) -> None:
        super().__init__()
        self.name = url
        self._on_read = on_read  # told the bytes of each read (a throttle's meter)
        self._base, self._path = _split(url)
        self._client = _client(self._base)
        self._pos = 0
        self._response: Any = None
        self._stream: IO[bytes] | None = None
        self._stream_pos = 0
        self._response_at = 0  # the offset the current response's body starts at
        self._datanode: str | None = None  # the DataNode URL of the first OPEN
        recorded = int(self._status()["length"])
        start = max(0, recorded - max(1, tail))
        self._open_stream(start)
        length = self._response.headers.get("Content-Length") if self._response else None
        self.size = self._response_at + int(length) if length is not None else recorded

    def _status(self) -> dict[str, Any]:
        from hdfs.util import HdfsError
        from requests import RequestException

        try:
            status: dict[str, Any] = self._client.status(self._path)
        except HdfsError as exc:
            if _is_missing(exc):
                raise FileNotFoundError(2, f"No such file: {self.name}") from exc
            raise self._failed("GETFILESTATUS", 0, _remote(exc)[1]) from exc
        except RequestException as exc:
            raise self._failed("GETFILESTATUS", 0, str(exc), unreachable=True) from exc
        if status.get("type") == "DIRECTORY":
            raise IsADirectoryError(21, f"Is a directory: {self.name}")
        return status

    def _failed(self, what: str, offset: int, reason: str, *, unreachable: bool = False
                ) -> WalSourceError:
        """``unreachable``: no answer came (refused, reset, timed out), not a refusal."""
        return WalSourceError(self.name, f"WebHDFS {what} at byte offset {offset} failed: "
                              f"{reason}", unreachable=unreachable, endpoint=self._base)

    # --- streams ------------------------------------------------------------------------

    def _open_stream(self, offset: int) -> None:
        """A stream of the file's bytes from ``offset``; a server that closes the OPEN's
        connection unanswered is asked ``OPEN_ATTEMPTS`` times, then, if the NameNode
        still answers, the file fails in one line naming that server."""
        wait = OPEN_BACKOFF
        for attempt in range(1, OPEN_ATTEMPTS + 1):
            try:
                self._open_once(offset)
                return
            except _HungUp as hung:
                if attempt < OPEN_ATTEMPTS:
                    log.info("%s: WebHDFS OPEN at byte offset %d: %s closed the connection "
                             "unanswered (%s); asking again", self.name, offset, hung.host,
                             hung)
                    time.sleep(wait)
                    wait *= 2
                    continue
                self._status()  # the NameNode not answering either: an outage, said so
                raise self._failed(
                    "OPEN", offset, f"{hung.host} closed the connection without an answer "
                    f"{OPEN_ATTEMPTS} times in a row ({hung}) while the NameNode at "
                    f"{urlsplit(self._base).netloc} answers; expected an HTTP answer with "
                    "the file's bytes (a DataNode whose web server cannot serve reads: see "
                    "its log)") from None

    def _open_once(self, offset: int) -> None:
        from hdfs.util import HdfsError
        from requests import RequestException

        self._drop_stream()
        try:
            if self._datanode is not None and offset > 0:
                self._response = self._from_datanode(offset)
            else:
                self._response = self._from_namenode(offset)
        except HdfsError as exc:
            if _is_missing(exc):
                raise FileNotFoundError(2, f"No such file: {self.name}") from exc
            if offset > 0 and _past_recorded_length(exc):
                self._skip_to(offset)  # no DataNode to ask: read from the start, skip
                return
            raise self._failed("OPEN", offset, _remote(exc)[1]) from exc
        except RequestException as exc:
            hung = _hung_up(exc)
            if hung is not None:
                raise hung from exc
            raise self._failed("OPEN", offset, str(exc), unreachable=True) from exc
        self._stream = self._response.raw
        self._stream_pos = self._response_at = offset

    def _from_namenode(self, offset: int) -> Any:
        from hdfs.util import HdfsError

        try:
            response = self._client._open(self._path, offset=offset)
        except HdfsError as exc:
            if "%" not in self._path or not _is_missing(exc):
                raise
            response = self._from_older_datanode(offset, exc)
        if response.history and self._datanode is None:
            self._datanode = response.url  # redirected: where this file's bytes are served
        return response

    def _from_older_datanode(self, offset: int, missing: Exception) -> Any:
        """The OPEN again for a DataNode that decodes the path of the NameNode's redirect
        twice (Hadoop 2.7's, measured; 2.10's decodes once): every HBase WAL name holds
        ``%2C``, which such a DataNode looks up as ``,`` and answers "does not exist". The
        redirect is followed here with its ``%`` escaped once more; ``missing`` is raised
        where that does not find the file either (or the NameNode did not redirect)."""
        from hdfs.client import _to_error

        client = self._client
        url = f"{client.url.rstrip('/')}/webhdfs/v1{quote(self._path, '/= ')}"
        asked = client._request(method="GET", url=url, params={"op": "OPEN", "offset": offset},
                                allow_redirects=False)
        location = asked.headers.get("Location") if asked.is_redirect else None
        asked.close()
        if not location:
            raise missing
        parts = urlsplit(location)
        response = client._session.get(
            urlunsplit(parts._replace(path=parts.path.replace("%", "%25"))), stream=True,
            timeout=client._timeout)
        if not response.ok:
            error = _to_error(response)
            response.close()
            raise (missing if _is_missing(error) else error)
        response.history = [asked]  # as a followed redirect: later reads go to its URL
        return response

    def _from_datanode(self, offset: int) -> Any:
        from hdfs.client import _to_error

        assert self._datanode is not None
        response = self._client._session.get(_with_offset(self._datanode, offset),
                                              stream=True, timeout=self._client._timeout)
        if not response.ok:
            error = _to_error(response)
            response.close()
            name, message = _remote(error)
            if name == "EOFException":  # HDFS: "Cannot seek after EOF"
                message = (f"{message}: the file holds fewer than {offset} bytes now "
                           "(it shrank since it was measured)")
            raise self._failed("OPEN (DataNode)", offset, message)
        return response

    def _skip_to(self, offset: int) -> None:
        self._open_stream(0)
        assert self._stream is not None
        while self._stream_pos < offset:
            data = self._stream.read(min(_SKIP_CHUNK, offset - self._stream_pos))
            if not data:
                raise self._failed("OPEN", offset, f"the file ends at byte {self._stream_pos}")
            self._stream_pos += len(data)

    # --- io.RawIOBase -------------------------------------------------------------------

    def readinto(self, buffer: Any) -> int:
        """Fill ``buffer`` as far as the file goes (one stream, several reads of it)."""
        from requests import RequestException
        from urllib3.exceptions import HTTPError

        view = memoryview(buffer).cast("B")
        want = min(len(view), self.size - self._pos)
        if want <= 0:
            return 0
        if self._stream is None or self._stream_pos != self._pos:
            self._open_stream(self._pos)
        assert self._stream is not None
        got = 0
        try:
            while got < want:
                data = self._stream.read(want - got)
                if not data:
                    break
                view[got : got + len(data)] = data
                got += len(data)
        except (HTTPError, RequestException, OSError) as exc:
            self._drop_stream()
            raise self._failed("read", self._pos + got, str(exc), unreachable=True) from exc
        self._pos += got
        self._stream_pos = self._pos
        if self._on_read is not None:
            self._on_read(got)
        return got

    def _drop_stream(self) -> None:
        if self._response is not None:
            self._response.close()
        self._response = None
        self._stream = None

    def close(self) -> None:
        self._drop_stream()
        super().close()


def open_source(path_or_url: str, on_read: Callable[[int], None] | None = None) -> BinaryIO:
    """Open a local path or a ``webhdfs://`` URL for streaming binary reads (``on_read``: told
    the bytes each request to WebHDFS read)."""
    if path_or_url.startswith(f"{WEBHDFS_SCHEME}://"):
        return io.BufferedReader(WebHdfsFile(path_or_url, on_read), buffer_size=1 << 20)
    return open(path_or_url, "rb")


def source_size(path_or_url: str) -> int:
    """The bytes a reader can read now. For a WebHDFS file still being written that is what
    its DataNode serves (an OPEN at the last byte the NameNode records, its body not read),
    not the NameNode's recorded length, which a listing shows."""
    if path_or_url.startswith(f"{WEBHDFS_SCHEME}://"):
        handle = WebHdfsFile(path_or_url, tail=1)
        try:
            return handle.size
        finally:
            handle.close()
    return os.path.getsize(path_or_url)


def walk_files(path_or_url: str) -> list[str] | None:
    """Every file under the folder ``path_or_url`` (a local path or a ``webhdfs://`` URL),
    walked recursively in name order, as paths or URLs of the same kind; None when it names
    a file (or nothing: opening it then says so)."""
    if not path_or_url.startswith(f"{WEBHDFS_SCHEME}://"):
        if not os.path.isdir(path_or_url):
            return None
        found = []
        for folder, dirs, names in os.walk(path_or_url):
            dirs.sort()
            found += [os.path.join(folder, name) for name in sorted(names)]
        return found
    from hdfs.util import HdfsError

    base_url, path = _split(path_or_url)
    parts = urlsplit(path_or_url)
    client = _client(base_url)
    try:
        if client.status(path, strict=False) in (None, {}) or \
                client.status(path)["type"] != "DIRECTORY":
            return None
        return [urlunsplit((parts.scheme, parts.netloc, _join(folder, name), "", ""))
                for folder, names in _walk(client, path) for name in names]
    except HdfsError as exc:
        name, text = _remote(exc)
        raise WalSourceError(path_or_url, f"cannot list the folder ({name or 'error'}: "
                             f"{text})") from None
    except OSError as exc:
        raise WalSourceError(path_or_url, f"WebHDFS at {base_url} does not answer ({exc})",
                             unreachable=True, endpoint=base_url) from None


def _walk(client: Any, path: str) -> list[tuple[str, list[str]]]:
    """(folder, file names) of ``path`` and every folder below it, depth first, in name
    order."""
    listed = sorted(client.list(path, status=True))
    found = [(path, [name for name, st in listed if st["type"] != "DIRECTORY"])]
    for name, st in listed:
        if st["type"] == "DIRECTORY":
            found += _walk(client, _join(path, name))
    return found


def _join(folder: str, name: str) -> str:
    return f"{folder.rstrip('/')}/{name}"
