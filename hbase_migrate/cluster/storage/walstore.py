"""Find the WAL files under an HBase root, through WebHDFS or in a local folder.

Walked directories (relative to the HBase root, or ``hbase.wal.dir`` when set)::

    WALs/<server>/             live       files of a running region server
    WALs/<server>-splitting/   splitting  files of a dead server, being split
    oldWALs/                   archived   flat archive (the default)
    oldWALs/<server>/          archived   hbase.separate.oldlogdir.by.regionserver=true

Only files that hold region edits are listed (``names.WalFileInfo.is_wal``: no procedure logs,
no master-store WALs, no files without a creation time in their name). A listed ``path`` is
what the WAL reader opens: a local path, or a ``webhdfs://host:port/<hdfs path>`` URL with
the HDFS path verbatim, as HBase prints paths (a file named ``h%2C16020%2C1.17`` keeps its
literal ``%2C``; ``hbase_migrate.wal.source`` opens such URLs without decoding them).

On HDFS a listed length is the NameNode's: for a file still being written, the length its
writer last reported (the header of an HBase WAL, until it is closed). So the WebHDFS store
measures the newest file of each WAL group in each ``WALs/`` folder (the one that may be open)
by what a read returns (``wal.source.source_size``: an OPEN at the last byte the NameNode
records, one byte read), and lists the larger of the two lengths.
"""

from __future__ import annotations

import logging
import os
import posixpath
import re
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple
from urllib.parse import urlsplit

from hbase_migrate.cluster.auth.kerberos import KerberosError, explain, http_auth, login
from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.endpoints import check_http_url
from hbase_migrate.cluster.errors import ClusterError, WebHdfsUnreachableError
from hbase_migrate.errors import WalError
from hbase_migrate.wal.names import parse_wal_path
from hbase_migrate.wal.source import open_source, register_client, source_size

log = logging.getLogger(__name__)

LIVE_DIR = "WALs"
ARCHIVE_DIR = "oldWALs"
SPLITTING_SUFFIX = "-splitting"
# A NameNode's answers meaning "not now" (safe mode, standby, retry): an outage to wait out.
_NOT_SERVING_YET = ("SafeModeException", "StandbyException", "RetriableException")


class WalFileStatus(NamedTuple):
    """One WAL file. ``relpath`` is its path under the HBase root ('/'-separated);
    ``state`` is ``live``, ``splitting`` or ``archived``; ``server`` is ``host,port,startcode``
    from the file name (or its directory); ``timestamp`` the creation time in its name (ms)."""

    path: str
    relpath: str
    name: str
    size: int
    mtime_ms: int
    state: str
    server: str | None
    timestamp: int | None


class WalListing(NamedTuple):
    """One listing of the WAL folders (:meth:`WalStore.listing`)."""

    files: list[WalFileStatus]  # every WAL file once, where it was last seen
    live: list[WalFileStatus]  # the files read in the live folders, archived since or not


class _Entry(NamedTuple):
    name: str
    is_dir: bool
    size: int
    mtime_ms: int


