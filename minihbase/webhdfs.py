"""A read-only WebHDFS endpoint over the embedded cluster's HBase root directory.

It speaks the subset of Hadoop's WebHDFS REST API that the ``hdfs`` package (and Airflow's
WebHDFS hook, built on it) use to find and read WAL files::

    GET /webhdfs/v1/<path>?op=LISTSTATUS | GETFILESTATUS | GETCONTENTSUMMARY | GETHOMEDIRECTORY
    GET /webhdfs/v1/<path>?op=OPEN[&offset=N][&length=N][&noredirect=true]

``root_dir`` appears as the HDFS directory ``hbase_root`` (default ``/hbase``); its ancestors
(``/``) are directories holding it. As on a real cluster, OPEN at the "NameNode" answers 307
with a "DataNode" URL (the same server, marked by ``namenoderpcaddress``) that streams the
bytes. Files under construction (``leases``: the region servers' open WALs) behave as on
HDFS: the NameNode's length (listings, GETFILESTATUS) is what the writer last reported, and
it refuses an OPEN at or past it ("Offset=... out of the range"), while the DataNode serves
every byte written; past those, "Cannot seek after EOF". A test can make a file's blocks
unavailable (``missing_blocks``): its DataNode reads then fail as HDFS's do. JSON shapes and
errors are Hadoop's: ``{"RemoteException": {"exception", "javaClassName", "message"}}`` with 404 for
FileNotFoundException, 400 for IllegalArgumentException, 403 for other IOExceptions and
AccessControlException (every write operation: PUT, POST and DELETE are refused).
``user.name`` is accepted and not checked.
"""

from __future__ import annotations

import getpass
import json
import logging
import os
import posixpath
import stat
import threading
import time
from collections import Counter
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from minihbase.httpserve import BackgroundHttpServer
from minihbase.wal_files import BLOCK_SIZE, Leases

log = logging.getLogger(__name__)

PREFIX = "/webhdfs/v1"
ROOT_INODE_ID = 16385  # HDFS's INodeId.ROOT_INODE_ID
CHUNK = 64 * 1024
READ_OPS = ("LISTSTATUS", "GETFILESTATUS", "OPEN", "GETCONTENTSUMMARY", "GETHOMEDIRECTORY")

_JAVA_CLASSES = {
    "FileNotFoundException": "java.io.FileNotFoundException",
    "IllegalArgumentException": "java.lang.IllegalArgumentException",
    "EOFException": "java.io.EOFException",
    "AccessControlException": "org.apache.hadoop.security.AccessControlException",
    "BlockMissingException": "org.apache.hadoop.hdfs.BlockMissingException",
    "IOException": "java.io.IOException",
}
_STATUS = {"FileNotFoundException": 404, "IllegalArgumentException": 400}


class RemoteError(Exception):
    """An error answered as Hadoop's RemoteException JSON."""

    def __init__(self, exception: str, message: str) -> None:
        super().__init__(message)
        self.exception = exception
        self.message = message

    @property
    def status(self) -> int:
        return _STATUS.get(self.exception, 403)  # other IOExceptions: FORBIDDEN, as Hadoop

    def body(self) -> dict[str, Any]:
        return {"RemoteException": {"exception": self.exception,
                                    "javaClassName": _JAVA_CLASSES[self.exception],
                                    "message": self.message}}


def _ms(ns: int) -> int:
    return ns // 1_000_000


