"""Files under a cluster's HBase root over WebHDFS: status, streamed reads and writes,
checksums, renames; what a snapshot export needs of both clusters, through the same client
as the WAL store's (Kerberos/SPNEGO and TLS as the cluster's security says).

Each call names the cluster's role, the WebHDFS URL and the path in its errors. A missing
path is None (``status``) or :class:`FileNotFoundError` (``read``); a NameNode that does not
answer is a :class:`WebHdfsUnreachableError` (an outage), any other refusal a
:class:`ClusterError`.
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote, urlsplit

from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.endpoints import check_http_url
from hbase_migrate.cluster.errors import ClusterError, WebHdfsUnreachableError
from hbase_migrate.cluster.storage.walstore import WebHdfsWalStore
from hbase_migrate.errors import ConfigError
from hbase_migrate.wal.source import hdfs_user

CHUNK = 1 << 20  # bytes per read from a stream
UNDER_CONSTRUCTION_WAIT = 30.0  # seconds a file written may take to be closed on the NameNode


class HdfsRoot:
    """An HBase root (``root``, an HDFS path) on the NameNode at ``url``."""

    def __init__(self, url: str, root: str, role: str, timeout: float = 60.0, *,
                 security: ClusterSecurity | None = None, cluster: str = "",
                 namenode: str | None = None) -> None:
        self.url = check_http_url(url, f"{role} WebHDFS URL").rstrip("/")
        self.root = "/" + root.strip("/")
        self.role = role
        if namenode and security is not None and security.kerberos:
            raise ConfigError(
                f"{role} cluster {cluster!r}: namenode = {namenode!r} on a Kerberos-secured "
                "cluster: reading the DataNodes directly speaks Hadoop RPC without SASL, "
                "which such a NameNode refuses; leave namenode unset (files are then read "
                "over WebHDFS, with SPNEGO)")
        self.namenode = namenode
        user = hdfs_user()
        # the WAL store's client: SPNEGO when the cluster's security says Kerberos
        self.client: Any = WebHdfsWalStore(self.url, self.root, user, timeout=timeout,
                                           security=security, cluster=cluster).client

    def path(self, relpath: str) -> str:
        return posixpath.join(self.root, relpath) if relpath else self.root

    def url_of(self, relpath: str) -> str:
        """``relpath`` as a ``webhdfs://`` URL, opened with this root's client (its security)
        by the readers (:func:`hbase_migrate.wal.source.open_source`)."""
        return f"webhdfs://{urlsplit(self.url).netloc}{self.path(relpath)}"

    def read_url(self, relpath: str) -> str:
        """Where the readers read ``relpath`` from: an ``hdfs://`` URL (the DataNodes,
        :mod:`hbase_migrate.hdfs.datanode`) when the cluster names its NameNode's
        RPC address, else :meth:`url_of`'s."""
        if self.namenode:
            return f"hdfs://{self.namenode}{self.path(relpath)}"
        return self.url_of(relpath)

    def reads(self) -> str:
        """How the readers read this root's files (:meth:`read_url`), for a step's metrics."""
        if self.namenode:
            return f"from the DataNodes (NameNode {self.namenode}, path {self.root})"
        return f"over WebHDFS ({self.where('')})"

    def where(self, relpath: str) -> str:
        """``<role> WebHDFS <url>, path <hdfs path>``, for messages."""
        return f"{self.role} WebHDFS {self.url}, path {self.path(relpath)}"

    def _call(self, method: str, relpath: str, *args: Any, **kwargs: Any) -> Any:
        from hdfs.util import HdfsError
        from requests import RequestException

        try:
            return getattr(self.client, method)(self.path(relpath), *args, **kwargs)
        except HdfsError as exc:
            if getattr(exc, "exception", None) == "FileNotFoundException":
                raise FileNotFoundError(self.where(relpath)) from None
            raise ClusterError(f"{self.where(relpath)}: {method} refused: {exc}",
                               endpoint=self.url) from None
        except RequestException as exc:
            raise WebHdfsUnreachableError(f"{self.where(relpath)}: cannot {method}: {exc}",
                                          endpoint=self.url) from None

    def status(self, relpath: str) -> dict[str, Any] | None:
        """The FileStatus of ``relpath`` (``length``, ``blockSize``...), None when absent."""
        return self._call("status", relpath, strict=False)  # type: ignore[no-any-return]

    def may_write(self, relpath: str) -> bool | None:
        """Whether this client's user may write into ``relpath`` as the NameNode judges it
        (WebHDFS ``CHECKACCESS``, Hadoop 2.6+: superuser, groups and ACLs included; nothing
        is written); None when the NameNode does not know the operation."""
        from requests import RequestException

        url = f"{self.client.url.rstrip('/')}/webhdfs/v1{quote(self.path(relpath), '/= ')}"
        try:
            answer = self.client._request(method="GET", url=url,
                                          params={"op": "CHECKACCESS", "fsaction": "-w-"})
        except RequestException as exc:
            raise WebHdfsUnreachableError(f"{self.where(relpath)}: cannot CHECKACCESS: {exc}",
                                          endpoint=self.url) from None
        if answer.ok:
            return True
        try:
            remote = answer.json().get("RemoteException") or {}
        except ValueError:
            remote = {}
        kind, message = remote.get("exception"), remote.get("message") or answer.reason
        if kind == "AccessControlException":
            return False
        if kind == "FileNotFoundException":
            raise FileNotFoundError(self.where(relpath))
        if kind in ("IllegalArgumentException", "UnsupportedOperationException"):
            return None  # an operation this NameNode (or an HttpFS) does not serve
        raise ClusterError(f"{self.where(relpath)}: CHECKACCESS refused: HTTP "
                           f"{answer.status_code} {kind or ''} {message}".rstrip(),
                           endpoint=self.url)

    def listing(self, relpath: str) -> list[str]:
        """The names in folder ``relpath`` (empty when it does not exist)."""
        try:
            return list(self._call("list", relpath))
        except FileNotFoundError:
            return []

    def checksum(self, relpath: str) -> dict[str, Any]:
        """HDFS's checksum of the file (``algorithm``, ``bytes``, ``length``). A file the
        NameNode still holds under construction (seen on a loaded machine right after the
        export wrote it: "Fail to get checksum, since file ... is under construction") is
        asked again for up to :data:`UNDER_CONSTRUCTION_WAIT` seconds."""
        deadline = time.monotonic() + UNDER_CONSTRUCTION_WAIT
        while True:
            try:
                return self._call("checksum", relpath)  # type: ignore[no-any-return]
            except ClusterError as exc:
                if "under construction" not in str(exc) or time.monotonic() > deadline:
                    raise
            time.sleep(0.5)

    @contextmanager
    def read(self, relpath: str) -> Iterator[Iterator[bytes]]:
        """The file's bytes in chunks of about :data:`CHUNK`, streamed."""
        with self._call("read", relpath, chunk_size=CHUNK) as chunks:
            yield chunks

    def write(self, relpath: str, chunks: Iterable[bytes], blocksize: int | None = None) -> None:
        """Create (or overwrite) ``relpath`` from ``chunks``, streamed (chunked upload)."""
        self._call("write", relpath, data=iter(chunks), overwrite=True, blocksize=blocksize)

    def makedirs(self, relpath: str) -> None:
        self._call("makedirs", relpath)

    def rename(self, relpath: str, to: str) -> None:
        """Move ``relpath`` to ``to`` (both under the root); an error when it did not move."""
        self._call("rename", relpath, self.path(to))
        if self.status(to) is None:
            raise ClusterError(f"{self.where(relpath)}: rename to {self.path(to)} did not "
                               "happen (does the destination's folder exist?)",
                               endpoint=self.url)

    def delete(self, relpath: str, recursive: bool = False) -> bool:
        """Delete ``relpath``; False when it did not exist."""
        return bool(self._call("delete", relpath, recursive=recursive))