class WalStore(ABC):
    """WAL files under one HBase root; subclasses supply listing and stat."""

    def __init__(self, separate_oldlogdir_by_server: bool = False) -> None:
        self.separate_oldlogdir_by_server = separate_oldlogdir_by_server
        self.answered = False  # the storage answered a call (if with an error) at least once

    # --- what a backend provides ----------------------------------------------------------

    @abstractmethod
    def _list(self, relpath: str) -> list[_Entry] | None:
        """Entries of a directory, None when it does not exist."""

    @abstractmethod
    def _stat(self, relpath: str) -> _Entry | None:
        """A file's entry, None when it does not exist."""

    @abstractmethod
    def to_path(self, relpath: str) -> str:
        """The path or URL the WAL reader opens for ``relpath``."""

    @abstractmethod
    def to_relpath(self, path: str) -> str:
        """``relpath`` of a path or URL (or a relpath, returned as is)."""

    # --- shared logic -------------------------------------------------------------------

    def probe(self) -> None:
        """One cheap call to the storage (the HBase root's status): raises as a listing would
        when the storage does not answer."""
        self._stat("")

    def list_wal_files(self) -> list[WalFileStatus]:
        """Every WAL file in ``WALs/*/`` and ``oldWALs/`` (flat and per server), by path."""
        return self.listing().files

    def listing(self) -> WalListing:
        """:meth:`list_wal_files`, and the files as read in the live folders (a file
        archived while the listing ran is in ``files`` once, archived, and in ``live`` too:
        it was the newest live file of its server when its folder was read)."""
        result: list[WalFileStatus] = []
        for entry in self._list(LIVE_DIR) or []:
            if entry.is_dir:
                folder = f"{LIVE_DIR}/{entry.name}"
                found = self._files_in(folder)
                if found is None and not entry.name.endswith(SPLITTING_SUFFIX):
                    # renamed since WALs/ was listed: its server died and its split began
                    found = self._files_in(folder + SPLITTING_SUFFIX)
                result.extend(found or [])
        result.extend(self._files_in(ARCHIVE_DIR) or [])
        for entry in self._list(ARCHIVE_DIR) or []:
            if entry.is_dir:
                result.extend(self._files_in(f"{ARCHIVE_DIR}/{entry.name}") or [])
        # A file archived between listing WALs/ and oldWALs/ shows up twice: keep the archive.
        live = [f for f in result if f.state == "live"]
        archived = {f.name for f in result if f.state == "archived"}
        result = [f for f in result if f.state == "archived" or f.name not in archived]
        return WalListing(sorted(result, key=lambda s: s.relpath), live)

    def _files_in(self, folder: str) -> list[WalFileStatus] | None:
        """The WAL files in ``folder``; None when there is no such folder."""
        entries = self._list(folder)
        if entries is None:
            return None
        found = []
        for entry in entries:
            if not entry.is_dir:
                status = self._status_of(f"{folder}/{entry.name}", entry)
                if status is not None:
                    found.append(status)
        return found

    def _status_of(self, relpath: str, entry: _Entry) -> WalFileStatus | None:
        info = parse_wal_path(relpath)
        if not info.is_wal or info.state not in ("live", "splitting", "archived"):
            return None
        server = str(info.server) if info.server is not None else None
        return WalFileStatus(self.to_path(relpath), relpath, entry.name, entry.size,
                             entry.mtime_ms, info.state, server, info.timestamp)

    def status(self, path: str) -> WalFileStatus:
        """The current status of one WAL file; FileNotFoundError when it is gone (archived,
        or deleted by the log cleaner); ValueError when the path is no WAL file."""
        relpath = self.to_relpath(path)
        entry = self._stat(relpath)
        if entry is None or entry.is_dir:
            raise FileNotFoundError(2, f"No such WAL file: {path}")
        status = self._status_of(relpath, entry)
        if status is None:
            raise ValueError(f"not a WAL file under WALs/ or oldWALs/: {path}")
        return status

    def archived_path(self, live_path: str) -> str:
        """Where a live WAL is (or will be) once archived: ``oldWALs/<name>``, or
        ``oldWALs/<server>/<name>`` when that exists or the store was built with
        ``separate_oldlogdir_by_server``."""
        relpath = self.to_relpath(live_path)
        info = parse_wal_path(relpath)
        server = info.dir_server or info.server
        flat = f"{ARCHIVE_DIR}/{info.name}"
        if server is None:
            return self.to_path(flat)
        per_server = f"{ARCHIVE_DIR}/{server}/{info.name}"
        if self._stat(flat) is not None:
            return self.to_path(flat)
        if self._stat(per_server) is not None or self.separate_oldlogdir_by_server:
            return self.to_path(per_server)
        return self.to_path(flat)

    def moved_path(self, path: str) -> str | None:
        """Where a file no longer at ``path`` went, if it still exists: a live file to its
        dead server's ``-splitting`` folder, a live or splitting file to the archive."""
        relpath = self.to_relpath(path)
        info = parse_wal_path(relpath)
        candidates = []
        if info.state == "live" and info.dir_server is not None:
            splitting = f"{LIVE_DIR}/{info.dir_server}{SPLITTING_SUFFIX}/{info.name}"
            candidates.append(self.to_path(splitting))
        if info.state in ("live", "splitting"):
            candidates.append(self.archived_path(path))
        for candidate in candidates:
            if self._stat(self.to_relpath(candidate)) is not None:
                return candidate
        return None

    def open(self, path: str, offset: int = 0) -> BinaryIO:
        """A streaming binary reader positioned at ``offset`` (FileNotFoundError if gone)."""
        handle = open_source(self.to_path(self.to_relpath(path)))
        handle.seek(offset)
        return handle