class WebHdfsServer:
    """Serves ``root_dir`` read-only as ``hbase_root`` over WebHDFS; ``start()``/``stop()``
    or a with block. ``url`` is ``http://host:port``, what ``hdfs.InsecureClient`` takes."""

    def __init__(self, root_dir: str | os.PathLike[str], host: str = "127.0.0.1",
                 port: int = 0, hbase_root: str = "/hbase", owner: str | None = None,
                 group: str = "supergroup", replication: int = 1,
                 leases: Leases | None = None) -> None:
        self.root_dir = Path(root_dir).resolve()
        self.leases = leases
        self.host = host
        self.requested_port = port
        self.hbase_root = posixpath.normpath("/" + hbase_root.strip("/"))
        self.owner = owner or _current_user()
        self.group = group
        self.replication = replication
        self.requests: Counter[str] = Counter()  # GET requests served, by op
        self.bytes_sent = 0  # file bytes written to OPEN streams
        self.missing_blocks: set[str] = set()  # HDFS paths whose DataNode reads fail (a fault)
        self.latency = 0.0  # seconds each request waits before it is served (a slow NameNode)
        self._lock = threading.Lock()
        self._server: BackgroundHttpServer | None = None

    def count(self, op: str) -> None:
        with self._lock:
            self.requests[op] += 1

    def sent(self, count: int) -> None:
        with self._lock:
            self.bytes_sent += count

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("WebHDFS server is not started")
        return self._server.port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> Self:
        handler = type("Handler", (_Handler,), {"webhdfs": self})
        self._server = BackgroundHttpServer(self.host, self.requested_port, handler, "webhdfs")
        log.info("WebHDFS serves %s as %s on %s", self.root_dir, self.hbase_root, self.url)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # --- the namespace ------------------------------------------------------------------

    def local_path(self, hdfs_path: str) -> Path | None:
        """The local file behind an HDFS path, None outside ``hbase_root``."""
        if hdfs_path == self.hbase_root:
            return self.root_dir
        if hdfs_path.startswith(self.hbase_root.rstrip("/") + "/"):
            return self.root_dir / hdfs_path[len(self.hbase_root) + 1 :]
        return None

    def synthetic_child(self, hdfs_path: str) -> str | None:
        """For an ancestor of ``hbase_root`` (``/`` for ``/hbase``), its one child's name."""
        prefix = hdfs_path.rstrip("/") + "/"
        if hdfs_path != self.hbase_root and self.hbase_root.startswith(prefix):
            return self.hbase_root[len(prefix) :].split("/")[0]
        return None

    def file_status(self, hdfs_path: str, suffix: str = "") -> dict[str, Any]:
        """Hadoop's FileStatus JSON object for ``hdfs_path``; ``suffix`` is ``pathSuffix``."""
        child = self.synthetic_child(hdfs_path)
        local = self.local_path(hdfs_path)
        try:
            st = os.stat(self.root_dir if child is not None else local or "")
            if local is not None and not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
                raise FileNotFoundError(hdfs_path)
        except (FileNotFoundError, NotADirectoryError):
            raise RemoteError("FileNotFoundException",
                              f"File does not exist: {hdfs_path}") from None
        is_dir = child is not None or stat.S_ISDIR(st.st_mode)
        if child is not None:
            file_id = ROOT_INODE_ID + hdfs_path.rstrip("/").count("/")
            children, perm = 1, "755"
        else:
            file_id = st.st_ino
            children = len(os.listdir(local)) if is_dir and local else 0
            perm = format(st.st_mode & 0o777, "o")
        length = 0 if is_dir else self.recorded_length(st)
        return {
            "accessTime": 0 if is_dir else _ms(st.st_atime_ns),
            "blockSize": 0 if is_dir else BLOCK_SIZE,
            "childrenNum": children,
            "fileId": file_id,
            "group": self.group,
            "length": length,
            "modificationTime": _ms(st.st_mtime_ns),
            "owner": self.owner,
            "pathSuffix": suffix,
            "permission": perm,
            "replication": 0 if is_dir else self.replication,
            "storagePolicy": 0,
            "type": "DIRECTORY" if is_dir else "FILE",
        }

    def recorded_length(self, st: os.stat_result) -> int:
        """The NameNode's length of a file: its size, or for a file under construction
        the length its writer last reported."""
        recorded = self.leases.recorded_length(st.st_ino, st.st_size) if self.leases else None
        return st.st_size if recorded is None else recorded

    def list_status(self, hdfs_path: str) -> list[dict[str, Any]]:
        own = self.file_status(hdfs_path)
        if own["type"] == "FILE":
            return [own]  # LISTSTATUS on a file lists the file, with an empty pathSuffix
        child = self.synthetic_child(hdfs_path)
        for attempt in range(50, -1, -1):  # the folder at one moment, as the NameNode lists it
            names = [child] if child is not None else sorted(os.listdir(self.local_path(hdfs_path)))
            result = []
            for name in names:
                try:
                    result.append(self.file_status(posixpath.join(hdfs_path, name), name))
                except RemoteError:
                    if attempt:
                        break  # moved between the read and its stat: read the folder again
            else:
                return result
        raise AssertionError("unreachable")

    def content_summary(self, hdfs_path: str) -> dict[str, Any]:
        own = self.file_status(hdfs_path)
        dirs, files, length = 0, 0, 0
        if own["type"] == "FILE":
            files, length = 1, own["length"]
        else:
            local = self.local_path(hdfs_path) or self.root_dir
            extra = self.hbase_root.count("/") - hdfs_path.rstrip("/").count("/")
            dirs = 1 + (extra if self.synthetic_child(hdfs_path) is not None else 0)
            for folder, subdirs, names in os.walk(local):
                dirs += len(subdirs)
                for name in names:
                    try:
                        length += os.stat(os.path.join(folder, name)).st_size
                        files += 1
                    except FileNotFoundError:
                        continue
        return {"directoryCount": dirs, "fileCount": files, "length": length, "quota": -1,
                "spaceConsumed": length * self.replication, "spaceQuota": -1,
                "typeQuota": {}}