_REREADS = 50  # how often a folder is read again while names move out of it


class LocalWalStore(WalStore):
    """WAL files in a local HBase root folder (the embedded cluster, or a mounted HDFS)."""

    def __init__(self, hbase_root: str | os.PathLike[str],
                 separate_oldlogdir_by_server: bool = False) -> None:
        super().__init__(separate_oldlogdir_by_server)
        self.hbase_root = Path(hbase_root).resolve()

    def _list(self, relpath: str) -> list[_Entry] | None:
        """The folder as it was at one moment, as HDFS lists a folder: a name that moved
        between the folder's read and its stat means the read is done again, not that the
        name is left out (a roll's new file may have appeared since: the stale read holds
        neither)."""
        for attempt in range(_REREADS, -1, -1):
            try:
                scan = list(os.scandir(self.hbase_root / relpath))
            except (FileNotFoundError, NotADirectoryError):
                return None
            entries = []
            for item in scan:
                try:
                    st = item.stat()
                except FileNotFoundError:
                    if attempt:
                        break  # moved between the read and its stat: read the folder again
                    continue  # (a dangling link, not a move: left out)
                entries.append(_Entry(item.name, item.is_dir(), st.st_size,
                                      st.st_mtime_ns // 10**6))
            else:
                return entries
        raise AssertionError("unreachable")

    def _stat(self, relpath: str) -> _Entry | None:
        try:
            st = os.stat(self.hbase_root / relpath)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return _Entry(posixpath.basename(relpath), os.path.isdir(self.hbase_root / relpath),
                      st.st_size, st.st_mtime_ns // 10**6)

    def to_path(self, relpath: str) -> str:
        return str(self.hbase_root / relpath)

    def to_relpath(self, path: str) -> str:
        candidate = Path(path)
        if not candidate.is_absolute():
            return candidate.as_posix()
        try:
            return candidate.resolve().relative_to(self.hbase_root).as_posix()
        except ValueError:
            raise ValueError(f"{path} is not under the HBase root {self.hbase_root}") from None


class WebHdfsWalStore(WalStore):
    """WAL files read through WebHDFS with the ``hdfs`` package's InsecureClient, or its
    KerberosClient (SPNEGO) when ``security`` says Kerberos; an ``https://`` URL is checked
    against ``tls_ca_file`` when given. ``url`` is the NameNode's HTTP address
    (``http://namenode:9870``). The WAL reader opens this store's files with the same
    client (:func:`hbase_migrate.wal.source.register_client`)."""

    def __init__(self, url: str, hbase_root: str = "/hbase", user: str | None = None,
                 separate_oldlogdir_by_server: bool = False, timeout: float = 30.0, *,
                 security: ClusterSecurity | None = None, cluster: str = "") -> None:
        super().__init__(separate_oldlogdir_by_server)
        self.url = check_http_url(url, "WebHDFS URL").rstrip("/")
        self._netloc = urlsplit(self.url).netloc
        self.hbase_root = "/" + hbase_root.strip("/")
        self.security = security if security is not None and security.kerberos else None
        # https checked against the cluster's CA file, secured or not
        self.ca_file = security.tls_ca_file if security is not None and self.url.startswith(
            "https:") else None
        self.cluster = cluster or self.url
        self.client: Any = self._new_client(user, timeout)
        if self.security is not None or self.url.startswith("https:"):
            register_client(self._netloc, lambda: self._new_client(user, timeout))

    def _new_client(self, user: str | None, timeout: float) -> Any:
        from hdfs import InsecureClient
        from requests import Session

        session = Session()
        if self.ca_file:
            session.verify = self.ca_file
            session.trust_env = False  # else REQUESTS_CA_BUNDLE would replace the CA file
        if self.security is None:
            return InsecureClient(self.url, user=user, timeout=timeout, session=session)
        login(self.security, self.cluster, f"WebHDFS {self.url}")
        session.auth = http_auth(self.security, urlsplit(self.url).hostname or "")
        from hdfs import Client

        return Client(self.url, timeout=timeout, session=session)

    def _hdfs_path(self, relpath: str) -> str:
        return posixpath.join(self.hbase_root, relpath) if relpath else self.hbase_root

    def _call(self, method: str, relpath: str, **kwargs: Any) -> Any:
        """Run a client call; None when the path does not exist, ClusterError on others."""
        from hdfs.util import HdfsError
        from requests import RequestException

        hdfs_path = self._hdfs_path(relpath)
        try:
            found = getattr(self.client, method)(hdfs_path, **kwargs)
        except HdfsError as exc:
            self.answered = True  # a NameNode's refusal: it is there
            if getattr(exc, "exception", None) == "FileNotFoundException":
                return None
            if "Authentication failure" in str(exc):  # the hdfs package's words for a 401
                raise self._unauthorized(exc) from exc
            error = (WebHdfsUnreachableError
                     if getattr(exc, "exception", None) in _NOT_SERVING_YET else ClusterError)
            raise error(f"WebHDFS {self.url}, path {hdfs_path}: {exc}",
                        endpoint=self.url) from exc
        except RequestException as exc:
            raise WebHdfsUnreachableError(f"WebHDFS {self.url}: cannot {method} {hdfs_path}: "
                                          f"{exc}", endpoint=self.url) from exc
        self.answered = True
        return found

    def _unauthorized(self, exc: Exception) -> ClusterError:
        if self.security is None:
            return KerberosError(
                f"cluster {self.cluster!r}, WebHDFS {self.url}: the NameNode requires SPNEGO "
                "(Kerberos) authentication and this client has no credentials; set auth = "
                "\"kerberos\" with principal and keytab for the cluster", endpoint=self.url)
        return explain(exc, self.security, self.cluster, f"WebHDFS {self.url}",
                       self.security.http_principal)

    @staticmethod
    def _entry(name: str, status: dict[str, Any]) -> _Entry:
        return _Entry(name, status["type"] == "DIRECTORY", int(status["length"]),
                      int(status["modificationTime"]))

    def _files_in(self, folder: str) -> list[WalFileStatus] | None:
        found = super()._files_in(folder)
        if found is None or not folder.startswith(f"{LIVE_DIR}/"):
            return found  # archived files are closed: the NameNode knows their length
        newest: dict[str, WalFileStatus] = {}
        for f in found:  # one WAL group: the same name but for the file number
            group = re.sub(r"\.\d+", ".N", f.name)
            if group not in newest or (f.timestamp or 0) > (newest[group].timestamp or 0):
                newest[group] = f
        measured = {f.path: self._visible(f) for f in newest.values()}
        return [measured.get(f.path, f) for f in found]

    @staticmethod
    def _visible(f: WalFileStatus) -> WalFileStatus:
        """``f`` with the length a reader sees now, when larger than the listed one."""
        try:
            size = source_size(f.path)
        except (OSError, WalError) as exc:  # moved or unreadable now: the next listing asks
            log.debug("cannot measure %s: %s", f.path, exc)
            return f
        return f._replace(size=max(size, f.size))

    def _list(self, relpath: str) -> list[_Entry] | None:
        listing = self._call("list", relpath, status=True)
        if listing is None:
            return None
        return [self._entry(name, status) for name, status in listing]

    def _stat(self, relpath: str) -> _Entry | None:
        status = self._call("status", relpath)
        return None if status is None else self._entry(posixpath.basename(relpath), status)

    def to_path(self, relpath: str) -> str:
        return f"webhdfs://{self._netloc}{self._hdfs_path(relpath)}"

    def to_relpath(self, path: str) -> str:
        if "://" in path:
            path = urlsplit(path).path  # verbatim: WAL names hold a literal %2C
        if not path.startswith("/"):
            return path
        root = self.hbase_root.rstrip("/") + "/"
        if not path.startswith(root):
            raise ValueError(f"{path} is not under the HBase root {self.hbase_root}")
        return path[len(root) :]