def _current_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "hbase"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed ACK
    webhdfs: WebHdfsServer  # set on the subclass built by WebHdfsServer.start

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("webhdfs %s: " + format, self.address_string(), *args)

    # --- dispatch -----------------------------------------------------------------------

    def do_GET(self) -> None:
        if self.webhdfs.latency:
            time.sleep(self.webhdfs.latency)
        try:
            hdfs_path, params = self._parse()
            op = params.get("op", "").upper()
            self.webhdfs.count(op)
            if op == "OPEN":
                self._open(hdfs_path, params)
            elif op in READ_OPS:
                self._send_json(200, self._read_op(op, hdfs_path, params))
            else:
                raise RemoteError(
                    "IllegalArgumentException",
                    f'Invalid value for webhdfs parameter "op": {op or "(none)"} is not '
                    f"supported by this read-only endpoint (GET ops: {', '.join(READ_OPS)})")
        except RemoteError as err:
            self._send_json(err.status, err.body())
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _refuse_write(self) -> None:
        self.close_connection = True  # the request body, if any, is not read
        err = RemoteError("AccessControlException",
                          f"Permission denied: {self.command} {urlsplit(self.path).path}: this "
                          "WebHDFS endpoint serves the HBase root read-only")
        self._send_json(err.status, err.body())

    do_PUT = do_POST = do_DELETE = _refuse_write

    def _parse(self) -> tuple[str, dict[str, str]]:
        parts = urlsplit(self.path)
        if not parts.path.startswith(PREFIX):
            raise RemoteError("FileNotFoundException", f"No WebHDFS resource at {parts.path}")
        hdfs_path = posixpath.normpath("/" + unquote(parts.path[len(PREFIX) :]).lstrip("/"))
        # Hadoop treats parameter names case-insensitively.
        params = {k.lower(): v for k, v in parse_qsl(parts.query, keep_blank_values=True)}
        return hdfs_path, params

    def _read_op(self, op: str, hdfs_path: str, params: dict[str, str]) -> dict[str, Any]:
        if op == "LISTSTATUS":
            return {"FileStatuses": {"FileStatus": self.webhdfs.list_status(hdfs_path)}}
        if op == "GETFILESTATUS":
            return {"FileStatus": self.webhdfs.file_status(hdfs_path)}
        if op == "GETCONTENTSUMMARY":
            return {"ContentSummary": self.webhdfs.content_summary(hdfs_path)}
        return {"Path": f"/user/{params.get('user.name') or self.webhdfs.owner}"}

    # --- OPEN ---------------------------------------------------------------------------

    def _open(self, hdfs_path: str, params: dict[str, str]) -> None:
        offset = _long_param(params, "offset", 0) or 0
        length = _long_param(params, "length", None)
        status = self.webhdfs.file_status(hdfs_path)
        if status["type"] != "FILE":
            raise RemoteError("FileNotFoundException", f"Path is not a file: {hdfs_path}")
        if "namenoderpcaddress" not in params:
            recorded = status["length"]
            if offset >= recorded > 0:
                raise RemoteError("IOException", f"Offset={offset} out of the range [0, "
                                  f"{recorded}); OPEN, path={hdfs_path}")
            self._redirect_to_datanode(hdfs_path, params)
            return
        if hdfs_path in self.webhdfs.missing_blocks:  # every replica's DataNode is down
            raise RemoteError("BlockMissingException", f"Could not obtain block: "
                              f"BP-1-127.0.0.1-1:blk_1073741825_1001 file={hdfs_path}")
        local = self.webhdfs.local_path(hdfs_path)
        try:
            handle = open(local or "", "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            raise RemoteError("FileNotFoundException",
                              f"File does not exist: {hdfs_path}") from None
        with handle:
            size = os.fstat(handle.fileno()).st_size
            if offset > size:
                raise RemoteError("EOFException", "Cannot seek after EOF")
            count = size - offset if length is None else min(length, size - offset)
            handle.seek(offset)
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(count))
            self.end_headers()
            while count > 0:
                chunk = handle.read(min(CHUNK, count))
                if not chunk:
                    break  # shrank meanwhile; the client sees a short body
                self.wfile.write(chunk)
                self.webhdfs.sent(len(chunk))
                count -= len(chunk)
        if count:
            self.close_connection = True

    def _redirect_to_datanode(self, hdfs_path: str, params: dict[str, str]) -> None:
        host, port = self.webhdfs.host, self.webhdfs.port
        query = {k: v for k, v in params.items() if k != "noredirect"}
        query["namenoderpcaddress"] = f"{host}:{port}"
        location = (f"http://{host}:{port}{PREFIX}{quote(hdfs_path, safe='/')}"
                    f"?{urlencode(query)}")
        if params.get("noredirect", "false").lower() == "true":
            self._send_json(200, {"Location": location})
            return
        self.send_response(307)
        self.send_header("Location", location)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _send_json(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(code, HTTPStatus(code).phrase)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _long_param(params: dict[str, str], name: str, default: int | None) -> int | None:
    raw = params.get(name)
    if raw is None or raw == "" or raw.lower() == "null":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise RemoteError("IllegalArgumentException",
                          f'Invalid value for webhdfs parameter "{name}": {raw!r} '
                          "is not a number") from None
    if value < 0:
        raise RemoteError("IllegalArgumentException",
                          f'Invalid value for webhdfs parameter "{name}": {value} < 0')
    return value
